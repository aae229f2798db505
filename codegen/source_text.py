"""What the targets that emit Python source (``numba``, ``cuda``) write alike.

Python's precedence levels, the spelling of the IR's binary operators, and
constants with numpy's types: a float32 constant is ``np.float32(2.0)``,
since a bare ``2.0`` is a float64 in Numba and would promote the whole
expression; an integer constant is bare except for the narrow and unsigned
types (a ``uint64`` meeting a bare ``int`` becomes ``float64`` in Numba).
"""

from __future__ import annotations

import math

from polypad.errors import BuildError
from polypad.ir import dtypes
from polypad.ir import nodes as ir

# Python precedence levels, loosest first.
LAMBDA, COND, OR, AND, NOT, COMPARE, ADD, MUL, UNARY, ATOM = range(10)

#: Each binary node's operator and the precedence of the expression it makes.
BINARY = {
    ir.Add: ("+", ADD), ir.Sub: ("-", ADD), ir.Mul: ("*", MUL), ir.Div: ("/", MUL),
    ir.FloorDiv: ("//", MUL), ir.FloorMod: ("%", MUL),
    ir.Eq: ("==", COMPARE), ir.Ne: ("!=", COMPARE), ir.Lt: ("<", COMPARE),
    ir.Le: ("<=", COMPARE), ir.Gt: (">", COMPARE), ir.Ge: (">=", COMPARE),
    ir.And: ("and", AND), ir.Or: ("or", OR),
}


def numpy_type(dtype: str, target: str) -> str:
    """``np.float32`` for ``"float32"``: the constructor that casts to ``dtype``
    (``target`` names the target in the error for a dtype it does not support)."""
    if dtype == "float16":
        raise BuildError(f"the {target} target does not support float16")
    return "np." + dtypes.numpy_name(dtype)


def constant(value, dtype: str, target: str, *, module: str = "np") -> tuple[str, int]:
    """Source text and precedence of a constant of ``dtype``; NaN and the
    infinities are ``module``'s (``np.nan``, or ``math.nan`` in a GPU kernel)."""
    if dtypes.is_bool(dtype):
        return ("True" if value else "False"), ATOM
    if dtypes.is_float(dtype):
        value = float(value)
        if math.isnan(value):
            text = f"{module}.nan"
        elif math.isinf(value):
            text = f"{module}.inf" if value > 0 else f"-{module}.inf"
        else:
            text = repr(value)
        if dtype == "float64":
            return text, (UNARY if text.startswith("-") else ATOM)
        return f"{numpy_type(dtype, target)}({text})", ATOM
    if dtype in ("int32", "int64"):
        return str(int(value)), (UNARY if value < 0 else ATOM)
    return f"{numpy_type(dtype, target)}({int(value)})", ATOM


def wrapping_int64(a: str, op: str, b: str, *, numpy_operands: bool = False) -> str:
    """The text of an int64 ``a op b`` (``+ - *``) that may wrap, computed in uint64:
    Numba's signed arithmetic is LLVM's ``nsw``, an overflow undefined (LLVM folds
    ``min(max(5 + m, 0), 15)`` to 15 at ``m = 2**63 - 1``), where unsigned wraps.
    ``numpy_operands`` makes each operand an ``np.int64`` first, a no-op in a kernel,
    for the cuda simulator, where a scalar argument is a Python int (which
    ``np.uint64`` takes even when negative only as a numpy one)."""
    if numpy_operands:
        a, b = f"np.int64({a})", f"np.int64({b})"
    return f"np.int64(np.uint64({a}) {op} np.uint64({b}))"


class CommonExprs:
    """The expression forms both Python-source targets spell alike.

    A printer mixes this in and supplies ``constant(value, dtype)``,
    ``numpy_type(dtype)``, ``operand(expr, level)``, ``binary(expr)``,
    ``load_of(expr)`` and ``call(expr)``; :meth:`common` returns ``None`` for a
    form it leaves to the printer (variables, lets, and what it cannot emit).
    """

    def common(self, expr: ir.Expr) -> tuple[str, int] | None:
        """Source text and precedence of ``expr``, or ``None``."""
        match expr:
            case ir.IntImm() | ir.FloatImm():
                return self.constant(expr.value, expr.dtype)
            case ir.BoolImm():
                return self.constant(expr.value, "bool")
            case ir.Min() | ir.Max():
                fn = "min" if isinstance(expr, ir.Min) else "max"
                return f"{fn}({self(expr.a)}, {self(expr.b)})", ATOM
            case ir.BinaryOp() | ir.Compare() | ir.And() | ir.Or():
                return self.binary(expr)
            case ir.Not():
                return f"not {self.operand(expr.a, NOT)}", NOT
            case ir.Select():
                return (f"{self.operand(expr.true_value, OR)} if "
                        f"{self.operand(expr.condition, OR)} else "
                        f"{self.operand(expr.false_value, COND)}"), COND
            case ir.Cast():
                return f"{self.numpy_type(expr.dtype)}({self(expr.value)})", ATOM
            case ir.BufferLoad():
                return self.load_of(expr), ATOM
            case ir.Call():
                return self.call(expr)
        return None
