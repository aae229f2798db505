"""Conditions over quasi-affine operands as ISL sets.

:func:`to_set` turns a boolean expression — comparisons of quasi-affine
integer expressions combined with ``and``, ``or``, ``not``, constants,
``T.likely`` and ``T.if_then_else`` — into the :class:`isl.Set` of points
of the space where it holds.  Anything else (a comparison of floats, a
buffer load, a boolean parameter) raises :class:`NotAffineError`.

>>> to_set(4 * io + ii < 14, [io, ii])   # { [io, ii] : ii <= 13 - 4io }
"""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl

from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.deep import guarded

from .affine import AffineSpace, _Converter, as_space, not_affine

_COMPARE = {
    n.Eq: "eq_set", n.Ne: "ne_set", n.Lt: "lt_set", n.Le: "le_set", n.Gt: "gt_set",
    n.Ge: "ge_set",
}


def to_set(cond: n.Expr, space: AffineSpace | Sequence[n.Var] = ()) -> isl.Set:
    """The set of points of ``space`` where the boolean ``cond`` holds.

    ``space`` is an :class:`AffineSpace` or the variables to use as set
    dims; other variables become parameters.
    """
    return condition_set(cond, as_space(space))


@guarded
def condition_set(cond: n.Expr, space: AffineSpace) -> isl.Set:
    """:func:`to_set` on an :class:`AffineSpace` (the worker both modules share)."""
    if isinstance(cond, n.Var) and cond in space.lets:
        return condition_set(space.lets[cond], space)
    match cond:
        case n.BoolImm(value=True):
            return space.universe
        case n.BoolImm(value=False):
            return isl.Set.empty(space.space)
        case n.And(a=a, b=b):
            return condition_set(a, space).intersect(condition_set(b, space))
        case n.Or(a=a, b=b):
            return condition_set(a, space).union(condition_set(b, space))
        case n.Not(a=a):
            return condition_set(a, space).complement()
        case n.Compare(a=a, b=b) if dtypes.is_bool(a.dtype) and isinstance(cond, (n.Eq, n.Ne)):
            sa, sb = condition_set(a, space), condition_set(b, space)
            same = sa.intersect(sb).union(sa.complement().intersect(sb.complement()))
            return same if isinstance(cond, n.Eq) else same.complement()
        case n.Compare(a=a, b=b) if (bound := _dim_bound(cond, space)) is not None:
            return bound
        case n.Compare(a=a, b=b):
            conv = _Converter(space)
            pa, pb = conv.pw_aff(a), conv.pw_aff(b)
            return getattr(pa, _COMPARE[type(cond)])(pb)
        case n.Call(op="likely", args=(arg,)):
            return condition_set(arg, space)
        case n.Select(condition=c, true_value=t, false_value=f):
            where = condition_set(c, space)
            then = where.intersect(condition_set(t, space))
            return then.union(where.complement().intersect(condition_set(f, space)))
        case n.Cast(value=v) if dtypes.is_int(v.dtype):
            return _Converter(space).pw_aff(v).non_zero_set()
        case n.Let(var=var, value=value, body=body):
            return condition_set(body, space.with_lets({var: value}))
    if not dtypes.is_bool(cond.dtype):
        raise not_affine(cond, f"it has dtype {cond.dtype}, not bool")
    raise not_affine(cond, f"{type(cond).__name__} is not an affine condition")


# `i < 8` as `var <op> constant`: (lower bound offset, upper bound offset), or a fix.
_BOUND_OPS = {n.Ge: (0, None), n.Gt: (1, None), n.Le: (None, 0), n.Lt: (None, -1),
              n.Eq: (0, 0)}
_MIRRORED = {n.Ge: n.Le, n.Gt: n.Lt, n.Le: n.Ge, n.Lt: n.Gt, n.Eq: n.Eq}


def _dim_bound(cond: n.Compare, space: AffineSpace) -> isl.Set | None:
    """``cond`` when it bounds one integer set dim by a constant (``i < 8``, ``0 <= i``),
    built as a bound of the universe: the most common condition, at a tenth of the cost
    of comparing two affine functions."""
    kind, a, b = type(cond), cond.a, cond.b
    if isinstance(a, n.IntImm) and isinstance(b, n.Var):
        kind, a, b = _MIRRORED.get(kind), b, a
    if kind not in _BOUND_OPS or not (isinstance(a, n.Var) and isinstance(b, n.IntImm)):
        return None
    pos = space.position(a)
    if pos is None or a in space.lets or not dtypes.is_int(a.dtype):
        return None
    low, high = _BOUND_OPS[kind]
    out = space.universe
    if low is not None:
        out = out.lower_bound_val(isl.dim_type.set, pos, space.val(b.value + low))
    if high is not None:
        out = out.upper_bound_val(isl.dim_type.set, pos, space.val(b.value + high))
    return out
