"""Lets scoped to the statements that read them.

The model reads a let's value again at each statement under it, at that
statement's time, and so refuses a let whose value a store of its body may
change before a later statement (:func:`polypad.model.extract`).  TVM's
argmax binds both of a block's new values first and stores them after::

    v0 = T.if_then_else(... x_red_temp_v0[i] ...)       v1 = ...
    v1 = ...                                       ->   v0 = T.if_then_else(...)
    x_red_temp_v0[i] = v0                                   x_red_temp_v0[i] = v0
    x_red_temp_v1[i] = v1                               x_red_temp_v1[i] = v1

where the second store does not read ``v0`` (the model itself now reads a let
only at the statements that use it, so this one it takes as written).
:func:`scope_lets` moves each
let down to the statements that read it, which changes nothing a run does:
two adjacent lets whose values do not read each other's variable are
swapped (both are pure values, computed at the same point), and a let over
a sequence ends after the last statement that reads it (its value is
computed where it was).
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import Rewriter


class Scoped(Rewriter):
    """The rewrite; :attr:`made` maps each statement visited (by identity) to what it
    became."""

    def __init__(self) -> None:
        self.made: dict[int, tuple[n.Stmt, n.Stmt]] = {}

    def visit(self, node):
        out = super().visit(node)
        if isinstance(node, n.Stmt):
            self.made[id(node)] = (node, out)
        return out

    def visit_LetStmt(self, node: n.LetStmt) -> n.Stmt:
        body = self.visit(node.body)
        return _narrowed(node, body)


def _narrowed(let: n.LetStmt, body: n.Stmt) -> n.Stmt:
    """``let`` over ``body``, moved down to the statements of ``body`` that read it."""
    var = let.var
    if isinstance(body, n.LetStmt) and var not in free_vars(body.value):
        inner = _narrowed(let, body.body)
        return n.LetStmt(body.var, body.value, inner, span=body.span)
    if isinstance(body, n.SeqStmt):
        users = [k for k, s in enumerate(body.stmts) if var in free_vars(s)]
        last = users[-1] if users else 0
        if last < len(body.stmts) - 1:
            head = body.stmts[:last + 1]
            inner = head[0] if len(head) == 1 else n.SeqStmt(head, span=body.span)
            scoped = _narrowed(let, inner)
            return n.SeqStmt((scoped, *body.stmts[last + 1:]), span=body.span)
    if body is let.body:
        return let
    return n.LetStmt(var, let.value, body, span=let.span)


def scope_lets(func: n.PrimFunc) -> tuple[n.PrimFunc, Scoped]:
    """``func`` with every let moved down to the statements that read it, and the
    rewrite (its ``made`` says what each statement became)."""
    rewrite = Scoped()
    body = rewrite.visit(func.body)
    if body is func.body:
        return func, rewrite
    return n.PrimFunc(func.name, func.params, body, func.attrs, func.ret_dtype), rewrite
