"""The loads an expression runs on every evaluation: none in a lazy operand (an arm of
``T.if_then_else``, the right side of ``and`` / ``or``, a let's body).  A target may
move these, and only these, ahead of the expression (:mod:`.numba.hoist`,
:mod:`.cuda.batch`): a load in a lazy operand may name an element the program never
reads, outside its buffer."""

from __future__ import annotations

from polypad.ir import nodes as ir
from polypad.ir.visitor import children


def eager_loads(e: ir.Expr) -> list[ir.BufferLoad]:
    """The loads of ``e`` that every evaluation of ``e`` runs (not in a lazy operand),
    in the order they run: operands left to right, a load's indices before it."""
    out: list[ir.BufferLoad] = []
    stack: list[tuple[ir.Expr, bool]] = [(e, False)]  # (expression, its operands done)
    while stack:
        x, done = stack.pop()
        if done:
            out.append(x)
            continue
        match x:
            case ir.Select(condition=c):
                stack.append((c, False))
            case ir.And(a=a) | ir.Or(a=a):
                stack.append((a, False))
            case ir.Let():
                stack.append((x.value, False))  # its body reads the let's variable
            case ir.BufferLoad():
                stack.append((x, True))
                stack.extend((i, False) for i in reversed(x.indices))
            case _:
                operands = [c for c in children(x) if isinstance(c, ir.Expr)]
                stack.extend((c, False) for c in reversed(operands))
    return out


__all__ = ["eager_loads"]
