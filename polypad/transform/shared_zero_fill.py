"""Shared buffers zero-filled where a read may find nothing written, as the reference does.

The reference executor zero-fills every allocation; ``cuda.shared.array``
is not.  :func:`analyses.gpu_shared_reads.unwritten_shared_reads` proves,
per shared buffer, that every read finds an earlier write of the same
allocation (then the GPU reads that write too, and nothing is needed: the
tiles of a tiled matmul, ``rfactor``'s partial sums after their init); for
the others, :func:`with_zero_fill` puts into the IR, at the start of the
allocation, a store of zeros to every element -- spread over the block's
``threadIdx.x`` threads where the allocation is outside every thread loop --
before the barrier plan is made, so :mod:`analyses.gpu_sync` places the
barrier between the fill and the reads like any other.

The fill goes inside the block-bound loops directly under the allocation
(each block zeroes its own copy).  A shared buffer allocated outside every
kernel launch cannot be filled in one and is refused
(:class:`~polypad.errors.BuildError` with the read and the element).
"""

from __future__ import annotations

from analyses.gpu_shared_reads import unwritten_shared_reads
from analyses.gpu_threads import BLOCK_AXES, THREAD_AXES, structure
from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, replace
from polypad.ir.operators import const
from polypad.ir.visitor import walk


def with_zero_fill(func: n.PrimFunc) -> tuple[n.PrimFunc, list[n.Buffer]]:
    """``func`` with a zero fill at the start of each shared buffer that a read may find
    unwritten, and those buffers."""
    unwritten = unwritten_shared_reads(func)
    if not unwritten:
        return func, []
    found = structure(func)
    outside = {id(a.buffer) for a in found.allocations}
    for buffer, (read, element) in unwritten.items():
        if id(buffer) in outside:
            raise BuildError(f"shared buffer {buffer.name!r} is read before anything writes "
                             f"it ({read} reads {element}), where the reference reads 0, and "
                             "it is allocated outside every kernel launch, where it cannot be "
                             "zero-filled: write it first, or allocate it inside the launch")
    for buffer in unwritten:
        if not all(isinstance(e, int) for e in buffer.shape):
            continue  # the emitter refuses a shared buffer without a constant shape
        alloc = next(x for x in walk(func.body)
                     if isinstance(x, n.Allocate) and x.buffer is buffer)
        under_thread = any(isinstance(a, n.For) and a.kind in THREAD_AXES
                           for a in ancestors(func.body, alloc))
        launch = structure(func).launch_of()[id(alloc)]
        threads = None if under_thread else launch.constant_extent(THREAD_AXES[0])
        func = replace(func, alloc, n.Allocate(buffer, _fill_inside(alloc.body, buffer,
                                                                    threads)))
    return func, list(unwritten)


def _fill_inside(body: n.Stmt, buffer: n.Buffer, threads: int | None) -> n.Stmt:
    """``body`` with the fill first, inside the block loops (and blocks, lets) at its top."""
    match body:
        case n.For() if body.kind in BLOCK_AXES:
            return n.For(body.var, body.min, body.extent, body.kind,
                         _fill_inside(body.body, buffer, threads))
        case n.Block():
            return n.Block(body.name, _fill_inside(body.body, buffer, threads), body.header)
        case n.LetStmt():
            return n.LetStmt(body.var, body.value, _fill_inside(body.body, buffer, threads))
    return n.SeqStmt((_fill(buffer, threads), body))


def _fill(buffer: n.Buffer, threads: int | None) -> n.Stmt:
    """Zeros to every element of ``buffer``: the last axis spread over ``threads``
    threads on ``threadIdx.x`` (None or 1: one thread stores them all)."""
    shape = [int(e) for e in buffer.shape]
    counters = [n.Var(f"{buffer.name}_zero_{k}", "int32") for k in range(len(shape))]
    indices: list[n.Expr] = list(counters)
    last = shape[-1]
    spread = threads is not None and threads > 1 and last > 1
    if spread:
        width = min(threads, last)
        outer = n.Var(f"{buffer.name}_zero_o", "int32")
        indices[-1] = outer * width + counters[-1]
    store: n.Stmt = n.BufferStore(buffer, const(0, buffer.dtype), tuple(indices))
    if spread:
        if last % width:
            store = n.IfThenElse(indices[-1] < last, store)
        store = n.For(counters[-1], const(0), const(width), THREAD_AXES[0], store)
        store = n.For(outer, const(0), const(-(-last // width)), n.ForKind.SERIAL, store)
        rest = list(zip(counters[:-1], shape[:-1]))
    else:
        rest = list(zip(counters, shape))
    for counter, extent in reversed(rest):
        store = n.For(counter, const(0), const(extent), n.ForKind.SERIAL, store)
    return store
