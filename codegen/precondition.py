"""The bounds precondition, checked once per call before anything runs.

``codegen.build`` builds a function that stays inside its buffers for some
parameter values only (:func:`analyses.bounds_precondition`, e.g. ``n < 29``)
and checks the values of each call against that condition: either the
kernel's call wrapper tests it (:meth:`CallCheck.check`), before calling the
kernel, or a target's compiled code tests it itself, once, before its loops
(the Numba kernel in its first lines, :mod:`codegen.numba.checks`), and the
call wrapper turns what the kernel raised into the same
:class:`~polypad.errors.OutOfBoundsError` (:meth:`CallCheck.error`).  The
reference executor's condition is always tested by the wrapper.

The condition is isl's, over exact integers, so it is printed without the
wrap-around of the IR's fixed-width arithmetic (:func:`exact_source`, Python
syntax).  A compiled kernel computes it on the arguments as 64-bit integers,
which is exact when interval arithmetic shows that no intermediate value
leaves ``int64`` (:attr:`CallCheck.fits_int64`).  When one might (a large
coefficient on an ``int64`` parameter, or a ``uint64`` parameter, which
Numba would mix into floats), the wrapper tests it before calling the kernel
instead, in Python's unbounded integers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from polypad.errors import BuildError, OutOfBoundsError
from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.show import show
from polypad.model.ranges import Range, dtype_range

_INT64 = dtype_range("int64")
_BINARY = {ir.Add: "+", ir.Sub: "-", ir.Mul: "*", ir.FloorDiv: "//", ir.FloorMod: "%",
           ir.Eq: "==", ir.Ne: "!=", ir.Lt: "<", ir.Le: "<=", ir.Gt: ">", ir.Ge: ">=",
           ir.And: "and", ir.Or: "or"}


class CallCheck:
    """The precondition of one built function, and how a call is checked against it.

    ``found`` is the :class:`analyses.BoundsPrecondition` of the function as
    written, ``func`` the lowered function that runs (same parameters).
    """

    def __init__(self, found, func: ir.PrimFunc) -> None:
        self.found = found
        self.func = func
        self.condition: ir.Expr = found.condition
        self.variables: list[ir.Var] = found.variables
        self._positions = [func.params.index(v) for v in self.variables]
        names = {v: f"_v{k}" for k, v in enumerate(self.variables)}
        text = exact_source(self.condition, names.__getitem__)
        self._test: Callable[..., bool] = eval(  # our own printed source
            f"lambda {', '.join(names.values())}: {text}", {"min": min, "max": max})
        #: Whether 64-bit integer arithmetic computes the condition exactly (see the
        #: module docstring): a compiled kernel may then test it itself.
        self.fits_int64 = all(dtypes.is_int(v.dtype) and not v.dtype.startswith("uint")
                             for v in self.variables) and _fits_int64(self.condition)

    def check(self, values: Sequence) -> None:
        """Raise :class:`OutOfBoundsError` unless the arguments ``values`` (checked,
        in parameter order) satisfy the condition."""
        scalars = [values[k] for k in self._positions]
        if not self._test(*scalars):
            raise self.error(scalars)

    def error(self, scalars: Sequence[int]) -> OutOfBoundsError:
        """The error of a call with these values of :attr:`variables`::

            f(n=29): 'f' stays inside its buffers only where n < 29, and here the load
            of A[i // 4] at f.py:5 is outside the shape (7,) of A; instances: S0(i=28);
            element: A[7]; params: n=29.  Nothing was run.  If no caller passes such
            values, state it in the function: T.assume(n < 29)
        """
        values = dict(zip(self.variables, (int(v) for v in scalars), strict=True))
        passed = ", ".join(f"{v.name}={value}" for v, value in values.items())
        condition = show(self.condition)
        evidence = self.found.violation(values)
        why = f", and here the {evidence}" if evidence is not None else ""
        return OutOfBoundsError(
            f"{self.func.name}({passed}): {self.func.name!r} stays inside its buffers only "
            f"where {condition}{why}.  Nothing was run.  If no caller passes such values, "
            f"state it in the function: T.assume({condition})",
            evidence=evidence, condition=self.condition,
            values={v.name: x for v, x in values.items()})


def exact_source(e: ir.Expr, name: Callable[[ir.Var], str]) -> str:
    """``e`` as Python source over unbounded integers: every operation exact, ``//``
    and ``%`` floor operations as in the IR; ``name`` spells each variable."""
    match e:
        case ir.BoolImm(value=v):
            return str(bool(v))
        case ir.IntImm(value=v):
            return f"({v})" if v < 0 else str(v)
        case ir.Var():
            return name(e)
        case ir.Not(a=a):
            return f"(not {exact_source(a, name)})"
        case ir.Min(a=a, b=b) | ir.Max(a=a, b=b):
            call = "min" if isinstance(e, ir.Min) else "max"
            return f"{call}({exact_source(a, name)}, {exact_source(b, name)})"
        case ir.Select(condition=c, true_value=t, false_value=f):
            return (f"({exact_source(t, name)} if {exact_source(c, name)} "
                    f"else {exact_source(f, name)})")
        case ir.Cast(value=v) if dtypes.is_int(e.dtype) and dtypes.is_int(v.dtype):
            return exact_source(v, name)  # isl's conditions never narrow
    op = _BINARY.get(type(e))
    if op is None:
        raise BuildError(f"the bounds precondition {show(e)} holds a {type(e).__name__}, "
                         "which it cannot check")
    return f"({exact_source(e.a, name)} {op} {exact_source(e.b, name)})"


def _fits_int64(e: ir.Expr) -> bool:
    """Whether every integer value in ``e`` stays inside ``int64`` for all values of its
    variables' dtypes (interval arithmetic over exact integers)."""
    ok = True

    def span(x: ir.Expr) -> Range | None:
        nonlocal ok
        match x:
            case ir.IntImm(value=v):
                out = (v, v)
            case ir.Var():
                out = dtype_range(x.dtype) if dtypes.is_int(x.dtype) else None
            case ir.Add(a=a, b=b) | ir.Sub(a=a, b=b) | ir.Mul(a=a, b=b) | ir.Min(a=a, b=b) | \
                    ir.Max(a=a, b=b) | ir.FloorDiv(a=a, b=b) | ir.FloorMod(a=a, b=b):
                ra, rb = span(a), span(b)
                out = None if ra is None or rb is None else _combine(x, ra, rb)
            case ir.Select(true_value=t, false_value=f):
                span(x.condition)
                rt, rf = span(t), span(f)
                out = None if rt is None or rf is None else (min(rt[0], rf[0]),
                                                             max(rt[1], rf[1]))
            case ir.Cast(value=v):
                out = span(v)
            case _:
                for child in (getattr(x, "a", None), getattr(x, "b", None)):
                    if child is not None:
                        span(child)
                return None  # a boolean
        if out is None or out[0] < _INT64[0] or out[1] > _INT64[1]:
            ok = False
        return out

    span(e)
    return ok


def _combine(x: ir.Expr, ra: Range, rb: Range) -> Range | None:
    match x:
        case ir.Add():
            return ra[0] + rb[0], ra[1] + rb[1]
        case ir.Sub():
            return ra[0] - rb[1], ra[1] - rb[0]
        case ir.Mul():
            corners = [p * q for p in ra for q in rb]
            return min(corners), max(corners)
        case ir.Min():
            return min(ra[0], rb[0]), min(ra[1], rb[1])
        case ir.Max():
            return max(ra[0], rb[0]), max(ra[1], rb[1])
    if rb[0] <= 0 <= rb[1]:
        return None  # a divisor that may be 0: isl's conditions divide by constants
    if isinstance(x, ir.FloorDiv):
        corners = [p // q for p in ra for q in rb]
        return min(corners), max(corners)
    return min(rb[0] + 1, 0), max(rb[1] - 1, 0)
