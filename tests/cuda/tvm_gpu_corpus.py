"""GPU schedules made by the real TVM 0.27, printed as TVM prints them (``mod.script()``).

Each function here builds a small TE function, schedules it for a GPU with
``tvm.s_tir.Schedule`` (binding loops to ``blockIdx``/``threadIdx``, shared
tiles by ``cache_read`` + ``compute_at``) or with a dlight rule
(``tvm.s_tir.dlight.gpu``) under ``tvm.target.Target("cuda")`` (no GPU
needed to schedule), and returns TVM's text.  Sizes are tiny: the kernels run
on Numba's CUDA simulator, one Python thread per GPU thread, and the
reference executor runs every redundant copy of TVM's cooperative fetch.
"""

from __future__ import annotations

import functools


def _te_matmul(m: int, n: int, k: int):
    from tvm import te

    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def _te_row_sum(rows: int, cols: int):
    from tvm import te

    x = te.placeholder((rows, cols), name="A")
    r = te.reduce_axis((0, cols), name="k")
    return te.create_prim_func([x, te.compute((rows,), lambda i: te.sum(x[i, r], axis=r),
                                               name="B")])


@functools.cache
def elementwise_add() -> str:
    """``C = A + B`` on 64 elements, split by 16 and bound to blockIdx.x/threadIdx.x."""
    from tvm import s_tir, te

    a = te.placeholder((64,), name="A")
    b = te.placeholder((64,), name="B")
    s = s_tir.Schedule(te.create_prim_func([a, b, te.compute((64,), lambda i: a[i] + b[i],
                                                             name="C")]))
    (i,) = s.get_loops(s.get_sblock("C"))
    bx, tx = s.split(i, [None, 16])
    s.bind(bx, "blockIdx.x")
    s.bind(tx, "threadIdx.x")
    return s.mod.script()


@functools.cache
def tiled_matmul() -> str:
    """TVM's tutorial schedule on 8 x 8 x 8: 4 x 4 tiles of C per block, one output per
    thread, the tiles of A and B cached in shared memory at the outer k loop and copied
    by loops bound to the same threads (TVM's cooperative fetch)."""
    from tvm import s_tir

    s = s_tir.Schedule(_te_matmul(8, 8, 8))
    c = s.get_sblock("C")
    i, j, k = s.get_loops(c)
    by, ty = s.split(i, [None, 4])
    bx, tx = s.split(j, [None, 4])
    ko, ki = s.split(k, [None, 4])
    s.reorder(by, bx, ty, tx, ko, ki)
    for loop, axis in ((by, "blockIdx.y"), (bx, "blockIdx.x"), (ty, "threadIdx.y"),
                       (tx, "threadIdx.x")):
        s.bind(loop, axis)
    for index in (0, 1):
        tile = s.cache_read(c, index, "shared")
        s.compute_at(tile, ko)
        rows, cols = s.get_loops(tile)[-2:]
        s.bind(rows, "threadIdx.y")
        s.bind(cols, "threadIdx.x")
    return s.mod.script()


@functools.cache
def row_sum_bound_to_threads() -> str:
    """A 4 x 32 row sum, a block per row and the reduction axis bound to threadIdx.x
    (a cross-thread reduction: TVM lowers it to tvm_thread_allreduce, and so does
    polypad's cuda target)."""
    from tvm import s_tir

    s = s_tir.Schedule(_te_row_sum(4, 32))
    i, k = s.get_loops(s.get_sblock("B"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    return s.mod.script()


def _dlight(func, rule) -> str:
    import tvm

    with tvm.target.Target("cuda"):
        return tvm.s_tir.dlight.ApplyDefaultSchedule(rule)(tvm.IRModule({"main": func})).script()


@functools.cache
def dlight_fallback() -> str:
    """dlight's Fallback rule on an elementwise product of 64: one block of 1024 threads,
    the extra ones masked by ``T.where``."""
    from tvm import te
    from tvm.s_tir import dlight

    a = te.placeholder((64,), name="A")
    b = te.placeholder((64,), name="B")
    c = te.compute((64,), lambda i: a[i] * b[i], name="C")
    return _dlight(te.create_prim_func([a, b, c]), dlight.gpu.Fallback())


@functools.cache
def dlight_matmul() -> str:
    """dlight's Matmul rule on 16 x 16 x 16: tiles padded to 32 x 64, vthreads of one,
    cooperative copies into shared memory, a register tile per thread."""
    from tvm.s_tir import dlight

    return _dlight(_te_matmul(16, 16, 16), dlight.gpu.Matmul())


@functools.cache
def dlight_reduction() -> str:
    """dlight's Reduction rule on a 4 x 64 row sum (rfactor into registers, then a
    cross-thread reduction)."""
    from tvm.s_tir import dlight

    return _dlight(_te_row_sum(4, 64), dlight.gpu.Reduction())


@functools.cache
def dlight_gemv() -> str:
    """dlight's GEMV rule on 2 x 16 times 16 (a shared tile of W copied by 16 x 32
    threads, partial sums in registers, then a cross-thread reduction; TVM prints
    ``T.Mul(0, 16)`` in its ``T.where``)."""
    from tvm import te
    from tvm.s_tir import dlight

    w = te.placeholder((2, 16), name="W")
    v = te.placeholder((16,), name="V")
    r = te.reduce_axis((0, 16), name="k")
    g = te.compute((2,), lambda i: te.sum(w[i, r] * v[r], axis=r), name="G")
    return _dlight(te.create_prim_func([w, v, g]), dlight.gpu.GEMV())


@functools.cache
def take(mode: str) -> str:
    """``topi.take`` of 4 rows of a 16 x 8 table (an embedding lookup: the row index is
    read from ``X``) in TVM's ``mode`` (``"fast"``: as given; ``"clip"``: clamped into
    the table), one block per row and one thread per column."""
    from tvm import s_tir, te, topi

    a = te.placeholder((16, 8), name="A")
    x = te.placeholder((4,), name="X", dtype="int32")
    s = s_tir.Schedule(te.create_prim_func([a, x, topi.take(a, x, axis=0, mode=mode)]))
    (block,) = [b for b in s.get_child_blocks(s.get_sblock("root"))]
    i, j = s.get_loops(block)
    s.bind(i, "blockIdx.x")
    s.bind(j, "threadIdx.x")
    return s.mod.script()


def _te_argmax(rows: int, cols: int):
    from tvm import te, topi

    x = te.placeholder((rows, cols), name="x")
    return te.create_prim_func([x, topi.argmax(x, axis=1)])


@functools.cache
def argmax_bound_to_threads() -> str:
    """TOPI's argmax of 4 rows of 16, a block per row and the reduction axis bound to
    threadIdx.x: the two-value block (index and value, TOPI's ``T.Select`` combine)
    that TVM's LowerCrossThreadReduction makes one ``tvm_thread_allreduce``."""
    from tvm import s_tir

    s = s_tir.Schedule(_te_argmax(4, 16))
    i, k = s.get_loops(s.get_sblock("x_red_temp"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    return s.mod.script()


def _row_sum_in_passes(cols: int, threads: int) -> str:
    """A 4 x ``cols`` row sum whose ``threads`` threads cover the reduction in passes:
    ``k = ko * threads + tx``, ``ko`` serial outside the thread loop."""
    from tvm import s_tir

    s = s_tir.Schedule(_te_row_sum(4, cols))
    i, k = s.get_loops(s.get_sblock("B"))
    _, tx = s.split(k, [None, threads])
    s.bind(i, "blockIdx.x")
    s.bind(tx, "threadIdx.x")
    return s.mod.script()


@functools.cache
def row_sum_in_passes() -> str:
    """A 4 x 64 row sum in two passes of 32 threads (TVM's in-thread then cross-thread
    reduction)."""
    return _row_sum_in_passes(64, 32)


@functools.cache
def row_sum_uneven_passes() -> str:
    """A 4 x 40 row sum in passes of 16 threads: the split does not divide, and TVM masks
    the last pass's threads past the end with ``T.where``."""
    return _row_sum_in_passes(40, 16)


#: The unscheduled TE function behind each schedule above that TVM's llvm build runs
#: as the peer (:func:`tvm_peer`).
UNSCHEDULED = {
    "row_sum_bound_to_threads": lambda: _te_row_sum(4, 32),
    "argmax_bound_to_threads": lambda: _te_argmax(4, 16),
    "row_sum_in_passes": lambda: _te_row_sum(4, 64),
    "row_sum_uneven_passes": lambda: _te_row_sum(4, 40),
}


@functools.cache
def _peer(name: str):
    import tvm

    return tvm.compile(tvm.IRModule({"main": UNSCHEDULED[name]()}), target="llvm")


def tvm_peer(name: str, args: list) -> list:
    """The arguments after TVM's own llvm build of the unscheduled function of ``name``
    ran on copies of ``args``."""
    import tvm

    tensors = [tvm.runtime.tensor(a.copy(), tvm.cpu()) for a in args]
    _peer(name)["main"](*tensors)
    return [t.numpy() for t in tensors]
