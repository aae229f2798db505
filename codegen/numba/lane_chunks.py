"""A vectorized loop of a few vectors, emitted as consecutive loops of two each.

LLVM keeps a register tile in registers only once its loops are fully
unrolled: the 8 x 32 tile of docs/schedules.md's matmul is 8 unrolled rows of
a 32-lane loop, which LLVM unrolls whole and the SLP vectorizer packs into two
512-bit FMAs per row.  A row of 64 lanes (a 4 x 64 tile) is past LLVM's full
unroll threshold: the loop vectorizer takes it instead, and the tile stays in
memory, loaded and stored at every step of the reduction -- plus a scalar
remainder loop.  On the 2-core AVX-512 machine the 1024^3 matmul in 4 x 64
tiles ran 28 ms on one core; emitted as two loops of 32 lanes, 8.8 ms (the
8 x 32 tile: 10.4).

So a vectorized loop of constant bounds longer than :data:`CHUNK_BYTES` worth of
its narrowest element, and at most :data:`MAX_CHUNKS` times that, is emitted as
consecutive ``range(lo, hi)`` loops over the chunks, in order: the same
iterations in the same order, so nothing about the result changes.
"""

from __future__ import annotations

from polypad.ir import nodes as ir
from polypad.ir.dtypes import bits
from polypad.ir.nodes import ForKind
from polypad.ir.visitor import walk

#: Bytes of one chunk: two 512-bit vectors (32 lanes of float32, 128 of int8).
CHUNK_BYTES = 128
#: Longest loop cut into chunks, in chunks; a longer one is a loop LLVM vectorizes
#: as a loop anyway, and copies of its body would only grow the code.
MAX_CHUNKS = 8


def lane_chunks(loop: ir.For) -> list[tuple[int, int]] | None:
    """The ``(lo, hi)`` bounds of the chunks to emit ``loop`` as, or ``None`` to emit
    it as one loop: a vectorized loop of constant bounds, with no loop inside, of more
    than one chunk and at most :data:`MAX_CHUNKS`."""
    if (loop.kind is not ForKind.VECTORIZED or not isinstance(loop.min, ir.IntImm)
            or not isinstance(loop.extent, ir.IntImm)):
        return None
    if any(isinstance(node, ir.For) for node in walk(loop.body)):
        return None
    widths = [bits(node.buffer.dtype) for node in walk(loop.body)
              if isinstance(node, (ir.BufferLoad, ir.BufferStore))]
    if not widths:
        return None
    chunk = max(1, CHUNK_BYTES * 8 // min(widths))
    start, extent = loop.min.value, loop.extent.value
    if extent <= chunk or extent > chunk * MAX_CHUNKS:
        return None
    return [(lo, min(lo + chunk, start + extent)) for lo in range(start, start + extent, chunk)]
