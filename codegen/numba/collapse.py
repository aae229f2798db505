"""A vectorized loop of a few iterations, emitted fused with the loop around it.

After ``split(j, [None, 16])`` and ``vectorize`` of the inner loop, the
plain emission ::

    for j_0 in range(64):
        for j_1 in range(16):
            B[i, j_0 * 16 + j_1] = A[i, j_0 * 16 + j_1] * 2 + 1

is what LLVM handles worst: it unrolls the 16 iterations of ``j_1`` before
it vectorizes, then vectorizes ``j_0``, whose accesses are 16 elements
apart, with gathers and scatters (3.8x slower than the unsplit loop on the
AVX-512 machine, cache-resident data).  Written as one loop ::

    for j_0_j_1 in range(64 * 16):
        j_0 = j_0_j_1 // 16
        j_1 = j_0_j_1 % 16
        B[i, j_0 * 16 + j_1] = ...

it runs as fast as the unsplit loop: LLVM sees that the counter is not
negative, so ``j_0 * 16 + j_1`` folds back to ``j_0_j_1`` and the accesses are
consecutive.  The iterations run in the same order, so this changes nothing
else.

Not where the body has an element of its own per lane, indexed by the
vectorized counter alone (``rfactor``'s ``B_rf[j_1] += A[i, 16 * j_0 + j_1]``):
there the unrolled lanes are 16 accumulators in registers, which the fused
loop would turn into a store through ``j_1 % 16`` each iteration.

Nor where the two counters index different dimensions of a buffer (a tile's
rows and columns, ``C_tile[i_1, j_1] = 0`` or a copy ``B_tile[k, j] = B[k, 32 *
j_0 + j]``): nothing in an index folds ``flat // 32`` and ``flat % 32`` back
into ``flat``, so LLVM vectorizes the fused loop with gathers and scatters
(16 of them for an 8 x 32 tile), where the nest gives one row of vectors per
iteration.  A scatter into a stack tile also takes its address, after which
LLVM may no longer keep the tile in registers where the kernel reads a heap
buffer (codegen/numba/stack.py).
"""

from __future__ import annotations

from polypad.ir import nodes as ir
from polypad.ir.nodes import ForKind
from polypad.ir.visitor import walk

#: Longest vectorized loop fused with its parent (a few vectors' worth).
MAX_LANES = 64


def collapsible(loop: ir.For, checked: dict) -> ir.For | None:
    """The vectorized loop to fuse with serial ``loop``, or ``None``: ``loop``'s whole
    body is a vectorized loop from 0 of constant extent up to :data:`MAX_LANES`, and
    neither loop has a range check (``checked``: the loops that do, by ``id``)."""
    inner = loop.body
    if (loop.kind is not ForKind.SERIAL or not isinstance(inner, ir.For)
            or inner.kind is not ForKind.VECTORIZED):
        return None
    if not (isinstance(inner.min, ir.IntImm) and inner.min.value == 0
            and isinstance(inner.extent, ir.IntImm) and 1 <= inner.extent.value <= MAX_LANES):
        return None
    if id(loop) in checked or id(inner) in checked:
        return None
    if any(isinstance(node, ir.For) for node in walk(inner.body)):
        return None  # its lanes go below those loops first (emit: lanes_innermost)
    # A let of a counter (a block's axis, vc = c) stands for it.
    of_inner, of_outer = {inner.var}, {loop.var}
    for node in walk(inner.body):
        if isinstance(node, ir.LetStmt):
            used = {v for v in walk(node.value) if isinstance(v, ir.Var)}
            if used & of_inner:
                of_inner.add(node.var)
            if used & of_outer:
                of_outer.add(node.var)
    for node in walk(inner.body):
        if isinstance(node, (ir.BufferLoad, ir.BufferStore)):
            used = {v for index in node.indices for v in walk(index) if isinstance(v, ir.Var)}
            if used & of_inner and not used & of_outer:
                return None  # a lane's own element (rfactor's B_rf[j_1]): keep the lanes
            if used & of_inner and used & of_outer and not any(
                    _uses(index, of_inner) and _uses(index, of_outer)
                    for index in node.indices):
                return None  # rows and columns of a tile: keep the nest
    return inner


def _uses(expr: ir.Expr, names: set) -> bool:
    return any(isinstance(v, ir.Var) and v in names for v in walk(expr))
