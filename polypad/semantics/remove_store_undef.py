"""``remove_store_undef``: delete every store of a value that contains ``T.undef()``.

Before::

    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = A[4 * io + ii]
        else:
            B[io, ii] = T.undef()

After::

    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = A[4 * io + ii]

Why it is correct: ``T.undef()`` is a valid but arbitrary value and a pure
expression of it is again arbitrary, so the memory may keep whatever it
already holds; writing nothing is one allowed outcome (RFC 0077, "New
Lowering Transform - Remove T.undef").  A let bound to such a value taints
its variable: a store of the variable is removed too, and the binding goes
once nothing uses it.  Emptied loops and ``if``s disappear (see
:mod:`polypad.ir.removal`).

Afterwards no ``T.undef()`` may remain: one in an index, a loop bound, a
condition or a still-used let is a :class:`~polypad.errors.BuildError` naming
the statement, and one inside a ``T.assume`` means
:func:`~polypad.transform.remove_assume` has not run yet.
"""

from __future__ import annotations

from polypad.arguments import expect
from polypad.errors import BuildError
from polypad.ir.intrinsics import is_call
from polypad.ir.nodes import (
    BufferStore,
    Evaluate,
    Expr,
    For,
    IfThenElse,
    LetStmt,
    PrimFunc,
    Stmt,
    Var,
)
from polypad.ir.removal import StatementRemover
from polypad.ir.substitute import free_vars
from polypad.ir.verify import checked_result
from polypad.ir.visitor import walk


class _RemoveStoreUndef(StatementRemover):
    def __init__(self):
        self.undef_vars: set[Var] = set()

    def carries_undef(self, expr: Expr) -> bool:
        return any(is_call(n, "undef") or (isinstance(n, Var) and n in self.undef_vars)
                   for n in walk(expr))

    def visit_BufferStore(self, node: BufferStore) -> BufferStore | None:
        return None if self.carries_undef(node.value) else node

    def visit_LetStmt(self, node: LetStmt) -> Stmt | None:
        if not self.carries_undef(node.value):
            return self._body_only(node)
        self.undef_vars.add(node.var)
        body = self.visit(node.body)
        if body is None:
            return None
        if node.var not in free_vars(body):
            return body
        return node if body is node.body else LetStmt(node.var, node.value, body,
                                                      span=node.span)


def remove_store_undef(func: PrimFunc) -> PrimFunc:
    """``func`` without stores of ``T.undef()`` (the same object if it had none).

    Raises :class:`BuildError` if a ``T.undef()`` remains anywhere else.
    """
    expect(func, PrimFunc, "func", "remove_store_undef")
    rewriter = _RemoveStoreUndef()
    result = checked_result(rewriter.visit(func), func, "remove_store_undef")
    _check_no_undef(result, rewriter.undef_vars)
    return result


def _expressions(stmt: Stmt) -> list[tuple[str, Expr]]:
    """The expressions a statement holds itself (not those of nested statements)."""
    match stmt:
        case For():
            return [("the min of loop " + stmt.var.name, stmt.min),
                    ("the extent of loop " + stmt.var.name, stmt.extent)]
        case IfThenElse():
            return [("the condition of an if", stmt.condition)]
        case BufferStore():
            return [(f"an index of the store to {stmt.buffer.name}", i) for i in stmt.indices]
        case LetStmt():
            return [(f"the value of {stmt.var.name}, which is still used", stmt.value)]
        case Evaluate():
            if is_call(stmt.value, "assume"):
                return [("a T.assume (run remove_assume first)", stmt.value)]
            return [("an evaluated expression", stmt.value)]
    return []


def _check_no_undef(func: PrimFunc, undef_vars: set[Var]) -> None:
    for node in walk(func.body):
        if not isinstance(node, Stmt):
            continue
        for where, expr in _expressions(node):
            for sub in walk(expr):
                if is_call(sub, "undef") or (isinstance(sub, Var) and sub in undef_vars):
                    at = "" if node.span is None else (
                        f" ({node.span.filename}:{node.span.line})")
                    raise BuildError(
                        f"T.undef() remains in {where}{at} of {func.name!r}: only a "
                        "stored value may be undefined")
