"""The lanes of a vector expression, one scalar expression each.

A vector value of TVM's lowered text (``T.Ramp``, ``T.Broadcast``, a load
at a ``T.Ramp`` index, and arithmetic on them) means its lanes computed
side by side: lane ``k`` of ``T.Ramp(b, s, n)`` is ``b + s * k``, of
``T.Broadcast(v, n)`` it is ``v``, and of an operation the operation on the
operands' lane ``k``.  :func:`lane` writes that scalar expression out, so
the model can read a vector access as its lanes' accesses and the
executors can run a vector statement lane by lane.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import dtypes
from .deep import guarded
from .nodes import (
    And,
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    Compare,
    Expr,
    IntImm,
    Let,
    Not,
    Or,
    Ramp,
    Select,
    Var,
)


def lane_count(expr: Expr) -> int:
    """How many lanes ``expr`` has (1 for a scalar)."""
    return dtypes.lanes(expr.dtype)


@guarded
def lane(e: Expr, k: int, lanes_of: Mapping[Var, tuple[Var, ...]] | None = None) -> Expr:
    """The scalar expression of lane ``k`` of ``e`` (``e`` itself when it is a scalar).

    ``lanes_of`` gives the lane variables of vector variables (a vector let,
    written out lane by lane).
    """
    if "x" not in e.dtype:
        return e
    match e:
        case Ramp(base=base, stride=stride):
            if k == 0:
                return base
            if isinstance(stride, IntImm):
                step = IntImm(stride.value * k, base.dtype)
            else:
                step = stride * IntImm(k, stride.dtype)
            return base + step
        case Broadcast(value=value):
            return value
        case Var():
            if lanes_of is None or e not in lanes_of:
                raise ValueError(f"vector variable {e.name!r} has no lanes here")
            return lanes_of[e][k]
        case BufferLoad(buffer=buffer, indices=indices):
            return BufferLoad(buffer, tuple(lane(i, k, lanes_of) for i in indices),
                              view_access=lane_view_access(e.view_access, k, lanes_of))
        case BinaryOp() | Compare() | And() | Or():
            return type(e)(lane(e.a, k, lanes_of), lane(e.b, k, lanes_of))
        case Not(a=a):
            return Not(lane(a, k, lanes_of))
        case Select(condition=c, true_value=t, false_value=f, eager=eager):
            return Select(lane(c, k, lanes_of), lane(t, k, lanes_of), lane(f, k, lanes_of),
                          eager)
        case Cast(dtype=dtype, value=value):
            return Cast(dtypes.element(dtype), lane(value, k, lanes_of))
        case Call(op=op, args=args, dtype=dtype):
            return Call(op, tuple(lane(a, k, lanes_of) for a in args), dtypes.element(dtype))
        case Let(var=var, value=value, body=body):
            if "x" not in value.dtype:
                return Let(var, value, lane(body, k, lanes_of))
            own = Var(f"{var.name}_{k}", dtypes.element(var.dtype))
            inner = {**(lanes_of or {}), var: (own,) * lane_count(value)}
            return Let(own, lane(value, k, lanes_of), lane(body, k, inner))
    raise ValueError(f"no lane {k} of {type(e).__name__}")


def lanes(e: Expr, lanes_of: Mapping[Var, tuple[Var, ...]] | None = None) -> list[Expr]:
    """Every lane of ``e``, lane 0 first."""
    return [lane(e, k, lanes_of) for k in range(lane_count(e))]


def lane_view_access(through: tuple | None, k: int,
                     lanes_of: Mapping[Var, tuple[Var, ...]] | None = None) -> tuple | None:
    """Lane ``k`` of an access's ``view_access`` (the view and its indices as written,
    :mod:`polypad.semantics.lower_views`), or None."""
    if through is None:
        return None
    return through[0], tuple(lane(i, k, lanes_of) for i in through[1])
