"""polypad.examples' GPU schedules, at small sizes, on the simulator against the plain
loop nests run by the reference executor."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
from polypad.errors import ArgumentValueError
from polypad.examples import conv_layer, matmul, row_summation
from polypad.ir.structural import assert_structural_equal
from polypad.script import script


def test_matmul_schedule_cuda():
    func = matmul.matmul(16, 32, 16)
    sch = matmul.schedule_cuda(func, threads=4, per_thread=2, k_tile=4, k_unroll=1,
                               double_buffer=False)
    kernel = codegen.build(sch.func, target="cuda")
    assert kernel.source.count("cuda.syncthreads()") == 2
    assert "def launch_0():\n    return (4, 2, 1), (4, 4, 1)" in kernel.source
    # Each thread's 2 x 2 outputs, 4 apart, in a local buffer cut to 2 x 2
    # (codegen.cuda.compact), every index a constant: a variable per element
    # (codegen.cuda.scalars), no local array.
    assert "cuda.local.array" not in kernel.source
    assert "C_local_1_1 = np.float32(0.0)" in kernel.source
    # Indexed by the unrolled counters alone (isl: thread_y is i_2), written out as
    # constants, the reads of the shared tiles folded likewise.
    # The fragments: each value of the shared tiles the thread needs, once per step of k
    # in a register, then the 2 x 2 multiply-adds on the registers.
    lines = [line.strip() for line in kernel.source.splitlines()]
    step = lines.index("for k_1 in range(4):")
    assert lines[step + 2:step + 10] == [
        "A_shared_v = A_shared[i_2, k_1]", "B_shared_v = B_shared[k_1, j_2]",
        "B_shared_v_1 = B_shared[k_1, j_2 + 4]", "A_shared_v_1 = A_shared[i_2 + 4, k_1]",
        "C_local_0_0 = C_local_0_0 + A_shared_v * B_shared_v",
        "C_local_0_1 = C_local_0_1 + A_shared_v * B_shared_v_1",
        "C_local_1_0 = C_local_1_0 + A_shared_v_1 * B_shared_v",
        "C_local_1_1 = C_local_1_1 + A_shared_v_1 * B_shared_v_1"]
    assert "thread_y" not in kernel.source
    # Every accumulator is written (zeroed) before it is read: no second zero fill.
    assert "for _z" not in kernel.source
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    # Unrolled by 2: two steps of k per iteration, each loading its own fragments.
    unrolled = matmul.schedule_cuda(func, threads=4, per_thread=2, k_tile=4, k_unroll=2,
                                    double_buffer=False)
    source = codegen.build(unrolled.func, target="cuda").source
    assert "for k_1_0 in range(2):" in source
    assert source.count("A_shared[i_2 + 4, k_1_0 * 2 + 1]") == 1
    gpu, ref = K.run_both(unrolled.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    plain = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=4, per_thread=1, k_tile=4)
    assert "C_local_0_0 = C_local_0_0 + " in codegen.build(plain.func, target="cuda").source


def test_conv_layer_schedule_cuda():
    func = conv_layer.conv_layer(n=1, ci=16, co=16, w=8, h=2)
    sch = conv_layer.schedule_cuda(func, x_threads=4, x_per_thread=2, c_threads=4,
                                   c_per_thread=2, k_tile=8, k_unroll=1)
    kernel = codegen.build(sch.func, target="cuda")
    source = kernel.source
    # Each thread's 2 x 2 outputs in registers, the tiles of the input and the filter
    # in shared memory, one pair of barriers per step of the reduction (8 channels of
    # one filter tap): before the tiles are overwritten, after they are loaded.
    assert "cuda.local.array" not in source  # conv_local, 1 x 1 x 2 x 2: 4 variables
    assert "filter_shared = cuda.shared.array((8, 1, 1, 8), np.float32)" in source
    assert "input_shared = cuda.shared.array((1, 1, 8, 8), np.float32)" in source
    lines = [line.strip() for line in source.splitlines()]
    step = lines.index("for rx_0 in range(2):")
    assert lines[step + 1] == "cuda.syncthreads()" and lines.count("cuda.syncthreads()") == 2
    inner = lines.index("for rx_1 in range(8):")
    assert lines[inner - 4] == "cuda.syncthreads()"
    assert lines[inner + 5] == ("conv_local_0_0_0_0 = conv_local_0_0_0_0 + "
                                "filter_shared_v * input_shared_v")
    assert "def launch_0():\n    return (2, 2, 1), (4, 4, 1)" in source
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[3], ref[3])


def test_conv_layer_schedule_cuda_with_its_step_unrolled():
    func = conv_layer.conv_layer(n=1, ci=8, co=4, w=4, h=1)
    sch = conv_layer.schedule_cuda(func, x_threads=2, x_per_thread=2, c_threads=2,
                                   c_per_thread=2, k_tile=8, k_unroll=2)
    source = codegen.build(sch.func, target="cuda").source
    assert "for rx_1_0 in range(4):" in source
    assert "x_2 + 2, rx_1_0 * 2 + 1]\n" in source  # the second step's fragment
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[3], ref[3])
    # The default unrolls the whole step of 8 channels (0.64x cuDNN on an H200 against
    # 0.53x by 2): no loop over the step is left, its 8 fragments written out.
    full = conv_layer.schedule_cuda(func, x_threads=2, x_per_thread=2, c_threads=2,
                                    c_per_thread=2, k_tile=8)
    source = codegen.build(full.func, target="cuda").source
    assert "for rx_1" not in source
    assert all(f"= input_shared[n_y_fused_1, 0, x_2 + 2, {k}]\n" in source
               for k in range(8))
    gpu, ref = K.run_both(full.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[3], ref[3])


def test_the_classic_sgemm_schedule_double_buffered():
    # vector=1: 128 x 128 tiles per block of 16 x 16 threads, 8 x 8 outputs per thread
    # 16 apart, tiles of 8 values of k copied in 4 passes of consecutive elements, in
    # two halves (an H200 timed it at 0.50x cuBLAS, against 0.45x with one half).
    func = matmul.matmul(128, 128, 16)  # one block
    sch = matmul.schedule_cuda(func, vector=1)
    source = codegen.build(sch.func, target="cuda").source
    assert "def launch_0():\n    return (1, 1, 1), (16, 16, 1)" in source
    for declared in ("A_shared = cuda.shared.array((2, 128, 8), np.float32)",
                     "B_shared = cuda.shared.array((2, 8, 128), np.float32)"):
        assert declared in source
    assert "cuda.local.array" not in source  # C_local's 8 x 8: 64 variables
    lines = [line.strip() for line in source.splitlines()]
    # One barrier per step, at the start of its body.
    assert lines.count("cuda.syncthreads()") == 1
    assert lines[lines.index("for k_0 in range(2):") + 1] == "cuda.syncthreads()"
    # The prologue loads the first step's tiles into half 0: 4 loads before 4 stores.
    first = lines.index("A_v = A[(ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2) // 8, "
                        "(ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2) % 8]")
    assert lines[first + 3].startswith("A_v_3 = A[96 + ")
    assert lines[first + 4].startswith("A_shared[0, ")
    # Per step of k (two per iteration): 8 + 8 fragment loads from the step's half,
    # then 64 multiply-adds.
    assert sum(line.startswith("A_shared_v") for line in lines) == 16
    assert sum(line.startswith("B_shared_v") for line in lines) == 16
    assert any(line.startswith("A_shared_v = A_shared[k_0 % 2, i_2") for line in lines)
    assert sum(line.startswith("C_local_") and "A_shared_v" in line for line in lines) == 128
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    single = matmul.schedule_cuda(func, vector=1, double_buffer=False)
    lines = codegen.build(single.func, target="cuda").source.splitlines()
    assert [line.strip() for line in lines].count("cuda.syncthreads()") == 2


def test_the_default_sgemm_schedule_moves_runs_of_4():
    """The default (an H200 timed it at 0.69x cuBLAS, against 0.50x for the classic
    one): each thread's 8 x 8 outputs in runs of 4 rows and columns, the tiles copied
    from global memory and C written back 4 floats at a time, the fragments read from
    shared memory 4 at a time, one barrier per step."""
    func = matmul.matmul(128, 128, 16)  # one block
    sch = matmul.schedule_cuda(func)
    assert_structural_equal(sch.func, matmul.schedule_cuda(func, vector=4,
                                                           wide_copies=True).func)
    source = codegen.build(sch.func, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    assert "def launch_0():\n    return (1, 1, 1), (16, 16, 1)" in source
    for declared in ("A_shared = cuda.shared.array((2, 8, 128), np.float32, alignment=ALIGN_16)",
                     "B_shared = cuda.shared.array((2, 8, 128), np.float32, alignment=ALIGN_16)"):
        assert declared in source
    assert lines.count("cuda.syncthreads()") == 1
    assert "ALIGNED_ARGUMENTS = {0: 16, 1: 16, 2: 16}" in lines
    # Each thread: 2 runs of each tile from global memory per step (the prologue's and
    # the loop's), B's stored as runs; 16 rows of C written back as runs of 4.
    assert source.count("_pp_wide.load4(A, ") == source.count("_pp_wide.load4(B, ") == 2
    assert source.count("_pp_wide.store4(B_shared, ") == 2
    assert sum(line.startswith("_pp_wide.store4(C, ") for line in lines) == 16
    # Per step of k (two per iteration): 2 + 2 runs of fragments from shared memory.
    assert source.count("_pp_wide.load4(A_shared, ") == source.count(
        "_pp_wide.load4(B_shared, ") == 4
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])


def test_the_default_row_sum_schedule_matches():
    func = row_summation.row_sum(2, 2048)  # 256 threads, 8 steps of the tree
    gpu, ref = K.run_both(row_summation.schedule_cuda(func).func, K.inputs(func),
                          reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_matmul_with_tiles_that_do_not_divide_its_extents():
    """Partial tiles at every edge (10 rows in tiles of 4, k = 7 in steps of 4; 3
    columns, one partial tile): the kernel matches the plain nest exactly, and every
    two accesses of one element on two threads are ordered by the plan's barriers."""
    from gpu_enumeration import check_by_enumeration

    for func, options in ((matmul.matmul(10, 12, 7), {}),
                          (matmul.matmul(5, 3, 6), {"k_unroll": 1, "double_buffer": False})):
        sch = matmul.schedule_cuda(func, threads=2, per_thread=2, k_tile=4, **options)
        # The shared copies run as many rows and columns as the tile has: the whole
        # tile's, fused and spread in coalesced passes, guarded where the tile ends.
        assert "T.min(3, -4 * i_0 + " in script(sch.func)
        _assert_copies_fused(sch, ("A_shared", "B_shared"))
        gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
        np.testing.assert_array_equal(gpu[2], ref[2])
        check_by_enumeration(sch.func)


def _assert_copies_fused(sch, blocks) -> None:
    """Each of the shared copies ``blocks`` is spread over the threads as one fused loop
    over the tile's elements, in passes of constant extent (a partial tile's too)."""
    from polypad.ir.locate import find_block
    from polypad.ir.nodes import For, ForKind, IntImm
    from polypad.ir.visitor import walk

    for block in blocks:
        loops = [x for x in walk(find_block(sch.func, block).body) if isinstance(x, For)]
        bound = [x for x in loops if x.kind in (ForKind.THREAD_IDX_X, ForKind.THREAD_IDX_Y)]
        assert len(bound) == 2 and all("_fused_" in x.var.name for x in bound), block
        passes = [x for x in loops if x.var.name.endswith("_fused_0")
                  or "_fused_0_" in x.var.name]
        assert len(passes) == 1 and isinstance(passes[0].extent, IntImm), block


def test_conv_layer_with_tiles_that_do_not_divide_its_extents():
    from gpu_enumeration import check_by_enumeration

    func = conv_layer.conv_layer(n=1, ci=10, co=3, w=3, h=1)  # x, c and rx all partial
    sch = conv_layer.schedule_cuda(func, x_threads=2, x_per_thread=2, c_threads=2,
                                   c_per_thread=2, k_tile=8, k_unroll=2)
    _assert_copies_fused(sch, ("input_shared", "filter_shared"))
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    for got, want in zip(gpu, ref, strict=True):
        np.testing.assert_array_equal(got, want)
    check_by_enumeration(sch.func)


def test_staging_through_registers_still_needs_tiles_that_divide():
    with pytest.raises(ArgumentValueError, match=r"matmul.schedule_cuda with through_registers: "
                                                 r"the loop over i runs 5 times, not a multiple "
                                                 r"of its tile of 4"):
        matmul.schedule_cuda(matmul.matmul(5, 8, 8), threads=2, per_thread=2, k_tile=4,
                             through_registers=True)
    small = conv_layer.conv_layer(n=1, ci=12, co=8, w=4, h=1)
    with pytest.raises(ArgumentValueError, match=r"conv_layer.schedule_cuda with "
                                                 r"through_registers: the loop over rx runs 12 "
                                                 r"times, not a multiple of its tile of 8"):
        conv_layer.schedule_cuda(small, x_threads=2, x_per_thread=2, c_threads=2,
                                 c_per_thread=2, k_tile=8, double_buffer=True,
                                 through_registers=True)
