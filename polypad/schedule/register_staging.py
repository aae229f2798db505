"""The next step's tile of a double buffer staged through registers.

``sch.double_buffer(tile, through_registers=True)`` splits the copy of the
next step's tile in two: its loads from global memory into a local buffer
first in the step, its stores of those values into the other half of the
tile last, after the step's readers.  The loads are then in flight while
the thread computes (the classic SGEMM prefetch into registers), not waited
for before its first multiply-add::

    for k_0 in T.serial(4):
        A_shared_next = T.alloc_buffer((4, 16, 16), "float32", scope="local")
        if k_0 + 1 < 4:
            with T.block("A_shared_load"):
                for p in T.unroll(4): for ty ...: for tx ...:
                    A_shared_next[p, ty, tx] = A[..., 8 * (k_0 + 1) + ...]
        ...  A_shared[k_0 % 2, ...] ...                 # the step's readers
        if k_0 + 1 < 4:
            with T.block("A_shared"):
                for p in T.unroll(4): for ty ...: for tx ...:
                    A_shared[(k_0 + 1) % 2, ...] = A_shared_next[p, ty, tx]

The local buffer is indexed by every loop of the copy, so each thread
touches only its own elements; the ``cuda`` target cuts it to each thread's
box (the passes: 4 values, :mod:`codegen.cuda.compact`), in registers once
the passes are unrolled.  This is exact: the stores write the half no
reader of the step reads, and the loads read what the copy read (the
legality of the double buffer already asks that nothing in the loop writes
it).  The copy's loops must have constant extents (the local buffer's
shape): a partial tile whose loop extents depend on the step is refused.
"""

from __future__ import annotations

import dataclasses

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.locate import enclosing_loops
from polypad.ir.naming import fresh_block_name
from polypad.ir.visitor import Rewriter, walk


def staged(func: n.PrimFunc, copy: n.Stmt, tile: n.Buffer, where: str
           ) -> tuple[n.Buffer, n.Stmt, n.Stmt]:
    """The local buffer and the two halves of ``copy`` (the next step's copy into
    ``tile``): the loads into the local buffer, and the stores from it."""
    stores = [x for x in walk(copy) if isinstance(x, n.BufferStore) and x.buffer is tile]
    if len(stores) != 1:
        raise PolypadError(f"{where}: staging through registers needs a copy of one store "
                           f"into {tile.name}; it has {len(stores)}")
    store = stores[0]
    loops = enclosing_loops(copy, store)
    if not all(isinstance(x.extent, n.IntImm) and isinstance(x.min, n.IntImm)
               for x in loops):
        raise PolypadError(f"{where}: staging through registers needs the copy's loops to "
                           "have constant bounds (the local buffer's shape); a loop's "
                           "extent depends on the step")
    taken = {p.name for p in func.params if isinstance(p, n.Buffer)}
    taken |= {a.buffer.name for a in walk(func.body) if isinstance(a, n.Allocate)}
    name = f"{tile.name}_next"
    k = 1
    while name in taken:
        name, k = f"{tile.name}_next_{k}", k + 1
    shape = tuple(x.extent.value for x in loops) or (1,)
    local = n.Buffer(name, shape, tile.dtype, (), "local")
    index = tuple(op.sub(x.var, x.min) if x.min.value else x.var for x in loops) \
        or (op.const(0),)
    load = _Leaf(store, n.BufferStore(local, store.value, index)).visit(copy)
    keep = n.BufferStore(tile, n.BufferLoad(local, index), store.indices)
    write = _Leaf(store, keep).visit(copy)
    load = _rename(load, fresh_block_name(func, f"{tile.name}_load"))
    return local, load, write


def _rename(stmt: n.Stmt, name: str) -> n.Stmt:
    """``stmt`` with its outermost block (under the guard) called ``name``."""
    if isinstance(stmt, n.Block):
        return dataclasses.replace(stmt, name=name)
    if isinstance(stmt, n.IfThenElse) and stmt.else_case is None:
        return dataclasses.replace(stmt, then_case=_rename(stmt.then_case, name))
    return stmt


class _Leaf(Rewriter):
    """``old`` (by identity) replaced by ``new``; every other statement a new object, so
    that the two halves share no statement."""

    def __init__(self, old: n.BufferStore, new: n.BufferStore):
        self.old, self.new = old, new

    def visit_BufferStore(self, node: n.BufferStore):
        return self.new if node is self.old else dataclasses.replace(node)

    def visit_Stmt(self, node: n.Stmt):
        out = self.generic_visit(node)
        return dataclasses.replace(node) if out is node else out


__all__ = ["staged"]
