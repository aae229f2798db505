"""``sch.double_buffer``: shared tiles in two stages, one barrier per step, checked on
the simulator against the reference executor, by enumeration of every thread, and
refused where it would change what the kernel computes or race."""

from __future__ import annotations

import dataclasses

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.examples import conv_layer, matmul
from polypad.ir.structural import assert_structural_equal

# K.tiled_matmul() with A_shared double-buffered (B_shared left as it was).
A_DOUBLE_BUFFERED = '''
@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
           C: T.Buffer((8, 8), "float32")):
    for i_0 in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            A_shared = T.alloc_buffer((2, 4, 4), "float32", scope="shared")
            with T.block("A_shared_prologue"):
                for ax0 in T.thread_binding(4, thread="threadIdx.y"):
                    for ax1 in T.thread_binding(4, thread="threadIdx.x"):
                        A_shared[0, ax0, ax1] = A[4 * i_0 + ax0, ax1]
            for k_0 in T.serial(2):
                B_shared = T.alloc_buffer((4, 4), "float32", scope="shared")
                with T.block("B_shared"):
                    for ax0 in T.thread_binding(4, thread="threadIdx.y"):
                        for ax1 in T.thread_binding(4, thread="threadIdx.x"):
                            B_shared[ax0, ax1] = B[4 * k_0 + ax0, 4 * j_0 + ax1]
                if k_0 + 1 < 2:
                    with T.block("A_shared"):
                        for ax0 in T.thread_binding(4, thread="threadIdx.y"):
                            for ax1 in T.thread_binding(4, thread="threadIdx.x"):
                                A_shared[(k_0 + 1) % 2, ax0, ax1] = A[4 * i_0 + ax0,
                                                                      4 * (k_0 + 1) + ax1]
                for i_1 in T.thread_binding(4, thread="threadIdx.y"):
                    with T.block("C"):
                        for j_1 in T.thread_binding(4, thread="threadIdx.x"):
                            for k_1 in T.serial(4):
                                if k_0 == 0 and k_1 == 0:
                                    C[i_0 * 4 + i_1, j_0 * 4 + j_1] = T.float32(0)
                                C[i_0 * 4 + i_1, j_0 * 4 + j_1] = (
                                    C[i_0 * 4 + i_1, j_0 * 4 + j_1]
                                    + A_shared[k_0 % 2, i_1, k_1] * B_shared[k_1, j_1])
'''

# A matmul whose reduction (10) is no multiple of the tile (4): the last step's tiles
# are partial, the copies guarded.
MATMUL_K_TAIL = pp.parse('''
@T.prim_func
def matmul(A: T.Buffer((8, 10), "float32"), B: T.Buffer((10, 8), "float32"),
           C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in range(10):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
''')


def _lines(func) -> list[str]:
    return [line.strip() for line in codegen.build(func, target="cuda").source.splitlines()]


def _double_buffered(sch: pp.Schedule) -> pp.Schedule:
    sch.double_buffer("A_shared")
    sch.double_buffer("B_shared")
    return sch


def test_the_rewrite_is_the_two_stage_tile():
    sch = K.tiled_matmul()
    sch.double_buffer("A_shared")
    assert_structural_equal(sch.func, pp.parse(A_DOUBLE_BUFFERED))
    # Recorded in the trace like any primitive: replaying it gives the same function.
    assert_structural_equal(sch.trace.apply_to(K.MATMUL).func, sch.func)


def test_one_barrier_per_step_and_the_result_of_the_original():
    sch = _double_buffered(K.tiled_matmul())
    lines = _lines(sch.func)
    assert "A_shared = cuda.shared.array((2, 4, 4), np.float32)" in lines
    # The prologue fills half 0 before the loop; each step fills the other half of the
    # next step under a guard, after the one barrier, and reads the current half.
    step = lines.index("for k_0 in range(2):")
    assert lines.index("A_shared[0, ax0, ax1] = A[4 * i_0 + ax0, ax1]") < step
    assert lines.index("B_shared[0, ax0_1, ax1_1] = B[ax0_1, 4 * j_0 + ax1_1]") < step
    assert lines[step + 1:step + 3] == ["cuda.syncthreads()", "if k_0 + 1 < 2:"]
    assert "A_shared[(k_0 + 1) % 2, ax0, ax1] = A[4 * i_0 + ax0, 4 * (k_0 + 1) + ax1]" \
        in lines[step:]
    assert lines[-8].endswith("A_shared[k_0 % 2, i_1, k_1] * B_shared[k_0 % 2, k_1, j_1]")
    assert lines.count("cuda.syncthreads()") == 1
    # Every read of a half finds the copy of its step (isl): no zero fill is needed.
    assert not any("_zero" in line for line in lines)
    gpu, ref = K.run_both(sch.func, K.inputs(K.MATMUL), reference=K.MATMUL)
    np.testing.assert_array_equal(gpu[2], ref[2])
    # Every thread of every block walked: each conflicting pair is ordered by the one
    # barrier, and without it some pair is not.
    assert check_by_enumeration(sch.func).count == 1
    with pytest.raises(AssertionError):
        check_by_enumeration(sch.func, drop=True)


def _k_tail() -> pp.Schedule:
    sch = pp.Schedule(MATMUL_K_TAIL)
    i, j, k = sch.get_loops("C")
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 4])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.cache_read("C", "A", "shared", at=ko)
    sch.cache_read("C", "B", "shared", at=ko)
    for loop, axis in ((io, "blockIdx.y"), (jo, "blockIdx.x"), (ii, "threadIdx.y"),
                       (ji, "threadIdx.x")):
        sch.bind(loop, axis)
    # The copies' loops over k have 4, 4 and 2 iterations: split by the 4 threads.
    rows, cols = sch.get_loops("A_shared")[-2:]
    sch.bind(rows, "threadIdx.y")
    sch.bind(sch.split(cols, [None, 4])[1], "threadIdx.x")
    rows, cols = sch.get_loops("B_shared")[-2:]
    sch.bind(sch.split(rows, [None, 4])[1], "threadIdx.y")
    sch.bind(cols, "threadIdx.x")
    return sch


def test_a_reduction_that_is_no_multiple_of_the_tile():
    sch = _k_tail()
    _double_buffered(sch)
    lines = _lines(sch.func)
    assert lines.count("cuda.syncthreads()") == 1
    assert lines[lines.index("for k_0 in range(3):") + 1] == "cuda.syncthreads()"
    # The prologue's guard, folded for the first step, and the prefetch's for the next.
    assert "if ax1_1 < 4:" in lines
    assert "if ax1_0 * 4 + ax1_1 < min(3, -4 * (k_0 + 1) + 9) + 1:" in lines
    gpu, ref = K.run_both(sch.func, K.inputs(MATMUL_K_TAIL), reference=MATMUL_K_TAIL)
    np.testing.assert_array_equal(gpu[2], ref[2])
    assert check_by_enumeration(sch.func).count == 1


def test_the_next_tiles_through_registers():
    sch = K.tiled_matmul()
    sch.double_buffer("A_shared", through_registers=True)
    sch.double_buffer("B_shared", through_registers=True)
    lines = _lines(sch.func)
    # One value per thread in registers (the local buffer cut to the thread's box, a
    # variable: codegen.cuda.scalars).
    assert "cuda.local.array" not in "\n".join(lines)
    assert lines.count("cuda.syncthreads()") == 1
    # The loads first in the step, the multiply-adds, then the stores into the other half.
    load = lines.index("A_shared_next_0_0 = A[4 * i_0 + ax0, 4 * (k_0 + 1) + ax1]")
    compute = next(k for k, line in enumerate(lines) if "* B_shared[k_0 % 2" in line)
    store = lines.index("A_shared[(k_0 + 1) % 2, ax0, ax1] = A_shared_next_0_0")
    assert lines.index("cuda.syncthreads()") < load < compute < store
    gpu, ref = K.run_both(sch.func, K.inputs(K.MATMUL), reference=K.MATMUL)
    np.testing.assert_array_equal(gpu[2], ref[2])
    assert check_by_enumeration(sch.func).count == 1
    # The local buffer is each loop of the copy: a copy whose loop's extent depends on
    # the step (a partial last tile) has no constant shape for it.
    tail = _k_tail()
    with pytest.raises(PolypadError, match=r"double_buffer of A_shared: staging through "
                                           r"registers needs the copy's loops to have "
                                           "constant bounds"):
        tail.double_buffer("A_shared", through_registers=True)


# A 4 x 4 matmul on one block, the reduction in 2 outer steps of ``steps`` steps of 4:
# the tiles are cached at the inner step, inside the outer loop (as the conv layer's
# are inside the loops over the filter's taps).
OUTER_TEXT = '''
@T.prim_func
def matmul(A: T.Buffer((4, {k}), "float32"), B: T.Buffer(({k}, 4), "float32"),
           C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in range({k}):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''


def _in_an_outer_loop(steps: int) -> tuple:
    func = pp.parse(OUTER_TEXT.format(k=8 * steps))
    sch = pp.Schedule(func)
    i, j, k = sch.get_loops("C")
    ko, ks, ki = sch.split(k, [2, steps, 4])
    sch.reorder(ko, ks, i, j, ki)
    sch.cache_read("C", "A", "shared", at=ks)
    sch.cache_read("C", "B", "shared", at=ks)
    sch.bind(i, "threadIdx.y")
    sch.bind(j, "threadIdx.x")
    for block in ("A_shared", "B_shared"):
        rows, cols = sch.get_loops(block)[-2:]
        sch.bind(rows, "threadIdx.y")
        sch.bind(cols, "threadIdx.x")
    return func, _double_buffered(sch)


def test_inside_an_outer_loop_a_barrier_before_the_prologue_exactly_where_needed():
    # Each outer step's prologue loads half 0.  With 2 inner steps the last one read
    # half 1, and the one before (half 0) is ordered before the next prologue by the
    # barrier of the last step: one barrier in all (isl decides that,
    # analyses.gpu_barrier_order).  With 3 inner steps the last one read half 0, which
    # the next prologue overwrites: a second barrier, before the prologue, is needed.
    func, even = _in_an_outer_loop(2)
    lines = _lines(even.func)
    assert lines.count("cuda.syncthreads()") == 1
    assert lines[lines.index("for k_0 in range(2):") + 1] == "# block A_shared_prologue"
    assert lines[lines.index("for k_1 in range(2):") + 1] == "cuda.syncthreads()"
    assert check_by_enumeration(even.func).count == 1
    gpu, ref = K.run_both(even.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])

    func, odd = _in_an_outer_loop(3)
    lines = _lines(odd.func)
    assert lines.count("cuda.syncthreads()") == 2
    assert lines[lines.index("for k_0 in range(2):") + 1:][:2] == [
        "cuda.syncthreads()", "# block A_shared_prologue"]
    assert lines[lines.index("for k_1 in range(3):") + 1] == "cuda.syncthreads()"
    plan = check_by_enumeration(odd.func)
    assert plan.count == 2
    # Each of the two is needed: without either, some pair of threads is unordered.
    for key, slots in plan.slots.items():
        for slot in slots:
            fewer = {k: set(v) - ({slot} if k == key else set())
                     for k, v in plan.slots.items()}
            with pytest.raises(AssertionError):
                check_by_enumeration(odd.func, plan=dataclasses.replace(plan, slots=fewer))
    gpu, ref = K.run_both(odd.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])


def test_the_matmul_example_option():
    func = matmul.matmul(8, 8, 16)
    for registers in (False, True):
        sch = matmul.schedule_cuda(func, threads=2, per_thread=2, k_tile=4, k_unroll=1,
                                   double_buffer=True, through_registers=registers)
        lines = _lines(sch.func)
        assert "A_shared = cuda.shared.array((2, 4, 4), np.float32)" in lines
        assert "B_shared = cuda.shared.array((2, 4, 4), np.float32)" in lines
        assert lines.count("cuda.syncthreads()") == 1
        assert lines[lines.index("for k_0 in range(4):") + 1] == "cuda.syncthreads()"
        assert "A_shared_v = A_shared[k_0 % 2, i_2, k_1]" in lines
        # Staged: the copy's 4 passes of the 4 threads, 4 values per thread, in registers.
        # (a variable per value: codegen.cuda.scalars)
        assert any(line.startswith("A_shared_next_3_0_0 = ") for line in lines) == registers
        gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
        np.testing.assert_array_equal(gpu[2], ref[2])
    assert check_by_enumeration(sch.func).count == 1


def test_the_conv_layer_example_option():
    # The tiles cached at the step over input channels (2 steps), inside the loops over
    # the filter's taps: one barrier in all (the even case above), the loads of the next
    # tiles staged through registers.
    func = conv_layer.conv_layer(n=1, ci=16, co=8, w=4, h=1)
    sch = conv_layer.schedule_cuda(func, x_threads=2, x_per_thread=2, c_threads=2,
                                   c_per_thread=2, k_tile=8, double_buffer=True,
                                   through_registers=True)
    lines = _lines(sch.func)
    assert lines.count("cuda.syncthreads()") == 1
    assert lines[lines.index("for rx_0 in range(2):") + 1] == "cuda.syncthreads()"
    assert any(line.startswith("input_shared_next_7_0_0 = ") for line in lines)
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[-1], ref[-1])


# A double buffer written by hand with the next step's copy in the readers' thread loop:
# with the other half (HALF = (k + 1) % 2) it only needs the barrier at the start of each
# step; writing the half being read (HALF = k % 2), thread 3 overwrites S[0, 3] while
# thread 0 may still have to read it, which no barrier can order.
FUSED = '''
@T.prim_func
def fused(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((2, 4), "float32", scope="shared")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[0, tx] = A[tx]
        for k in range(4):
            for t in range(4):
                if k + 1 < 4:
                    S[HALF, t] = A[(k + 1) * 4 + t]
                B[t] = B[t] + S[k % 2, 3 - t]
'''


def test_a_prefetch_into_the_half_being_read_is_refused_with_both_threads():
    good = pp.parse(FUSED.replace("HALF", "(k + 1) % 2"))
    sch = pp.Schedule(good)
    sch.bind("t", "threadIdx.x")
    lines = _lines(sch.func)
    assert lines.count("cuda.syncthreads()") == 1
    assert lines[lines.index("for k in range(4):") + 1] == "cuda.syncthreads()"
    gpu, ref = K.run_both(sch.func, K.inputs(good), reference=good)
    np.testing.assert_array_equal(gpu[1], ref[1])

    racy = pp.Schedule(pp.parse(FUSED.replace("HALF", "k % 2")))
    with pytest.raises(IllegalTransformError, match=r"bind of loop 't' to threadIdx.x would "
                                                    r"race: .* no barrier can order them"
                       ) as info:
        racy.bind("t", "threadIdx.x")
    cex = info.value.evidence
    assert cex.instances == (Instance("S2", {"bx": 0, "k": 0, "t": 0}),
                             Instance("S1", {"bx": 0, "k": 0, "t": 3}))
    assert cex.element == Element("S", (0, 3))
    assert cex.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (3, 0, 0)"}


def test_a_read_the_step_does_not_feed_is_refused():
    # Two of four threads load the step's tile; all four read it: S[2] and S[3] are never written
    # in a step, so each step reads the fresh allocation's zero, which two stages would
    # replace by the value two steps before.
    f = pp.parse('''
@T.prim_func
def partial(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for k in range(4):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            S[tx] = A[2 * k + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[tx] = B[tx] + S[3 - tx]
''')
    with pytest.raises(IllegalTransformError, match=r"double_buffer of S: .* which no write "
                                                    r"of the same step feeds") as info:
        pp.Schedule(f).double_buffer("S")
    assert info.value.evidence.element == Element("S", (3,))


def test_a_copy_whose_source_the_loop_writes_is_refused():
    f = pp.parse('''
@T.prim_func
def shift(A: T.Buffer((12,), "float32"), B: T.Buffer((4,), "float32")):
    for k in range(2):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[tx] = A[4 * k + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[4 * k + 4 + tx] = S[tx] + T.float32(1)
''')
    with pytest.raises(IllegalTransformError, match=r"double_buffer of S: .* writes A in the "
                                                    r"loop, and the copy of the next step, "
                                                    r"which reads it, would run before it"
                       ) as info:
        pp.Schedule(f).double_buffer("S")
    assert info.value.evidence.element == Element("A", (4,))


def test_what_is_no_shared_tile_cached_at_a_loop_is_refused():
    with pytest.raises(PolypadError, match=r"double_buffer of A: the buffer is in 'global' "
                                           "memory"):
        pp.Schedule(K.MATMUL).double_buffer("A")
    with pytest.raises(PolypadError, match=r"double_buffer of S: it is allocated outside "
                                           "every loop"):
        pp.Schedule(K.REVERSE_IN_ONE_LOOP).double_buffer("S")
    # A copy from another tile of the step: its first step could not run before the loop
    # (and the next step's copy would read this step's tile).
    two = pp.parse('''
@T.prim_func
def two(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for k in range(2):
        R = T.alloc_buffer((4,), "float32", scope="shared")
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            R[tx] = A[4 * k + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[tx] = R[3 - tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[tx] = B[tx] + S[tx]
''')
    with pytest.raises(PolypadError, match=r"double_buffer of S: the copy reads R, which is "
                                           "allocated in the loop 'k'"):
        pp.Schedule(two).double_buffer("S")
    # A block loop is no step: the stages alternate over a serial loop.
    with pytest.raises(PolypadError, match=r"the loop 'bx' around it is blockIdx.x"):
        pp.Schedule(K.REVERSE).double_buffer("S")
