"""What fast kernels do, in the emitted source, and the same results on the simulator:
a thread's running sum in a register across its loop (codegen.cuda.registers), the
loads of an unrolled nest first and each once (codegen.cuda.batch), the row sum's
schedule, and the device-array overlap check those rely on."""

from __future__ import annotations

import sys
from pathlib import Path

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from polypad.errors import ArgumentError
from polypad.examples import row_summation

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_cuda import elementwise_schedule  # noqa: E402


def _lines(func) -> list[str]:
    return [line.strip() for line in codegen.build(func, target="cuda").source.splitlines()]


def _elementwise() -> pp.Schedule:
    """benchmarks/bench_cuda.py's elementwise schedule, small: 8 threads a block, 4
    elements each, on a 32 x 32 array."""
    return elementwise_schedule(32, threads=8, per_thread=4)


def test_an_unrolled_elementwise_nest_loads_everything_before_it_stores():
    sch = _elementwise()
    lines = _lines(sch.func)
    start = lines.index("A_v = A[i, j_0 * 32 + j_2]")
    assert lines[start:start + 5] == [
        "A_v = A[i, j_0 * 32 + j_2]", "A_v_1 = A[i, j_0 * 32 + 8 + j_2]",
        "A_v_2 = A[i, j_0 * 32 + 16 + j_2]", "A_v_3 = A[i, j_0 * 32 + 24 + j_2]",
        "B[i, j_0 * 32 + j_2] = A_v * np.float32(2.0) + np.float32(1.0)"]
    gpu, ref = K.run_both(sch.func, K.inputs(sch.func), reference=sch.original)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_loads_of_a_buffer_the_nest_writes_stay_in_order():
    # B[j + 1] = B[j] * 2 + A[j]: each copy reads what the one before wrote; only the
    # loads of A move first.
    f = pp.parse('''
@T.prim_func
def chain(A: T.Buffer((4,), "float32"), B: T.Buffer((5,), "float32")):
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        for j in T.unroll(4):
            B[j + 1] = B[j] * T.float32(2) + A[j]
''')
    lines = _lines(f)
    start = lines.index("A_v = A[0]")
    assert lines[start + 3:start + 6] == ["A_v_3 = A[3]", "B[1] = B[0] * np.float32(2.0) + A_v",
                                          "B[2] = B[1] * np.float32(2.0) + A_v_1"]
    gpu, ref = K.run_both(f, K.inputs(f))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_a_running_sum_stays_in_a_register_for_its_loop():
    sch = row_summation.schedule_cuda(row_summation.row_sum(4, 64), threads=8, unroll=2)
    lines = _lines(sch.func)
    start = lines.index("B_rf_reg = B_rf[j_2]")
    assert lines[start:start + 7] == [
        "B_rf_reg = B_rf[j_2]", "for j_0 in range(4):", "A_v = A[i, j_0 * 16 + j_2]",
        "A_v_1 = A[i, j_0 * 16 + 8 + j_2]", "B_rf_reg = B_rf_reg + A_v",
        "B_rf_reg = B_rf_reg + A_v_1", "B_rf[j_2] = B_rf_reg"]
    # Then the tree: one barrier before each of its 3 steps, the last fold on thread 0.
    assert lines[start + 7] == "cuda.syncthreads()" and lines.count("cuda.syncthreads()") == 3
    func = row_summation.row_sum(4, 64)
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_no_register_where_another_access_or_a_barrier_is_in_the_loop():
    # The tiled matmul's k_0 loop holds barriers; the serial write-back of the block
    # row sum runs on thread 0 only: neither keeps anything in a register.
    assert not any("_reg" in line for line in _lines(K.tiled_matmul().func))
    lines = _lines(K.block_row_sum().func)
    assert "B_rf_reg = B_rf[k_1]" in lines and not any("B_reg" in line for line in lines)
    f = pp.parse('''
@T.prim_func
def two(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 2), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        for k in range(8):
            B[tx, 0] = B[tx, 0] + A[tx, k]
            B[tx, k % 2] = B[tx, k % 2] * T.float32(2)
''')
    assert not any("_reg" in line for line in _lines(f))  # B[tx, 0] and B[tx, k % 2] alias
    gpu, ref = K.run_both(f, K.inputs(f))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_written_device_arrays_may_not_overlap_another_argument():
    from numba import cuda

    kernel = codegen.build(K.ELEMENTWISE, target="cuda")
    memory = cuda.to_device(np.zeros(24, "float32"))
    with pytest.raises(ArgumentError, match="arguments 'A' and 'B' share device memory, and "
                                            "the kernel writes one of them"):
        kernel(memory[:12], memory[6:18])
    kernel(memory[:12], memory[12:])  # side by side: fine


def test_a_guarded_pass_loads_first_under_its_guard():
    f = pp.parse('''
@T.prim_func
def copy(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        for p in T.unroll(3):
            if p * 4 + tx < 10:
                B[p * 4 + tx] = A[p * 4 + tx] + T.float32(1)
''')
    lines = _lines(f)
    start = lines.index("A_v = A[tx] if tx < 10 else np.float32(0.0)")
    assert lines[start + 1:start + 5] == [
        "A_v_1 = A[4 + tx] if 4 + tx < 10 else np.float32(0.0)",
        "A_v_2 = A[8 + tx] if 8 + tx < 10 else np.float32(0.0)",
        "if tx < 10:", "B[tx] = A_v + np.float32(1.0)"]
    gpu, ref = K.run_both(f, K.inputs(f))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_a_load_in_a_lazy_arm_does_not_move_first():
    # ``T.if_then_else`` reads A[tx * 2 + j + 1] only where it is inside A: moved above
    # the store it would read A[16] on thread 7, which the program never does.
    func = pp.parse('''
@T.prim_func
def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for j in T.unroll(2):
            B[tx * 2 + j] = T.if_then_else(tx * 2 + j < 15, A[tx * 2 + j + 1], T.float32(0))
''')
    assert "A_v = A[tx * 2 + 1]" not in _lines(func)
    gpu, ref = K.run_both(func, [np.arange(1, 17, dtype="float32"), np.zeros(16, "float32")])
    np.testing.assert_array_equal(gpu[1], ref[1])
