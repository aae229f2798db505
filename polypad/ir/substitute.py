"""Replacing variables by expressions, and collecting free variables."""

from __future__ import annotations

from .nodes import DeclBuffer, For, Let, LetStmt, Var
from .visitor import Rewriter, Visitor


class _Substituter(Rewriter):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Var(self, var: Var):
        return self.mapping.get(var, var)


def substitute(node, mapping: dict):
    """``node`` with each ``Var`` key of ``mapping`` replaced by its value.

    >>> substitute(i + 1, {i: j * 4})   # j * 4 + 1
    """
    if not mapping:
        return node
    return _Substituter(mapping).visit(node)


class _FreeVars(Visitor):
    def __init__(self):
        self.bound: set = set()
        self.free: dict = {}

    def visit_Var(self, var: Var):
        if var not in self.bound:
            self.free.setdefault(var, None)

    def visit_For(self, node: For):
        self.visit(node.min)
        self.visit(node.extent)
        self._bind(node.var, node.body)

    def visit_Let(self, node: Let | LetStmt):
        self.visit(node.value)
        self._bind(node.var, node.body)

    visit_LetStmt = visit_Let

    def visit_DeclBuffer(self, node: DeclBuffer):
        # A view's extents, offset and pointer use variables no expression child holds.
        from .views import view_vars

        for var in view_vars(node.buffer):
            self.visit_Var(var)
        self.visit(node.body)

    def _bind(self, var: Var, body):
        self.bound.add(var)
        self.visit(body)


def free_vars(node) -> list[Var]:
    """Variables used in ``node`` but not bound inside it, in first-use order."""
    collector = _FreeVars()
    collector.visit(node)
    return list(collector.free)

