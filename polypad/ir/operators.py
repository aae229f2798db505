"""Building expressions: constants, dtype promotion and Python operators.

The methods of ``ExprOps`` are put on :class:`polypad.ir.nodes.Expr` (and
``A[i, j]`` on :class:`~polypad.ir.nodes.Buffer`) when this module is
imported, so that ``lambda i: [i // 4, i % 4]`` and ``2.0 * A[i]`` build
IR.  The grammar imports nothing above it; the builders need the grammar,
so the operators go onto its classes from here, and
``polypad/ir/__init__.py`` imports this module before anything can make an
expression.

Python numbers meeting an expression take that expression's dtype; two
expressions of different dtypes are promoted (int -> float, narrow -> wide)
with ``Cast``.  A scalar meeting a vector is broadcast to its lanes
(``T.Broadcast``), as TVM does.
"""

from __future__ import annotations

from . import dtypes
from . import nodes as n
from .deep_worker import guarded


def const(value, dtype: str | None = None):
    """A constant node for a Python ``bool``, ``int`` or ``float`` (broadcast for a
    vector dtype)."""
    if dtype is not None and dtypes.lanes(dtype) > 1:
        return n.Broadcast(const(value, dtypes.element(dtype)), dtypes.lanes(dtype))
    if isinstance(value, bool):
        return n.BoolImm(value)
    if dtype is None:
        dtype = "int32" if isinstance(value, int) else "float32"
    if dtypes.is_bool(dtype):
        return n.BoolImm(bool(value))
    if dtypes.is_float(dtype):
        return n.FloatImm(float(value), dtype)
    if isinstance(value, float) and not value.is_integer():
        raise TypeError(f"cannot use the float {value!r} as an {dtype} constant")
    return n.IntImm(int(value), dtype)


def as_expr(value, dtype: str | None = None):
    """``value`` as an expression; Python numbers become constants of ``dtype``."""
    if isinstance(value, n.Expr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value, dtype)
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return const(value.item(), dtype)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise TypeError(f"cannot use {value!r} ({type(value).__name__}) as a polypad expression")


def promote(a, b):
    """Bring two operands (expressions or Python numbers) to one dtype."""
    a_is_expr, b_is_expr = isinstance(a, n.Expr), isinstance(b, n.Expr)
    if a_is_expr and not b_is_expr:
        return a, _const_like(b, a.dtype)
    if b_is_expr and not a_is_expr:
        return _const_like(a, b.dtype), b
    if not a_is_expr:
        a, b = as_expr(a), as_expr(b)
    if a.dtype == b.dtype:
        return a, b
    la, lb = dtypes.lanes(a.dtype), dtypes.lanes(b.dtype)
    if la != lb and 1 not in (la, lb):
        raise TypeError(f"operands of {la} and {lb} lanes: {a.dtype}, {b.dtype}")
    target = dtypes.wider(dtypes.element(a.dtype), dtypes.element(b.dtype))
    lanes = max(la, lb)
    return _widen(a, target, lanes), _widen(b, target, lanes)


def _widen(x, element: str, lanes: int):
    """``x`` cast to ``element`` per lane and broadcast to ``lanes``."""
    if dtypes.lanes(x.dtype) == 1:
        x = cast(element, x)
        return x if lanes == 1 else n.Broadcast(x, lanes)
    return cast(dtypes.with_lanes(element, lanes), x)


def _const_like(value, dtype: str):
    if isinstance(value, float) and dtypes.is_int(dtype) and not value.is_integer():
        # ``i + 0.5``: the float wins, the integer expression is cast.
        return n.FloatImm(value, "float32")
    return as_expr(value, dtype)


def cast(dtype: str, value):
    """``value`` converted to ``dtype`` (no node when it already has it)."""
    value = as_expr(value, dtype)
    if value.dtype == dtype:
        return value
    if isinstance(value, (n.IntImm, n.FloatImm, n.BoolImm)) and dtypes.lanes(dtype) == 1:
        return const(value.value, dtype)
    return n.Cast(dtype, value)


def _arith(cls_name: str, a, b):
    a, b = promote(a, b)
    if a.dtype != b.dtype:  # a float constant met an int expression
        a, b = promote(a, b)
    if dtypes.is_bool(a.dtype):
        raise TypeError(f"{cls_name} is not defined on bool operands")
    return getattr(n, cls_name)(a, b)


def _compare(cls_name: str, a, b):
    a, b = promote(a, b)
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    return getattr(n, cls_name)(a, b)


def add(a, b):
    return _arith("Add", a, b)


def sub(a, b):
    return _arith("Sub", a, b)


def mul(a, b):
    return _arith("Mul", a, b)


def truediv(a, b):
    """True division; integer operands are promoted to float32."""
    a, b = promote(a, b)
    if dtypes.is_int(a.dtype):
        a, b = cast("float32", a), cast("float32", b)
    return n.Div(a, b)


def floordiv(a, b):
    return _arith("FloorDiv", a, b)


def floormod(a, b):
    return _arith("FloorMod", a, b)


def min_(a, b):
    return _arith("Min", a, b)


def max_(a, b):
    return _arith("Max", a, b)


def eq(a, b):
    return _compare("Eq", a, b)


def ne(a, b):
    return _compare("Ne", a, b)


def lt(a, b):
    return _compare("Lt", a, b)


def le(a, b):
    return _compare("Le", a, b)


def gt(a, b):
    return _compare("Gt", a, b)


def ge(a, b):
    return _compare("Ge", a, b)


def logical_and(*conds):
    """Left-nested ``And`` of one or more conditions."""
    out = as_expr(conds[0])
    for c in conds[1:]:
        out = n.And(out, as_expr(c))
    return out


def logical_or(*conds):
    """Left-nested ``Or`` of one or more conditions."""
    out = as_expr(conds[0])
    for c in conds[1:]:
        out = n.Or(out, as_expr(c))
    return out


def logical_not(cond):
    return n.Not(as_expr(cond))


class ExprOps:
    """Python operators that build IR.  ``==`` is deliberately not among them.

    Not a base class: :func:`_install` puts these methods on ``Expr``.
    """

    __slots__ = ()

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __truediv__(self, other):
        return truediv(self, other)

    def __rtruediv__(self, other):
        return truediv(other, self)

    def __floordiv__(self, other):
        return floordiv(self, other)

    def __rfloordiv__(self, other):
        return floordiv(other, self)

    def __mod__(self, other):
        return floormod(self, other)

    def __rmod__(self, other):
        return floormod(other, self)

    def __neg__(self):
        return sub(const(0, self.dtype), self)

    def __lt__(self, other):
        return lt(self, other)

    def __le__(self, other):
        return le(self, other)

    def __gt__(self, other):
        return gt(self, other)

    def __ge__(self, other):
        return ge(self, other)

    def equal(self, other):
        """Build ``self == other`` (Python's ``==`` is exact node equality)."""
        return eq(self, other)

    def not_equal(self, other):
        """Build ``self != other``."""
        return ne(self, other)


@guarded
def negate(cond):
    """``not cond`` with the negation pushed into comparisons (De Morgan).

    >>> negate(i < 4)          # i >= 4
    """
    flipped = {n.Lt: n.Ge, n.Le: n.Gt, n.Gt: n.Le, n.Ge: n.Lt, n.Eq: n.Ne, n.Ne: n.Eq}
    if type(cond) in flipped:
        return flipped[type(cond)](cond.a, cond.b)
    if isinstance(cond, n.And):
        return n.Or(negate(cond.a), negate(cond.b))
    if isinstance(cond, n.Or):
        return n.And(negate(cond.a), negate(cond.b))
    if isinstance(cond, n.Not):
        return cond.a
    if isinstance(cond, n.BoolImm):
        return n.BoolImm(not cond.value)
    return n.Not(cond)


def _load(buffer, indices):
    """``A[i, j]``: the load of ``buffer`` at ``indices`` (Python ints become int32)."""
    if not isinstance(indices, tuple):
        indices = (indices,)
    return n.BufferLoad(buffer, tuple(as_expr(i, "int32") for i in indices))


def _install() -> None:
    """Give the grammar's expressions Python's operators and its buffers ``[]``."""
    for name, method in vars(ExprOps).items():
        if callable(method):
            setattr(n.Expr, name, method)
    n.Buffer.__getitem__ = _load


_install()
