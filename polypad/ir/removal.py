"""Deleting statements, and the containers that deleting them empties.

Shared by the lowering passes that turn a statement into a no-op
(:mod:`polypad.semantics.remove_assume`, :mod:`polypad.semantics.remove_store_undef`)
and by the passes of :mod:`polypad.transform` that delete what they proved does
nothing.  A subclass's
statement visitor returns ``None`` to delete the statement; this rewriter
then drops it from its ``SeqStmt`` and removes every enclosing loop, ``if``,
let, block or allocation left with nothing to do.  Removing those is sound
because IR expressions have no side effects: a loop bound, a condition or a
let value that nothing uses cannot change any buffer.
"""

from __future__ import annotations

import dataclasses

from polypad.ir.nodes import (
    Allocate,
    Block,
    DeclBuffer,
    Evaluate,
    For,
    IfThenElse,
    IntImm,
    LetStmt,
    Not,
    PrimFunc,
    SeqStmt,
    Stmt,
)
from polypad.ir.visitor import Rewriter


def no_op() -> Evaluate:
    """The statement that does nothing (``T.evaluate(0)``), for a body that became
    empty: a new object at each call, since analyses find statements by identity and
    one object in two places of a tree is refused (:mod:`polypad.ir.shared_statements`)."""
    return Evaluate(IntImm(0))


class StatementRemover(Rewriter):
    """A :class:`Rewriter` whose statement visitors may return ``None`` (delete).

    Only statements are traversed: expressions are returned unchanged, so
    subclasses that look inside an expression do so themselves.
    """

    def visit_PrimFunc(self, func: PrimFunc) -> PrimFunc:
        body = self.visit(func.body)
        if body is func.body:
            return func
        return dataclasses.replace(func, body=no_op() if body is None else body)

    def visit_SeqStmt(self, node: SeqStmt) -> Stmt | None:
        new = [self.visit(s) for s in node.stmts]
        if all(a is b for a, b in zip(new, node.stmts, strict=True)):
            return node
        kept = tuple(s for s in new if s is not None)
        if not kept:
            return None
        if len(kept) == 1:
            return kept[0]
        return SeqStmt(kept, span=node.span)

    def visit_IfThenElse(self, node: IfThenElse) -> Stmt | None:
        then_case = self.visit(node.then_case)
        else_case = None if node.else_case is None else self.visit(node.else_case)
        if then_case is node.then_case and else_case is node.else_case:
            return node
        if then_case is None and else_case is None:
            return None
        if then_case is None:
            return IfThenElse(Not(node.condition), else_case, None, span=node.span)
        return dataclasses.replace(node, then_case=then_case, else_case=else_case)

    def _body_only(self, node: For | LetStmt | Block | Allocate | DeclBuffer) -> Stmt | None:
        body = self.visit(node.body)
        if body is node.body:
            return node
        if body is None:
            return None
        return dataclasses.replace(node, body=body)

    # A view declared over nothing left goes with its body.
    visit_For = visit_LetStmt = visit_Block = visit_Allocate = visit_DeclBuffer = _body_only

    # Statements without statement children stay as they are unless a
    # subclass decides otherwise; expressions are never descended into.
    def visit_BufferStore(self, node):
        return node

    def visit_Evaluate(self, node):
        return node
