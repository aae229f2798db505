"""Value ranges of integer expressions, and where fixed-width arithmetic may wrap.

polypad's integers have numpy's semantics: an ``int32`` ``+``, ``-``, ``*``
or ``//`` whose exact result leaves ``[-2**31, 2**31)`` wraps around, in the
reference executor and in the Numba kernel alike.  The deciders reason over
mathematical integers, so every place that turns IR into ISL or Z3 must
either know that an operation cannot wrap or model the wrap-around.

:func:`value_range` is the cheap first step: interval arithmetic over the
expression, with the ranges of variables given by the caller (loop counters
from their loops) or else by their dtype.  :func:`may_wrap` says whether an
operation's exact result can leave its dtype on those ranges; when it cannot,
the exact model is the executed one.

Plain interval arithmetic on the IR, no isl or Z3: the model builds on it,
and the script reads loop ranges with it (``derive_header``).

>>> value_range(i * 4 + 3, {i: (0, 9)})      # (3, 39)
>>> may_wrap(A[i] * 65536)                    # True: A[i] may be 70000
"""

from __future__ import annotations

from collections.abc import Mapping

from . import dtypes
from . import nodes as n
from .deep import guarded
from .visitor import children

Range = tuple[int, int]


def dtype_range(dtype: str) -> Range:
    """The smallest and largest value of integer ``dtype`` (``bool`` is 0..1)."""
    if dtypes.is_bool(dtype):
        return 0, 1
    width = dtypes.bits(dtype)
    if dtype.startswith("uint"):
        return 0, 2**width - 1
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


#: The largest finite value of each float dtype (IEEE binary16, 32, 64).
FLOAT_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38,
             "float64": 1.7976931348623157e308}


def dtype_limits(dtype: str) -> tuple[int | float, int | float]:
    """The smallest and largest finite value of scalar ``dtype``, as TVM's
    ``min_value`` and ``max_value`` define them: for a float the most negative
    finite value (``-FLOAT_MAX``), not ``-inf``; for ``bool``, 0 and 1."""
    if dtypes.is_float(dtype):
        return -FLOAT_MAX[dtype], FLOAT_MAX[dtype]
    return dtype_range(dtype)


def fits(value: int, dtype: str) -> bool:
    """Whether ``value`` is a value of integer ``dtype``."""
    lo, hi = dtype_range(dtype)
    return lo <= value <= hi


def wrap(value: int, dtype: str) -> int:
    """``value`` reduced into ``dtype`` the way numpy's fixed-width integers wrap."""
    lo, _ = dtype_range(dtype)
    modulus = 2 ** dtypes.bits(dtype)
    return (value - lo) % modulus + lo


class Ranges:
    """Interval arithmetic over integer expressions, memoized for one set of variable ranges.

    ``bounds`` maps variables to an inclusive ``(lo, hi)``; any other integer
    variable, and every buffer load, ranges over its whole dtype.
    """

    def __init__(self, bounds: Mapping[n.Var, Range] | None = None) -> None:
        self.bounds = dict(bounds or {})
        self._memo: dict[int, tuple[n.Expr, Range]] = {}

    @guarded
    def of(self, e: n.Expr) -> Range | None:
        """The range of integer expression ``e``, or ``None`` when it is not an integer."""
        if not dtypes.is_int(e.dtype):
            return None
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        exact = self.exact(e)
        lo, hi = dtype_range(e.dtype)
        result = exact if exact is not None and lo <= exact[0] and exact[1] <= hi else (lo, hi)
        self._memo[id(e)] = (e, result)
        return result

    def may_wrap(self, e: n.Expr) -> bool:
        """Whether the exact result of the operation at the top of ``e`` may leave its dtype."""
        if not dtypes.is_int(e.dtype) or not isinstance(e, (n.BinaryOp, n.Cast)):
            return False
        exact = self.exact(e)
        lo, hi = dtype_range(e.dtype)
        return exact is None or exact[0] < lo or exact[1] > hi

    def exact(self, e: n.Expr) -> Range | None:
        """The range of ``e``'s top operation computed exactly from its operands' ranges."""
        match e:
            case n.IntImm(value=v):
                return v, v
            case n.Var():
                return self.bounds.get(e, dtype_range(e.dtype))
            case n.Add(a=a, b=b):
                ra, rb = self.of(a), self.of(b)
                return ra[0] + rb[0], ra[1] + rb[1]
            case n.Sub(a=a, b=b):
                ra, rb = self.of(a), self.of(b)
                return ra[0] - rb[1], ra[1] - rb[0]
            case n.Mul(a=a, b=b):
                ra, rb = self.of(a), self.of(b)
                corners = [x * y for x in ra for y in rb]
                return min(corners), max(corners)
            case n.FloorDiv(a=a, b=b):
                return _floordiv(self.of(a), self.of(b))
            case n.FloorMod(a=a, b=b):
                return _floormod(self.of(b))
            case n.Min(a=a, b=b):
                ra, rb = self.of(a), self.of(b)
                return min(ra[0], rb[0]), min(ra[1], rb[1])
            case n.Max(a=a, b=b):
                ra, rb = self.of(a), self.of(b)
                return max(ra[0], rb[0]), max(ra[1], rb[1])
            case n.Select(true_value=t, false_value=f):
                rt, rf = self.of(t), self.of(f)
                return min(rt[0], rf[0]), max(rt[1], rf[1])
            case n.Cast(value=v) if dtypes.is_int(v.dtype) or dtypes.is_bool(v.dtype):
                return self.of(v) if dtypes.is_int(v.dtype) else (0, 1)
            case n.Let(var=var, value=value, body=body):
                inner = Ranges({**self.bounds, var: self.of(value) or dtype_range(var.dtype)})
                return inner.of(body)
        return None  # a load, a call, a float cast: anything of the dtype


def _floordiv(ra: Range, rb: Range) -> Range:
    if rb[0] > 0 or rb[1] < 0:
        corners = [x // y for x in ra for y in rb]
        return min(corners), max(corners)
    # The divisor may be 0 (numpy gives 0) or +-1: bounded by the dividend's size.
    m = max(abs(ra[0]), abs(ra[1]))
    return -m, m


def _floormod(rb: Range) -> Range:
    lo = min(rb[0] + 1, 0)
    hi = max(rb[1] - 1, 0)
    return lo, hi


def value_range(e: n.Expr, bounds: Mapping[n.Var, Range] | None = None) -> Range | None:
    """The inclusive range of integer expression ``e``'s executed values (``None``: not int)."""
    return Ranges(bounds).of(e)


def may_wrap(e: n.Expr, bounds: Mapping[n.Var, Range] | None = None) -> bool:
    """Whether the operation at the top of ``e`` may wrap around on these ranges."""
    return Ranges(bounds).may_wrap(e)


def wrapping_operations(e: n.Expr, bounds: Mapping[n.Var, Range] | None = None, *,
                        modular_root: bool = False) -> list[n.Expr]:
    """The sub-expressions of ``e`` whose operation may wrap, outermost first.

    A let-bound variable takes its value's range.  With ``modular_root``,
    a wrap that only feeds ``+``, ``-`` and ``*`` up to the root is not
    listed: those operations are a ring homomorphism modulo ``2**width``, so
    the executed root equals the exact one whenever the exact root lies in
    the dtype's range.  A buffer index is such a root, once a bounds check
    has shown its exact value is inside the buffer.
    """
    ranges = Ranges(bounds)
    out: list[n.Expr] = []
    stack: list[tuple[n.Expr, bool]] = [(e, modular_root)]
    while stack:
        node, modular = stack.pop()
        if isinstance(node, n.Let):
            ranges.bounds.setdefault(node.var, ranges.of(node.value) or dtype_range(node.var.dtype))
        ring = isinstance(node, (n.Add, n.Sub, n.Mul)) and dtypes.is_int(node.dtype)
        if not (modular and ring) and ranges.may_wrap(node):
            out.append(node)
        for child in reversed(list(children(node))):
            if isinstance(child, n.Expr):
                stack.append((child, modular and ring and child.dtype == node.dtype))
    return out
