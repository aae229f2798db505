"""Moving every access of one buffer onto another, through an index map.

``relayout(func, old, new, index_map)`` replaces ``old`` by ``new`` in the
parameters, in its ``Allocate`` and in every load and store, and sends the
indices of each access through ``index_map``: ``A[i]`` becomes
``A[i // 4, i % 4]``.  With the identity map it merely redirects accesses,
which is what the cache stages need.
"""

from __future__ import annotations

import dataclasses

from polypad.ir import nodes as n
from polypad.ir.visitor import Rewriter


def relayout(root, old: n.Buffer, new: n.Buffer, index_map=None):
    """``root`` (a function or a statement) with ``old`` accessed as ``new``, each
    access's indices mapped by ``index_map`` (kept as they are when ``None``)."""
    rewriter = _Relayout(old, new, index_map)
    if not isinstance(root, n.PrimFunc):
        return rewriter.visit(root)
    params = tuple(new if p is old else p for p in root.params)
    body = rewriter.visit(root.body)
    return n.PrimFunc(root.name, params, body, root.attrs)


class _Relayout(Rewriter):
    def __init__(self, old: n.Buffer, new: n.Buffer, index_map):
        self.old, self.new, self.index_map = old, new, index_map

    def visit_buffer(self, buffer: n.Buffer) -> n.Buffer:
        return self.new if buffer is self.old else buffer

    def visit_BufferLoad(self, node: n.BufferLoad):
        return self._remap(node, self.generic_visit(node))

    def visit_BufferStore(self, node: n.BufferStore):
        return self._remap(node, self.generic_visit(node))

    def _remap(self, before, after):
        if before.buffer is not self.old or self.index_map is None:
            return after
        return dataclasses.replace(after, indices=tuple(self.index_map(*after.indices)))
