"""GPU schedules that the real TVM 0.27 makes and prints, read by polypad and run by the
cuda target on Numba's simulator, each against the reference executor and numpy.

The text is made at test time by TVM itself (:mod:`tvm_gpu_corpus`): tile copies
bound to the threads of the loops around them (the cooperative fetch), tiles
declared at the root block, vthreads of one, ``T.Mul(0, 16)``.  Without TVM the
file skips, except in CI, where TVM is part of the test extra.
"""

from __future__ import annotations

import functools
import os

import cuda_kernels as K
import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("tvm", reason='TVM is not installed: pip install "polypad[tvm]"')

import tvm_gpu_corpus as corpus  # noqa: E402

import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from analyses.gpu_sync import plan_barriers  # noqa: E402
from polypad.errors import BuildError, RaceError  # noqa: E402
from polypad.ir.structural import assert_structural_equal  # noqa: E402
from polypad.transform.place_gpu_allocations import place_gpu_allocations  # noqa: E402
from polypad.transform.unify_thread_bindings import unify_thread_bindings  # noqa: E402


@functools.cache
def _built(name: str):
    """TVM's text of ``name``, the function polypad reads from it, its cuda kernel, the
    inputs, and the arguments after the cuda kernel and after the reference executor."""
    text = getattr(corpus, name)()
    (func,) = pp.parse(text).funcs
    kernel = codegen.build(func, target="cuda")
    args = K.inputs(func)
    gpu, ref = K.run_both(func, args)
    return text, func, kernel, args, gpu, ref


def _same(gpu, ref, want):
    np.testing.assert_array_equal(gpu[-1], ref[-1])
    np.testing.assert_array_equal(gpu[-1], want)


def _lines(kernel) -> list[str]:
    return [line.strip() for line in kernel.source.splitlines()]


def test_elementwise_split_and_bound_to_blocks_and_threads():
    text, _, kernel, (a, b, _), gpu, ref = _built("elementwise_add")
    assert 'for i_0 in T.thread_binding(4, thread="blockIdx.x"):' in text
    _same(gpu, ref, a + b)
    assert "def launch_0():\n    return (4, 1, 1), (16, 1, 1)\n" in kernel.source
    assert "syncthreads" not in kernel.source


def test_the_tutorial_matmul_with_shared_tiles_runs_with_one_barrier_per_step():
    text, func, kernel, (a, b, _), gpu, ref = _built("tiled_matmul")
    # TVM's cooperative fetch: the copies' loops are bound to the threads of the loops
    # around them, and the tiles are declared at the root block.
    assert 'A_shared = T.sblock_alloc_buffer((8, 8), scope="shared")' in text
    assert text.count('thread_binding(4, thread="threadIdx.y")') == 3
    _same(gpu, ref, a @ b)
    lines = _lines(kernel)
    step = lines.index("for k_0 in range(2):")
    barrier = lines.index("cuda.syncthreads()")
    # The one barrier: after both copies of the step, before the first read of a tile.
    # None at the start of the step: each step copies into other columns of the
    # (uncompacted) tiles, so no reader of the last step can see its element overwritten.
    assert lines.count("cuda.syncthreads()") == 1
    assert step < lines.index("B_shared[v0_1, v1_1] = B[v0_1, v1_1]") < barrier
    assert barrier < lines.index("for k_1 in range(4):")
    assert "ax0 = tid_y" in lines and "i_1 = tid_y" in lines


def test_the_cooperative_fetch_becomes_the_copies_beside_the_readers():
    _, func, *_ = _built("tiled_matmul")
    rewritten = unify_thread_bindings(place_gpu_allocations(func))
    expected = pp.parse('''
@T.prim_func(s_tir=True)
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
         C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i_0 in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            A_shared = T.alloc_buffer((8, 8), "float32", scope="shared")
            B_shared = T.alloc_buffer((8, 8), "float32", scope="shared")
            for k_0 in range(2):
                for ax0 in T.thread_binding(4, thread="threadIdx.y"):
                    for ax1 in T.thread_binding(4, thread="threadIdx.x"):
                        with T.sblock("A_shared"):
                            v0 = T.axis.spatial(8, i_0 * 4 + ax0)
                            v1 = T.axis.spatial(8, k_0 * 4 + ax1)
                            T.reads(A[v0, v1])
                            T.writes(A_shared[v0, v1])
                            A_shared[v0, v1] = A[v0, v1]
                for ax0 in T.thread_binding(4, thread="threadIdx.y"):
                    for ax1 in T.thread_binding(4, thread="threadIdx.x"):
                        with T.sblock("B_shared"):
                            v0 = T.axis.spatial(8, k_0 * 4 + ax0)
                            v1 = T.axis.spatial(8, j_0 * 4 + ax1)
                            T.reads(B[v0, v1])
                            T.writes(B_shared[v0, v1])
                            B_shared[v0, v1] = B[v0, v1]
                for i_1 in T.thread_binding(4, thread="threadIdx.y"):
                    for j_1 in T.thread_binding(4, thread="threadIdx.x"):
                        for k_1 in range(4):
                            with T.sblock("C"):
                                v_i = T.axis.spatial(8, i_0 * 4 + i_1)
                                v_j = T.axis.spatial(8, j_0 * 4 + j_1)
                                v_k = T.axis.reduce(8, k_0 * 4 + k_1)
                                T.reads(A_shared[v_i, v_k], B_shared[v_k, v_j])
                                T.writes(C[v_i, v_j])
                                with T.init():
                                    C[v_i, v_j] = T.float32(0)
                                C[v_i, v_j] = C[v_i, v_j] + A_shared[v_i, v_k] * B_shared[v_k, v_j]
''')
    assert_structural_equal(rewritten, expected)
    # The reference executor agrees that the rewrite computes the same.
    _, _, _, args, _, ref = _built("tiled_matmul")
    out = [x.copy() for x in args]
    codegen.build(rewritten, target="python")(*out)
    np.testing.assert_array_equal(out[2], ref[2])
    assert plan_barriers(rewritten).count == 1


def test_dlight_fallback_masks_the_threads_past_the_end():
    text, _, kernel, (a, b, _), gpu, ref = _built("dlight_fallback")
    assert "T.where(ax0_fused_0 * 1024 + ax0_fused_1 < 64)" in text
    _same(gpu, ref, a * b)
    assert "def launch_0():\n    return (1, 1, 1), (1024, 1, 1)\n" in kernel.source


def test_dlight_matmul_with_padded_tiles_vthreads_and_register_tiles():
    text, _, kernel, (a, b, _), gpu, ref = _built("dlight_matmul")
    assert 'T.thread_binding(1, thread="vthread.y")' in text
    assert 'C_reindex_pad_local = T.sblock_alloc_buffer((1, 32, 64), scope="local")' in text
    _same(gpu, ref, a @ b)
    lines = _lines(kernel)
    # One step of k: one barrier, between the copies of the padded tiles and the reads.
    assert lines.count("cuda.syncthreads()") == 1
    copy_b = next(k for k, line in enumerate(lines) if line.startswith("B_reindex_pad_shared["))
    update = lines.index("# block C_update")
    assert copy_b < lines.index("cuda.syncthreads()") < update
    assert "def launch_0():\n    return (1, 1, 1), (8, 16, 1)\n" in kernel.source


def test_a_row_sum_bound_to_threads_runs_as_tvms_tree():
    text, _, kernel, (a, _), gpu, ref = _built("row_sum_bound_to_threads")
    assert 'for k in T.thread_binding(32, thread="threadIdx.x"):' in text
    _same(gpu, ref, a.sum(axis=1))
    np.testing.assert_array_equal(gpu[-1], corpus.tvm_peer("row_sum_bound_to_threads", [a, _])[-1])
    lines = _lines(kernel)
    # Every thread offers its value, a tree of 5 steps over shared memory with a barrier
    # before each and one before the total is read; thread 0 adds it to the init value.
    assert "atomic" not in kernel.source
    assert lines.count("cuda.syncthreads()") == 6
    assert lines.index("red_buf0[k] = A[v_i, v_k]") < lines.index("cuda.syncthreads()")
    back = lines.index("if k_1 == 0:")
    assert lines[back + 1] == "B[v_i] = np.float32(0.0) + B_cross_thread_0"


def test_tvms_argmax_block_bound_to_threads_runs_as_one_two_value_tree():
    text, _, kernel, (x, _), gpu, ref = _built("argmax_bound_to_threads")
    assert "T.Select(" in text and 'for k1 in T.thread_binding(16, thread="threadIdx.x")' in text
    # Small integers: many ties, each resolved to the first index, as the serial program.
    assert any(len(set(row)) < len(row) for row in x)
    _same(gpu, ref, np.argmax(x, axis=1).astype("int32"))
    np.testing.assert_array_equal(gpu[-1], corpus.tvm_peer("argmax_bound_to_threads", [x, _])[-1])
    assert "atomic" not in kernel.source
    assert kernel.source.count("cuda.syncthreads()") == 5


def test_tvms_split_row_sum_folds_each_threads_passes_first():
    text, _, kernel, (a, _), gpu, ref = _built("row_sum_in_passes")
    assert "for k_0 in range(2):" in text
    _same(gpu, ref, a.sum(axis=1))
    np.testing.assert_array_equal(gpu[-1], corpus.tvm_peer("row_sum_in_passes", [a, _])[-1])
    lines = _lines(kernel)
    # The serial loop now runs inside the thread: its partial sum in a register, first.
    fold = lines.index("for k_0 in range(2):")
    assert lines[fold + 4:fold + 8] == ["if k_0 == 0:", "B_in_thread_0 = A[v_i, v_k]", "else:",
                                        "B_in_thread_0 = B_in_thread_0 + A[v_i, v_k]"]
    assert fold < lines.index("red_buf0[k_1] = B_in_thread_0") < lines.index("cuda.syncthreads()")


def test_tvms_uneven_split_row_sum_masks_its_last_pass():
    text, _, kernel, (a, _), gpu, ref = _built("row_sum_uneven_passes")
    assert "T.where(k_0 * 16 + k_1 < 40)" in text
    _same(gpu, ref, a.sum(axis=1))
    np.testing.assert_array_equal(gpu[-1],
                                  corpus.tvm_peer("row_sum_uneven_passes", [a, _])[-1])
    lines = _lines(kernel)
    # Each thread's partial sum starts at the identity, 0 (Z3 proves it one), and skips
    # its masked passes.
    fold = lines.index("for k_0 in range(3):")
    assert lines[fold - 1] == "B_in_thread_0 = np.float32(0.0)"
    assert "atomic" not in kernel.source


def test_dlight_reduction_runs_its_partial_sums_and_their_tree():
    _, _, kernel, (a, _), gpu, ref = _built("dlight_reduction")
    _same(gpu, ref, a.sum(axis=1))
    lines = _lines(kernel)
    # The partial sums in registers, then TVM's tree over 64 threads.
    assert "atomic" not in kernel.source
    assert lines.count("cuda.syncthreads()") == 7
    assert lines.index("cuda.syncthreads()") > next(
        k for k, line in enumerate(lines) if line.startswith("red_buf0[ax0] = B_rf_local["))


def test_dlight_gemv_with_a_shared_tile_and_a_cross_thread_total():
    text, _, kernel, (w, v, _), gpu, ref = _built("dlight_gemv")
    assert "T.Mul(0, 16)" in text
    _same(gpu, ref, w @ v)
    lines = _lines(kernel)
    # The copy of W's tile, a barrier before its reads; then the total of each row
    # (threadIdx.y) over threadIdx.x as a tree: the rows past the end (T.where on
    # threadIdx.y, all threads of a row alike) offer zeros and store nothing.
    assert "atomic" not in kernel.source
    assert lines.count("cuda.syncthreads()") == 7
    first = lines.index("cuda.syncthreads()")
    assert lines.index("W_shared[v0, v1] = W[v0, v1]") < first < lines.index("# block G_rf_update")
    assert lines[lines.index("# block G_write_back") + 1] == (
        "if ax1_fused_0_ax1_fused_1_fused % 16 < 2 and ax0_4 == 0:")


def test_a_cross_thread_product_has_no_atomic_and_runs_as_a_tree():
    text = corpus.row_sum_bound_to_threads()
    text = text.replace("B[v_i] + A[v_i, v_k]", "B[v_i] * A[v_i, v_k]").replace(
        "B[v_i] = T.float32(0.0)", "B[v_i] = T.float32(1.0)")
    (func,) = pp.parse(text).funcs
    args = K.inputs(func)
    args[0] = np.where(args[0] == 0, 1, np.sign(args[0])).astype("float32")  # exact products
    gpu, ref = K.run_both(func, args)
    _same(gpu, ref, args[0].prod(axis=1))
    assert "atomic" not in codegen.build(func, target="cuda").source


def test_a_cross_thread_block_under_a_thread_condition_is_refused_by_name():
    # T.where on the reduction's thread: the masked threads would offer the combiner's
    # identity, which the init (2) is not; no atomic for a product either.
    text = corpus.row_sum_bound_to_threads()
    text = text.replace("B[v_i] + A[v_i, v_k]", "B[v_i] * A[v_i, v_k]").replace(
        "B[v_i] = T.float32(0.0)", "B[v_i] = T.float32(2.0)").replace(
        "T.reads(A[v_i, v_k])", "T.where(k < 30)\n                    T.reads(A[v_i, v_k])")
    (func,) = pp.parse(text).funcs
    with pytest.raises(RaceError) as info:
        codegen.build(func, target="cuda")
    assert str(info.value).startswith(
        "cannot build 'main' for cuda: block 'B' is a cross-thread reduction: its reduction "
        "axis 'v_k' is bound to loop 'k' on threadIdx.x, which TVM lowers to "
        "tvm_thread_allreduce; the cuda target does not lower this block to "
        "tvm_thread_allreduce")
    assert info.value.evidence.element.buffer == "B"


COPY = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        for ax in T.thread_binding(EXTENT, thread="threadIdx.x"):
            S[ax] = A[ax]
        READER
'''


def test_a_reversed_read_of_a_cooperative_copy_gets_its_barrier():
    func = pp.parse(COPY.replace("EXTENT", "4").replace("READER", "B[tx] = S[3 - tx]"))
    kernel = codegen.build(func, target="cuda")
    lines = _lines(kernel)
    assert lines.count("cuda.syncthreads()") == 1
    assert (lines.index("S[ax] = A[ax]") < lines.index("cuda.syncthreads()")
            < lines.index("B[tx] = S[3 - tx]"))
    args = K.inputs(func)
    gpu, ref = K.run_both(func, args)
    _same(gpu, ref, args[0][::-1])


@pytest.mark.parametrize("extent, reader, message", [
    ("2", "B[tx] = S[3 - tx]",
     "S1(tx=0) reads S[3], which no copy wrote before it in the same iteration of 'tx'"),
    ("4", "B[0] = B[0] + S[tx]",
     "the rest of it cannot run its iterations on threads in any order: the loop over tx "
     "carries a flow dependence: S0(tx=1) reads B[0], which S0(tx=0) writes"),
    ("4", "A[tx] = S[tx] + T.float32(1)", "S1(tx=0) writes A[0], which a copy reads, inside 'tx'"),
    ("tx + 1", "B[tx] = S[tx]", "the copy in loop 'ax' uses 'tx'"),
])
def test_a_cooperative_copy_that_would_compute_otherwise_is_refused(extent, reader, message):
    func = pp.parse(COPY.replace("EXTENT", extent).replace("READER", reader))
    with pytest.raises(BuildError) as info:
        codegen.build(func, target="cuda")
    assert str(info.value).startswith(
        "loop 'tx' is bound to threadIdx.x and holds loops bound to threadIdx.x too (a "
        "cooperative copy, run once with each iteration on its own thread as TVM does), but ")
    assert message in str(info.value)


def test_a_root_tile_whose_value_crosses_blocks_stays_where_it_is_and_is_refused():
    func = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if bx == 0:
                S[tx] = A[tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = S[tx]
''')
    assert place_gpu_allocations(func) is func  # block 1 reads what block 0 wrote
    with pytest.raises(RaceError, match="private to each block"):
        codegen.build(func, target="cuda")


def test_polypad_binds_a_loop_of_tvm_text_with_cooperative_copies():
    # TVM's tutorial matmul with the block loop over columns left serial: sch.bind checks
    # the kernel as the cuda target reads it, cooperative copies included.
    text = corpus.tiled_matmul().replace(
        'for j_0 in T.thread_binding(2, thread="blockIdx.x"):', "for j_0 in range(2):")
    (func,) = pp.parse(text).funcs
    sch = pp.Schedule(func)
    sch.bind("j_0", "blockIdx.x")
    _, built, kernel, args, _, ref = _built("tiled_matmul")
    assert_structural_equal(sch.func, built)
    gpu, _ = K.run_both(sch.func, args)
    np.testing.assert_array_equal(gpu[2], ref[2])


@pytest.mark.parametrize("mode", ["fast", "clip"])
def test_tvm_take_bound_to_blocks_and_threads_gathers_without_a_barrier(mode):
    text = corpus.take(mode)
    assert 'for ax0 in T.thread_binding(4, thread="blockIdx.x"):' in text
    (func,) = pp.parse(text).funcs
    kernel = codegen.build(func, target="cuda")
    assert "syncthreads" not in kernel.source
    table = np.arange(128, dtype="float32").reshape(16, 8)
    rows = np.array([3, 15, 0, 7], "int32") if mode == "fast" else np.array(
        [3, 16, -1, 7], "int32")  # clip clamps the rows outside the table
    gpu, ref = K.run_both(func, [table, rows, np.zeros((4, 8), "float32")])
    _same(gpu, ref, table[np.clip(rows, 0, 15)])
    if mode == "fast":
        with pytest.raises(pp.errors.BoundsCheckError, match=r"A\[16, 0\] is outside"):
            kernel(table, np.array([3, 16, 0, 7], "int32"), np.zeros((4, 8), "float32"))
