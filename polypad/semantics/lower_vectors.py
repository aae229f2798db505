"""Lowering vectors: a vector statement runs as its lanes, one scalar statement each.

TVM's ``VectorizeLoop`` prints vector stores (``C[b:b + 4] = v``) and
vector lets.  A vector store computes every lane of its value, then stores
them; so does its lowering, which keeps the lanes in locals first wherever
the value reads the buffer it stores to (``C[b:b + 4] = C[T.Ramp(b + 1, 1,
4)]`` must not see its own stores)::

    C[b:b + 4] = A[T.Ramp(b, 1, 4)] * T.Broadcast(x, 4)
        ->  C[b] = A[b] * x; C[b + 1] = A[b + 1] * x; ...

A vector let becomes one let per lane.  Run after :mod:`.lower_views`, so a
buffer is one piece of memory and "reads the buffer it stores to" is exact.
"""

from __future__ import annotations

from polypad.ir import dtypes
from polypad.ir.lanes import lane, lane_view_access
from polypad.ir.nodes import BufferLoad, BufferStore, LetStmt, PrimFunc, SeqStmt, Var
from polypad.ir.visitor import Rewriter, walk


def lower_vectors(func: PrimFunc) -> PrimFunc:
    """``func`` with every vector store and let written out lane by lane."""
    if not any(isinstance(x, (LetStmt, BufferStore)) and "x" in x.value.dtype
               for x in walk(func.body)):
        return func
    body = _Scalarize().visit(func.body)
    return PrimFunc(func.name, func.params, body, func.attrs, func.ret_dtype)


class _Scalarize(Rewriter):
    def __init__(self):
        self.lanes_of: dict[Var, tuple[Var, ...]] = {}

    def visit_BufferStore(self, node: BufferStore):
        count = dtypes.lanes(node.value.dtype)
        if count == 1:
            return node
        values = [lane(node.value, k, self.lanes_of) for k in range(count)]
        indices = [tuple(lane(i, k, self.lanes_of) for i in node.indices) for k in range(count)]
        through = [lane_view_access(node.view_access, k, self.lanes_of)
                   for k in range(count)]
        rereads = any(isinstance(x, BufferLoad) and x.buffer is node.buffer
                      for x in walk(node.value))
        if not rereads:
            return SeqStmt(tuple(BufferStore(node.buffer, v, i, span=node.span, view_access=t)
                                 for v, i, t in zip(values, indices, through, strict=True)))
        temps = [Var(f"{node.buffer.name}_lane{k}", node.buffer.dtype) for k in range(count)]
        out = SeqStmt(tuple(BufferStore(node.buffer, t, i, span=node.span, view_access=v)
                            for t, i, v in zip(temps, indices, through, strict=True)))
        for t, v in reversed(list(zip(temps, values, strict=True))):
            out = LetStmt(t, v, out, span=node.span)
        return out

    def visit_LetStmt(self, node: LetStmt):
        count = dtypes.lanes(node.value.dtype)
        if count == 1:
            return self.generic_visit(node)
        own = tuple(Var(f"{node.var.name}_{k}", dtypes.element(node.var.dtype))
                    for k in range(count))
        values = [lane(node.value, k, self.lanes_of) for k in range(count)]
        self.lanes_of[node.var] = own
        out = self.visit(node.body)
        for var, value in reversed(list(zip(own, values, strict=True))):
            out = LetStmt(var, value, out, span=node.span)
        return out
