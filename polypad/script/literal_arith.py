"""Arithmetic on integer literals, done as TVMScript does it: in Python.

TVM's parser evaluates an operator whose operands are both Python values with
Python's own operator, before anything becomes IR: ``T.serial(1 << 24)`` is a
loop of 16777216 steps, ``T.Buffer((4 * 1024,), ...)`` a buffer of 4096
elements, and ``x + 2 ** 10`` adds the constant 1024.  polypad folds the same
integer operators the same way (Python's ``//`` and ``%`` are TVM's
``floordiv`` and ``floormod``), so that a hand-written script means, and prints
as, what TVM makes of it.  Float literals and ``/`` are left to the IR.
"""

from __future__ import annotations

import ast
import operator

_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
#: Past this many bits a folded literal fits no dtype (uint64's 64); Python would
#: still compute it, slowly for ``2 ** 10**9``.
_MAX_BITS = 64


def is_int_literal(value) -> bool:
    """A Python ``int`` (a weak integer literal), not a ``bool``."""
    return type(value) is int


class LiteralTooLarge(ValueError):
    """A folded literal wider than any integer dtype."""


def fold(op: ast.operator, a: int, b: int) -> int | None:
    """``a op b`` as Python computes it, or None where Python would not give an
    integer (a negative exponent or shift, a division by zero): the operator is
    then built as IR, and refused or kept there.  Raises :class:`LiteralTooLarge`
    for a result wider than 64 bits."""
    fn = _OPERATORS.get(type(op))
    if fn is None:
        return None
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and b == 0:
        return None
    if isinstance(op, (ast.LShift, ast.RShift, ast.Pow)) and b < 0:
        return None
    text = ast.unparse(ast.BinOp(ast.Constant(a), op, ast.Constant(b)))  # `1 << 70`
    too_large = LiteralTooLarge(f"{text} is wider than any integer dtype "
                                f"(more than {_MAX_BITS} bits)")
    if isinstance(op, ast.LShift) and a and b > _MAX_BITS:
        raise too_large
    if isinstance(op, ast.Pow) and abs(a) > 1 and b * (abs(a).bit_length() - 1) > _MAX_BITS:
        raise too_large
    out = fn(a, b)
    if out.bit_length() > _MAX_BITS:
        raise too_large
    return out


def constant_int(node: ast.expr) -> int | None:
    """The value of ``node`` where it is integer literals and the operators above
    (``1 << 24``, ``4 * 1024``, ``-8``), else None."""
    if isinstance(node, ast.Constant):
        return node.value if is_int_literal(node.value) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = constant_int(node.operand)
        if value is None:
            return None
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        a, b = constant_int(node.left), constant_int(node.right)
        if a is not None and b is not None:
            try:
                return fold(node.op, a, b)
            except LiteralTooLarge:
                return None  # the caller's own error names the node
    return None
