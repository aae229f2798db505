"""Matrix multiplication, ``C = A @ B`` in float32, and its GPU schedule.

``matmul(m, n, k)`` builds the plain loop nest::

    for i, j in T.grid(m, n):
        C[i, j] = 0
        for k in range(k):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]

``schedule_cuda(func, vector=1)`` is the classic register-tiled shared-memory
schedule, through polypad's primitives: a block of ``threads x threads``
threads (16 x 16) per ``threads * per_thread`` square tile of ``C`` (128 x
128), each thread computing ``per_thread x per_thread`` outputs (8 x 8)
``threads`` apart (so that a warp's loads of ``B``'s tile and stores of
``C`` are contiguous) in a local buffer the target keeps in registers
(:mod:`codegen.cuda.compact`), and at each step of ``k`` (8 wide) the tiles
of ``A`` and ``B`` loaded into shared memory by all the block's threads at
once, 4 consecutive passes of the 256 threads each (``cache_read(...,
"shared", at=ko)``, ``fuse``, ``split`` and ``bind`` of the copy's
loops).  The ``cuda`` target places the two barriers each step needs, and
proves that no other is (:mod:`analyses.gpu_sync`); it loads each thread's
8 values of each tile into registers once per step of ``k`` (the fragments)
for its 64 multiply-adds (:mod:`codegen.cuda.batch`).
Sizes the tiles do not divide give partial tiles at the edges: the split
loops' guards move down to the multiply-add (``reorder``), the shared copies
run as many rows and columns as the tile has, in the whole tile's coalesced
passes with the elements past its end guarded (:func:`cooperative`), and the
write-back likewise, each axis over its own threads; exact, only
``through_registers`` still needs multiples of the tiles.

``schedule_cuda(func)``, the default, gives each thread its outputs in runs
of 4 consecutive rows and columns, reads them from shared memory 4 floats at
a time, and copies the tiles and writes ``C`` back 4 floats at a time
(``vector=4, wide_copies=True``): 35 TFLOP/s at 4096³ on an H200, 0.69x
cuBLAS, against 0.50x for the classic kernel
(``benchmarks/bench_cuda_sweep.py``).

``schedule_cuda(func)`` gives both tiles two stages (``sch.double_buffer``;
``double_buffer=False`` keeps one): the first step's tiles are loaded before
the loop, and each step loads the next step's into the other half of each
tile while it computes from the current one, so the target places one
barrier per step instead of two.  On an H200 this ran 25 TFLOP/s at 4096³
against 22.6 with one half (0.50x cuBLAS against 0.45x;
``benchmarks/bench_cuda_sweep.py``).  ``through_registers=True`` also issues
the next tiles' loads from global memory into registers before the step's
multiply-adds and stores them into shared memory after them, so that they
are in flight while the thread computes; its 168 registers halve the blocks
per SM, and it ran slower (21.5 TFLOP/s).
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.nodes import PrimFunc
from polypad.schedule import Schedule
from polypad.script import parse

_TEXT = '''
@T.prim_func
def matmul(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
           C: T.Buffer(({m}, {n}), "float32")):
    for i, j in T.grid({m}, {n}):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in range({k}):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''


def matmul(m: int = 4096, n: int = 4096, k: int = 4096) -> PrimFunc:
    """``C = A @ B`` with ``A`` of ``m x k`` and ``B`` of ``k x n``, as a plain loop nest."""
    return parse(_TEXT.format(m=m, n=n, k=k), filename="matmul.py")


def schedule_cuda(func: PrimFunc | None = None, *, threads: int = 16, per_thread: int = 8,
                  k_tile: int = 8, k_unroll: int = 2, double_buffer: bool = True,
                  through_registers: bool = False, vector: int | None = None,
                  wide_copies: bool | None = None) -> Schedule:
    """The register-tiled shared-memory schedule of the module docstring on ``func``
    (:func:`matmul` by default); ``sch.func`` is the result, ``codegen.build(sch.func,
    target="cuda")`` its kernel.  The default tiling is the classic SGEMM's: 128 x 128
    tiles of ``C`` per block of 16 x 16 threads, 8 x 8 outputs per thread (in runs of 4,
    below), ``k`` in steps of 8, the loop over a step's 8 values unrolled by
    ``k_unroll`` (2: half the address arithmetic per multiply-add of the rolled loop,
    128 registers and no spills on sm_90 by ptxas, and a compile as quick; 8, the whole
    step, gives the fewest instructions per multiply-add but 168 registers and four
    times the compile).  ``per_thread=1`` is the plain tiling, one output per thread.
    ``double_buffer`` (the default) gives the shared tiles two stages (the module
    docstring); with ``through_registers=True`` too, each step's loads of the next tiles
    go into registers first in the step and into shared memory last
    (:mod:`polypad.schedule.register_staging`).

    ``vector`` (4 by default where it divides ``per_thread``, else 1; or 2) gives
    each thread its outputs in runs of ``vector``
    consecutive rows and columns (``threads * vector`` apart) instead of single
    ones ``threads`` apart, and stores ``A``'s tile transposed (``k`` major), so
    that each of a thread's runs of a tile is ``vector`` consecutive floats of
    shared memory, which the target loads at once (``ld.shared.v4``: a quarter
    of the load instructions per multiply-add; the tiles are aligned on
    ``4 * vector`` bytes).  ``wide_copies`` (by default where ``vector > 1``) also copies
    the tiles from global memory in runs of ``vector`` (a vectorized loop each:
    ``ld.global.v4`` where the target proves the runs aligned, and ``B``'s
    ``st.shared.v4``; ``A``'s tile is stored transposed, element by element) and
    writes ``C`` back in runs of ``vector`` columns (``st.global.v4``), as
    :mod:`codegen.cuda.wide` describes; its kernel asks each argument to start on
    ``4 * vector`` bytes, as a fresh allocation does."""
    sch = Schedule(func if func is not None else matmul())
    t, p = threads, per_thread
    if vector is None:  # runs of 4 where they divide a thread's outputs: the fastest measured
        vector = 4 if p % 4 == 0 else 1
    if wide_copies is None:
        wide_copies = vector > 1
    if vector < 1 or p % vector or (wide_copies and vector == 1):
        from polypad.errors import ArgumentValueError
        if vector == 1:
            raise ArgumentValueError("matmul.schedule_cuda: wide_copies=True moves runs of "
                                     "vector elements; give vector=4 (or 2)")
        raise ArgumentValueError(f"matmul.schedule_cuda: vector={vector} must be a positive "
                                 f"divisor of per_thread={p}")
    if through_registers:  # its staging needs each copy of a constant size
        require_multiples(sch, "C", {"i": t * p, "j": t * p, "k": k_tile},
                          "matmul.schedule_cuda with through_registers")
    i, j, k = sch.get_loops("C")
    if vector == 1:
        bi, ii, ti = sch.split(i, [None, p, t])  # row = bi * p * t + ii * t + ti
        bj, ji, tj = sch.split(j, [None, p, t])
        registers = (ii, ji)
    else:  # row = bi * p * t + io * t * vector + ti * vector + iv
        bi, io, ti, iv = sch.split(i, [None, p // vector, t, vector])
        bj, jo, tj, jv = sch.split(j, [None, p // vector, t, vector])
        registers = (io, iv, jo, jv)
    ko, ki = sch.split(k, [None, k_tile])
    sch.reorder(bi, bj, ko, ti, tj, ki, *registers)
    # The accumulators: shared while the loops are bound one by one (every state in
    # between is legal), each thread's own part of local memory at the end.
    sch.cache_write("C", "C", "shared", "C_local", at=bj)
    # The zeroing before the k loop, not under a test in its innermost iteration.
    init_ti, init_tj, *init_registers = sch.decompose_reduction("C", ko)
    sch.cache_read("C", "A", "shared", at=ko)
    sch.cache_read("C", "B", "shared", at=ko)
    if vector > 1:  # a thread's run of rows of A's tile, consecutive in shared memory
        sch.transform_layout(None, "A_shared", "lambda i, k: [k, i]")
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    sch.bind(init_ti, "threadIdx.y")
    sch.bind(init_tj, "threadIdx.x")
    for block in ("A_shared", "B_shared"):
        cooperative(sch, block, t, t, vector if wide_copies else 1)
    rows, cols = sch.get_loops("C_local")[-2:]
    if vector == 1:
        rows_out, rows_in = sch.split(rows, [None, t])
        cols_out, cols_in = sch.split(cols, [None, t])
        sch.reorder(rows_out, cols_out, rows_in, cols_in)
        runs = ()
    else:  # each thread writes back the runs it computed
        rows_out, rows_in, rows_run = sch.split(rows, [None, t, vector])
        cols_out, cols_in, cols_run = sch.split(cols, [None, t, vector])
        sch.reorder(rows_out, cols_out, rows_in, cols_in, rows_run, cols_run)
        runs = (rows_run, cols_run)
    sch.bind(rows_in, "threadIdx.y")
    sch.bind(cols_in, "threadIdx.x")
    if wide_copies and runs:  # each run of a row of C one wide store
        sch.vectorize(runs[1])
        runs = runs[:1]
    unroll_constant(sch, rows_out, cols_out, *runs)
    sch.set_scope("C_local", "local")
    for loop in (*registers, *init_registers):
        sch.unroll(loop)
    if k_unroll > 1:
        _, k_inner = sch.split(ki, [None, k_unroll])
        sch.unroll(k_inner)
    if double_buffer:
        sch.double_buffer("A_shared", through_registers=through_registers)
        sch.double_buffer("B_shared", through_registers=through_registers)
    if vector > 1:  # a run starts on a multiple of vector * 4 bytes in the tile
        for tile in ("A_shared", "B_shared"):
            sch.set_alignment(tile, 4 * vector)
    return sch


def require_multiples(sch: Schedule, block: str, tiles: dict[str, int], caller: str) -> None:
    """Refuse (:class:`~polypad.errors.ArgumentValueError`, naming the loop, its
    extent and the tile) a loop of ``block`` whose extent ``tiles`` does not divide:
    where a schedule still tiles exactly only (staging a shared copy through
    registers needs the copy's size constant, which a partial tile's is not)."""
    from polypad.errors import ArgumentValueError
    from polypad.ir.show import show
    from polypad.ir.visitor import walk

    loops = {x.var.name: x for x in walk(sch.func.body) if isinstance(x, n.For)}
    for name in sch.get_loops(block):
        var = name.split("/")[-1]
        tile = tiles.get(var)
        loop = loops.get(var)
        if tile is None or loop is None:
            continue
        if not isinstance(loop.extent, n.IntImm) or loop.extent.value % tile:
            raise ArgumentValueError(
                f"{caller}: the loop over {var} runs {show(loop.extent)} times, not a multiple "
                f"of its tile of {tile}; choose tiles that divide it, or pad the "
                "buffers to a multiple (transform_layout with a pad_value)")


def cooperative(sch: Schedule, block: str, rows: int, cols: int, lanes: int = 1) -> None:
    """The copy ``block`` of a tile into shared memory spread over the block's ``rows x
    cols`` threads (``threadIdx.y``, ``.x``): the tile's elements (its last two
    axes) in row-major order, each pass of the threads taking ``rows * cols``
    consecutive ones (a warp reads 32 consecutive elements of a row where the
    rows are that long: coalesced), the passes unrolled (the target issues their
    loads before their stores); a last partial pass is guarded.  A partial tile's
    copy, whose extents are not constants, runs the whole tile's (the buffer's last
    two extents), the elements past the tile's end guarded, so that it is spread
    over the threads in the same coalesced passes."""
    first, second = sch.get_loops(block)[-2:]
    partial = [not isinstance(_loop(sch, x).extent, n.IntImm) for x in (first, second)]
    if any(partial):
        # A partial tile's copy runs a size of its own: fused, its counter would be
        # split by that size.  Each partial axis split by the whole tile's extent
        # instead: the outer loop runs once, the inner one the whole tile's constant
        # extent under a guard at the tile's end; the inner two are then fused.
        whole = _tile_extents(sch, block, (first, second))
        outer = [None, None]
        if partial[0]:
            outer[0], first = sch.split(first, [None, whole[0]])
        if partial[1]:
            outer[1], second = sch.split(second, [None, whole[1]])
        if partial[1]:
            sch.reorder(*[x for x in outer if x is not None], first, second)
    if lanes == 1:
        passes, by_y, by_x = sch.split(sch.fuse(first, second), [None, rows, cols])
    else:  # each thread copies runs of `lanes` consecutive elements
        passes, by_y, by_x, run = sch.split(sch.fuse(first, second), [None, rows, cols, lanes])
        sch.vectorize(run)
    sch.bind(by_y, "threadIdx.y")
    sch.bind(by_x, "threadIdx.x")
    sch.unroll(passes)


def unroll_constant(sch: Schedule, *loops: str) -> None:
    """Unroll each of ``loops`` that runs a constant number of times: a partial tile's
    write-back runs as many rows as the tile has, which the loop counts at run time."""
    for loop in loops:
        if isinstance(_loop(sch, loop).extent, n.IntImm):
            sch.unroll(loop)


def _tile_extents(sch: Schedule, block: str, loops) -> tuple[int, int]:
    """The whole tile's extent along each of the copy ``block``'s ``loops``: that of the
    shared tile's axis the loop's counter indexes (``A``'s tile may be stored
    transposed, ``vector > 1``)."""
    from polypad.ir.locate import find_block
    from polypad.ir.substitute import free_vars
    from polypad.ir.visitor import walk

    store = next(x for x in walk(find_block(sch.func, block).body)
                 if isinstance(x, n.BufferStore))
    out = []
    for loop in loops:
        var = _loop(sch, loop).var
        axes = [d for d, index in enumerate(store.indices) if var in free_vars(index)]
        assert len(axes) == 1, f"the copy {block} indexes its tile by {var.name} once"
        out.append(int(store.buffer.shape[axes[0]]))
    return out[0], out[1]


def _loop(sch: Schedule, name: str):
    from polypad.ir.locate import find_loop

    return find_loop(sch.func, name)
