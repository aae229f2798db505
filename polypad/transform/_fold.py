"""Replacing sub-expressions by constants, and folding what that decides.

Shared by the passes that learn a condition's value in some region
(:mod:`.hoist_expression` substitutes a hoisted condition by ``True`` or
``False`` in each copy of a loop; :mod:`.simplify` and
:mod:`.reduce_loop_extents` drop guards they proved).  Folding only uses
the boolean laws (``True and x`` is ``x``, ``if False`` runs its else
branch), so it is correct for any operand: IR expressions have no side
effects, and dropping the evaluation of one can only remove a failure.
An ``if``, loop, let or block left with nothing to do is removed, as in
:mod:`._removal`.
"""

from __future__ import annotations

from collections.abc import Mapping

from polypad.ir import nodes as n
from polypad.ir.intrinsics import is_call
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter

from ._removal import StatementRemover

TRUE = n.BoolImm(True)
FALSE = n.BoolImm(False)


class _ExprReplacer(Rewriter):
    """Replaces every sub-expression equal (exactly) to a key; skips ``T.assume``."""

    def __init__(self, mapping: Mapping[n.Expr, n.Expr]) -> None:
        self.mapping = mapping

    def visit(self, node):
        if isinstance(node, n.Expr):
            found = self.mapping.get(node)
            if found is not None:
                return found
        return super().visit(node)

    def visit_Evaluate(self, node: n.Evaluate):
        # A fact stays as stated: rewriting it under a branch's knowledge would
        # weaken what later analyses may use, for no gain at run time.
        return node if is_call(node.value, "assume") else self.generic_visit(node)


def replace_exprs(node, mapping: Mapping[n.Expr, n.Expr]):
    """``node`` with each sub-expression equal to a key of ``mapping`` replaced."""
    if not mapping:
        return node
    return _ExprReplacer(mapping).visit(node)


def fold_expr(e: n.Expr) -> n.Expr:
    """``e`` with constant boolean structure folded (``x and True`` -> ``x``)."""
    return _ExprFolder().visit(e)


class _ExprFolder(Rewriter):
    def visit_And(self, node: n.And) -> n.Expr:
        a, b = self.visit(node.a), self.visit(node.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, n.BoolImm):
                return y if x.value else FALSE
        return node if (a is node.a and b is node.b) else n.And(a, b)

    def visit_Or(self, node: n.Or) -> n.Expr:
        a, b = self.visit(node.a), self.visit(node.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, n.BoolImm):
                return TRUE if x.value else y
        return node if (a is node.a and b is node.b) else n.Or(a, b)

    def visit_Not(self, node: n.Not) -> n.Expr:
        a = self.visit(node.a)
        if isinstance(a, n.BoolImm):
            return n.BoolImm(not a.value)
        if isinstance(a, n.Not):
            return a.a
        return node if a is node.a else n.Not(a)

    def visit_Select(self, node: n.Select) -> n.Expr:
        node = self.generic_visit(node)
        if isinstance(node.condition, n.BoolImm):
            return node.true_value if node.condition.value else node.false_value
        return node

    def visit_Call(self, node: n.Call) -> n.Expr:
        node = self.generic_visit(node)
        if node.op == "likely" and isinstance(node.args[0], n.BoolImm):
            return node.args[0]
        return node


class Folder(StatementRemover):
    """Folds conditions and removes what a constant condition leaves dead."""

    def visit_IfThenElse(self, node: n.IfThenElse) -> n.Stmt | None:
        cond = fold_expr(node.condition)
        if isinstance(cond, n.BoolImm):
            taken = node.then_case if cond.value else node.else_case
            return None if taken is None else self.visit(taken)
        out = super().visit_IfThenElse(node)
        if out is None or cond is node.condition:
            return out
        if isinstance(out, n.IfThenElse) and out.condition is node.condition:
            return n.IfThenElse(cond, out.then_case, out.else_case, span=node.span)
        # The remover negated the condition (only an else branch was left).
        return n.IfThenElse(n.Not(cond), out.then_case, out.else_case, span=node.span)

    def visit_BufferStore(self, node: n.BufferStore) -> n.Stmt:
        value = fold_expr(node.value)
        indices = tuple(fold_expr(i) for i in node.indices)
        if value is node.value and all(a is b for a, b in zip(indices, node.indices)):
            return node
        return n.BufferStore(node.buffer, value, indices, span=node.span)

    def visit_LetStmt(self, node: n.LetStmt) -> n.Stmt | None:
        value = fold_expr(node.value)
        if isinstance(value, n.BoolImm):
            # A decided boolean let: its uses fold too (`c = True; if c:` -> the body).
            return self.visit(substitute(node.body, {node.var: value}))
        body = self.visit(node.body)
        if body is None:
            return None
        if value is node.value and body is node.body:
            return node
        return n.LetStmt(node.var, value, body, span=node.span)


def fold(stmt: n.Stmt) -> n.Stmt | None:
    """``stmt`` with constant conditions folded; ``None`` when nothing is left."""
    return Folder().visit(stmt)


def substitute_and_fold(stmt: n.Stmt, mapping: Mapping[n.Expr, n.Expr]) -> n.Stmt | None:
    """:func:`replace_exprs` then :func:`fold`."""
    return fold(replace_exprs(stmt, mapping))


def build_if(cond: n.Expr, then: n.Stmt | None, other: n.Stmt | None, *,
             span: n.Span | None = None) -> n.Stmt | None:
    """``if cond: then else: other``, with empty branches left out."""
    if then is None and other is None:
        return None
    if then is None:
        return n.IfThenElse(n.Not(cond), other, None, span=span)
    return n.IfThenElse(cond, then, other, span=span)
