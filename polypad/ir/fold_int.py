"""Integer arithmetic on constants folded where it is exact: ``T.Mul(4, 1) + 0`` is ``4``.

A rewrite that substitutes constants into expressions (a layout's index map
applied to ``B[4]``: ``(i * 1 + 0) // 5`` at ``i = 4``) leaves operators on two
constants, which print as TVM prints them (``T.Mul(4, 1)``) and read badly.
:func:`fold_int_constants` folds them, and the identities ``x * 1``,
``x + 0``, ``x - 0``, ``x // 1``, where that changes no value: integer scalars
only, and a constant result only where it is one of the dtype's values (an
operation that would wrap is left as it is, as is a division by zero, which
the program raises when it runs).
"""

from __future__ import annotations

from . import dtypes
from .nodes import Add, BinaryOp, Expr, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Sub
from .visitor import Rewriter

_FOLD = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b if b else None,
    FloorMod: lambda a, b: a % b if b else None,
    Min: min,
    Max: max,
}


def fold_int_constants(expr: Expr) -> Expr:
    """``expr`` with its integer operators on constants folded, and ``x * 1``,
    ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0`` and ``x // 1`` written ``x``."""
    return _Folder().visit(expr)


def _constant(e: Expr) -> int | None:
    return e.value if isinstance(e, IntImm) else None


class _Folder(Rewriter):
    def generic_visit(self, node):
        node = super().generic_visit(node)
        if type(node) not in _FOLD or not isinstance(node, BinaryOp):
            return node
        if not dtypes.is_int(node.dtype) or dtypes.lanes(node.dtype) != 1:
            return node
        a, b = _constant(node.a), _constant(node.b)
        if a is not None and b is not None:
            value = _FOLD[type(node)](a, b)
            return node if value is None or not _fits(value, node.dtype) else IntImm(
                value, node.dtype)
        kind = type(node)
        # An identity keeps its other operand only where that has the node's dtype: in
        # ``(0:int64 + x:int32) * 2**20`` the sum widens x, and x alone would wrap.
        if ((kind is Mul and b == 1) or (kind in (Add, Sub) and b == 0) or (
                kind is FloorDiv and b == 1)) and node.a.dtype == node.dtype:
            return node.a
        if ((kind is Mul and a == 1) or (kind is Add and a == 0)) \
                and node.b.dtype == node.dtype:
            return node.b
        return node


def _fits(value: int, dtype: str) -> bool:
    bits = dtypes.bits(dtype)
    if dtype.startswith("u"):
        return 0 <= value < 2 ** bits
    return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
