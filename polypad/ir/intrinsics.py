"""The intrinsic calls the IR knows, and builders for them.

``assume(c)`` states a fact; ``undef(dtype)`` is a valid but arbitrary value;
``likely(c)`` marks the probable branch.  The math functions take and return
floats (``abs`` keeps any numeric dtype); ``nearbyint`` rounds to the nearest
integer, halves to even (TVM's ``T.round`` and TOPI's ``round``), ``erf`` is the
error function (TOPI's GELU).  The bitwise functions
(:data:`BITWISE`) take and return integers of one dtype, with numpy's
meaning: two's complement, a left shift wraps at the width, and a shift by
an amount outside ``[0, bits)`` gives 0 (or, shifting right, the sign).
"""

from __future__ import annotations

from . import dtypes
from .nodes import Call, Expr
from .operators import as_expr, cast

MATH_UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "sigmoid",
              "rsqrt", "erf", "nearbyint")
MATH_BINARY = ("pow",)
NUMERIC_UNARY = ("abs",)
#: Tests of a float that give a bool: ``isnan`` (TOPI's ``isnan``).
FLOAT_PREDICATES = ("isnan",)
SPECIAL = ("assume", "undef", "likely")
ALL = SPECIAL + MATH_UNARY + MATH_BINARY + NUMERIC_UNARY + FLOAT_PREDICATES
BITWISE_BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right")
BITWISE = BITWISE_BINARY + ("bitwise_not",)


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
    if op in FLOAT_PREDICATES:
        (x,) = args
        x = as_expr(x, "float32")
        if not dtypes.is_float(dtypes.element(x.dtype)):
            raise TypeError(f"T.{op} takes a float, not {x.dtype}")
        return Call(op, (x,), "bool")
    exprs = [as_expr(a, "float32") for a in args]
    expected = 2 if op in MATH_BINARY else 1
    if op not in MATH_UNARY + MATH_BINARY or len(exprs) != expected:
        raise TypeError(f"unknown math intrinsic {op}/{len(exprs)}")
    dtype = next((e.dtype for e in exprs if dtypes.is_float(e.dtype)), "float32")
    return Call(op, tuple(cast(dtype, e) for e in exprs), dtype)


def bitwise(op: str, *args) -> Call:
    """A bitwise intrinsic such as ``bitwise("shift_left", x, 2)``: integers of one dtype."""
    from .operators import promote

    expected = 1 if op == "bitwise_not" else 2
    if op not in BITWISE or len(args) != expected:
        raise TypeError(f"unknown bitwise intrinsic {op}/{len(args)}")
    exprs = [as_expr(args[0], "int32")] if expected == 1 else list(promote(*args))
    for e in exprs:
        if not dtypes.is_int(e.dtype):
            raise TypeError(f"T.{op} takes integers, not {e.dtype}")
    return Call(op, tuple(exprs), exprs[0].dtype)


def is_call(expr: Expr, op: str) -> bool:
    """True when ``expr`` is a call of intrinsic ``op``."""
    return isinstance(expr, Call) and expr.op == op
