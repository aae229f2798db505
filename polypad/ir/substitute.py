"""Replacing variables by expressions, and collecting what a node uses from outside.

:func:`free_vars` follows scopes: the variables a node reads that no binder
around the use binds (the passes ask it of one expression or statement).
:func:`free_symbols` is what a fragment printed on its own must declare:
the variables and buffers it uses that nothing inside it binds, buffer
shapes and views included (the printer asks it).
"""

from __future__ import annotations

from .nodes import (
    Allocate,
    AttrStmt,
    Buffer,
    BufferData,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    For,
    Let,
    LetStmt,
    PrimFunc,
    Var,
)
from .views import view_vars
from .visitor import Rewriter, Visitor, walk


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


def free_symbols(node) -> tuple[list[Var], list[Buffer]]:
    """Variables and buffers used in ``node`` but bound nowhere inside it."""
    used_vars: dict[Var, None] = {}
    used_bufs: dict[Buffer, None] = {}
    bound: set = set()

    def use_buffer(b: Buffer) -> None:
        used_bufs.setdefault(b)
        for d in b.shape:
            if isinstance(d, Var):
                used_vars.setdefault(d)
        if isinstance(b.data, Buffer):
            use_buffer(b.data)

    roots = [node]
    if isinstance(node, PrimFunc):
        roots = [node.body]
        for p in node.params:
            bound.add(p)
            if isinstance(p, Buffer):
                use_buffer(p)
    for root in roots:
        for n in walk(root):
            if isinstance(n, (For, Let, LetStmt)):
                bound.add(n.var)
            elif isinstance(n, Var):
                used_vars.setdefault(n)
            elif isinstance(n, (BufferLoad, BufferStore, BufferData)):
                use_buffer(n.buffer)
            elif isinstance(n, (Allocate, DeclBuffer)):
                bound.add(n.buffer)
                use_buffer(n.buffer)
                for v in view_vars(n.buffer):
                    used_vars.setdefault(v)
            elif isinstance(n, AttrStmt):
                for part in n.node if isinstance(n.node, tuple) else (n.node,):
                    if isinstance(part, Buffer):
                        use_buffer(part)
    return ([v for v in used_vars if v not in bound],
            [b for b in used_bufs if b not in bound])
