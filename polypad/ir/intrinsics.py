"""The intrinsic calls the IR knows, and builders for them.

``assume(c)`` states a fact; ``undef(dtype)`` is a valid but arbitrary value;
``likely(c)`` marks the probable branch.  The math functions take and return
floats (``abs`` keeps any numeric dtype).
"""

from __future__ import annotations

from . import dtypes
from .nodes import Call, Expr
from .operators import as_expr, cast

MATH_UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "sigmoid")
MATH_BINARY = ("pow",)
NUMERIC_UNARY = ("abs",)
SPECIAL = ("assume", "undef", "likely")
ALL = SPECIAL + MATH_UNARY + MATH_BINARY + NUMERIC_UNARY


def assume(cond) -> Call:
    """``T.assume(cond)``: ``cond`` holds here; never checked at run time."""
    return Call("assume", (as_expr(cond),), "bool")


def undef(dtype: str = "float32") -> Call:
    """``T.undef()``: a valid, arbitrary value of ``dtype``."""
    return Call("undef", (), dtype)


def likely(cond) -> Call:
    """``T.likely(cond)``: ``cond``, marked as the probable outcome."""
    return Call("likely", (as_expr(cond),), "bool")


def math(op: str, *args) -> Call:
    """A math intrinsic such as ``math("exp", x)``."""
    if op in NUMERIC_UNARY:
        (x,) = args
        x = as_expr(x, "float32")
        return Call(op, (x,), x.dtype)
    exprs = [as_expr(a, "float32") for a in args]
    expected = 2 if op in MATH_BINARY else 1
    if op not in MATH_UNARY + MATH_BINARY or len(exprs) != expected:
        raise TypeError(f"unknown math intrinsic {op}/{len(exprs)}")
    dtype = next((e.dtype for e in exprs if dtypes.is_float(e.dtype)), "float32")
    return Call(op, tuple(cast(dtype, e) for e in exprs), dtype)


def is_call(expr: Expr, op: str) -> bool:
    """True when ``expr`` is a call of intrinsic ``op``."""
    return isinstance(expr, Call) and expr.op == op
