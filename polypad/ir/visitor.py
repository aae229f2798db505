"""Walking the tree: a read-only :class:`Visitor` and a :class:`Rewriter`.

Both dispatch on the node's class: define ``visit_For`` to handle ``For``
nodes (or ``visit_BinaryOp`` for every binary operator), and call
``self.generic_visit(node)`` to descend.  A
``Rewriter`` returns the *same object* for a subtree it did not change, so
``Rewriter().visit(f) is f`` and a pass that changes nothing costs no
allocation.  Buffers are leaves; a rewriter that renames or replaces
buffers overrides :meth:`Rewriter.visit_buffer`.
"""

from __future__ import annotations

import dataclasses

from .deep_worker import guarded
from .nodes import Buffer, BufferLoad, BufferStore, Expr, IRModule, PrimFunc, Stmt

_NODE_TYPES = (Expr, Stmt, PrimFunc, IRModule)
_VIEW_ACCESSES = (BufferLoad, BufferStore)  # the nodes that may carry a view_access
_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(node) -> tuple[str, ...]:
    """Names of the dataclass fields of ``node`` that take part in equality."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.compare)
        _FIELDS[cls] = names
    return names


def children(node):
    """The child nodes of ``node`` (expressions, statements, functions), in order."""
    for name in node_fields(node):
        value = getattr(node, name)
        if isinstance(value, _NODE_TYPES):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, _NODE_TYPES):
                    yield item


class _Dispatch:
    """Dispatch on the node class, most specific first: ``visit_Add`` is tried
    before ``visit_BinaryOp``, which is tried before ``generic_visit``."""

    __slots__ = ()
    _handlers: dict = {}

    @guarded
    def visit(self, node):
        key = (type(self), type(node))
        name = _Dispatch._handlers.get(key)
        if name is None:
            name = next((f"visit_{c.__name__}" for c in type(node).__mro__
                         if hasattr(self, f"visit_{c.__name__}")), "generic_visit")
            _Dispatch._handlers[key] = name
        return getattr(self, name)(node)


class Visitor(_Dispatch):
    """Read-only traversal.  Override ``visit_<Class>`` methods as needed."""

    def generic_visit(self, node) -> None:
        for child in children(node):
            self.visit(child)


class Rewriter(_Dispatch):
    """Rebuilding traversal that shares every unchanged subtree."""

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        """Hook for buffer replacement; the default keeps every buffer."""
        return buffer

    def generic_visit(self, node):
        changes = {}
        for name in node_fields(node):
            old = getattr(node, name)
            new = self._visit_value(old)
            if new is not old:
                changes[name] = new
        if not changes:
            return node
        through = node.view_access if type(node) in _VIEW_ACCESSES else None
        if through is not None:
            # An access lowered from a view (polypad.semantics.lower_views): the view's
            # indices are parts of the flat index, rewritten alike.
            changes["view_access"] = (through[0], self._visit_value(through[1]))
        return dataclasses.replace(node, **changes)

    def _visit_value(self, value):
        if isinstance(value, _NODE_TYPES):
            return self.visit(value)
        if isinstance(value, Buffer):
            return self.visit_buffer(value)
        if isinstance(value, tuple):
            new = tuple(self._visit_value(v) for v in value)
            if all(a is b for a, b in zip(new, value)):
                return value
            return new
        return value


def walk(node):
    """Every node under (and including) ``node``, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))
