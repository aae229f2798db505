"""C's integer division and remainder, which truncate toward zero, in polypad's IR.

TVM prints them as ``T.Div(a, b)`` (``T.truncdiv``) and ``T.truncmod(a, b)``
(TOPI's ``take(..., mode="wrap")``, ``depth_to_space``, resize).  polypad has
floor division only, which the analyses read; these write the truncating
forms with it (a ``Select`` on the remainder and the signs), and
:func:`truncation` recognizes them again, so the printer writes TVM's own
node back.
"""

from __future__ import annotations

from . import operators as ops
from .nodes import Eq, Expr, FloorDiv, FloorMod, IntImm, Or, Select


def truncated_div(x: Expr, y: Expr) -> Expr:
    """``x / y`` rounded toward zero, as C divides integers: ``x // y``, plus one where
    the quotient is negative and not whole (the remainder is nonzero and the operands'
    signs differ)."""
    floor = ops.floordiv(x, y)
    zero = IntImm(0, x.dtype)
    exact = Eq(ops.floormod(x, y), zero)
    same_sign = Eq(ops.ge(x, zero), ops.gt(y, zero))
    return Select(Or(exact, same_sign), floor, ops.add(floor, IntImm(1, x.dtype)))


def truncated_mod(x: Expr, y: Expr) -> Expr:
    """C's remainder, of the sign of ``x`` (TVM's ``T.truncmod``): ``x % y`` (floored,
    of the sign of ``y``) where that is 0 or the operands' signs agree, else ``x % y - y``
    (the quotient rounded up instead of down, as in :func:`truncated_div`)."""
    mod = ops.floormod(x, y)
    zero = IntImm(0, x.dtype)
    exact = Eq(mod, zero)
    same_sign = Eq(ops.ge(x, zero), ops.gt(y, zero))
    return Select(Or(exact, same_sign), mod, ops.sub(mod, y))


def truncation(e: Select) -> tuple[str, Expr, Expr] | None:
    """``("Div", x, y)`` where ``e`` is :func:`truncated_div` of ``x`` and ``y``,
    ``("truncmod", x, y)`` where it is :func:`truncated_mod`, else None: how the
    printer writes it back as TVM's own node (``T.Div(x, y)``, ``T.truncmod(x, y)``)."""
    first = e.true_value
    if e.eager or not isinstance(first, (FloorDiv, FloorMod)):
        return None
    x, y = first.a, first.b
    if isinstance(first, FloorDiv):
        return ("Div", x, y) if e == truncated_div(x, y) else None
    return ("truncmod", x, y) if e == truncated_mod(x, y) else None

