"""Wide loads and stores: a vectorized loop of 2 or 4 lanes whose runs the ``cuda``
target proves aligned moves each run with one call of ``codegen.cuda.wide``
(``ld.global.v4.f32`` on a GPU), and the elementwise schedule's ``vector`` option.

On the simulator, where the calls move the elements one by one and check at every
call that the run starts on a multiple of its length: the printed schedule, the
emitted module, exact runs against the plain nest, partial tiles, what stays scalar
and the call's refusal of a misaligned device array.  The instructions themselves are
in ``benchmarks/bench_cuda_compile.py``'s PTX counts (``global v4/v2/1``).
"""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from polypad.errors import ArgumentError, ArgumentValueError
from polypad.examples import elementwise
from polypad.ir.structural import structural_equal

RUNS_OF_4 = '''
@T.prim_func
def scale(A: T.Buffer((2, 32), "float32"), B: T.Buffer((2, 32), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            for j_2 in T.thread_binding(2, thread="threadIdx.x"):
                for j_1 in T.unroll(2):
                    for j_3 in T.vectorized(4):
                        B[i, j_0 * 16 + j_1 * 8 + j_2 * 4 + j_3] = \\
                            A[i, j_0 * 16 + j_1 * 8 + j_2 * 4 + j_3] * T.float32(2) + T.float32(1)
'''


def _lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()]


def _value(name: str) -> str:
    return f"{name} * np.float32(2.0) + np.float32(1.0)"


def test_elementwise_in_runs_of_4():
    func = elementwise.scale(2, 32)
    sch = elementwise.schedule_cuda(func, threads=2, per_thread=8, vector=4)
    assert structural_equal(sch.func, pp.parse(RUNS_OF_4))
    source = codegen.build(sch.func, target="cuda").source
    lines = _lines(source)
    assert "from codegen.cuda import wide as _pp_wide  # wide accesses, version 1" in lines
    start = lines.index("j_2 = tid_x") + 1
    assert lines[start:start + 4] == [
        "A_w, A_w_1, A_w_2, A_w_3 = _pp_wide.load4(A, (i, j_0 * 16 + j_2 * 4))",
        "A_w_4, A_w_5, A_w_6, A_w_7 = _pp_wide.load4(A, (i, j_0 * 16 + 8 + j_2 * 4))",
        "_pp_wide.store4(B, (i, j_0 * 16 + j_2 * 4), "
        + ", ".join(_value(f"A_w{s}") for s in ("", "_1", "_2", "_3")) + ")",
        "_pp_wide.store4(B, (i, j_0 * 16 + 8 + j_2 * 4), "
        + ", ".join(_value(f"A_w_{k}") for k in range(4, 8)) + ")"]
    assert "ALIGNED_ARGUMENTS = {0: 16, 1: 16}" in lines
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])


@pytest.mark.parametrize("width, vector, wide", [
    (20, 4, "load4"),  # a partial last tile: each run whole or not at all, under its guard
    (18, 2, "load2"),
    (18, 4, None),  # a row of 18: no run of 4 starts on a multiple of 4 in every row
])
def test_elementwise_partial_tiles(width, vector, wide):
    func = elementwise.scale(3, width)
    sch = elementwise.schedule_cuda(func, threads=2, per_thread=8, vector=vector)
    source = codegen.build(sch.func, target="cuda").source
    if wide is None:
        assert "_pp_wide" not in source and "ALIGNED_ARGUMENTS" not in source
    else:
        assert f"if j_0 * 16 + j_2 * {vector} < {width}:" in _lines(source)
        assert f"_pp_wide.{wide}(A, (i, j_0 * 16 + j_2 * {vector}))" in source
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_the_default_elementwise_has_no_wide_access():
    source = codegen.build(elementwise.schedule_cuda(elementwise.scale(2, 64), threads=4,
                                                     per_thread=4).func, target="cuda").source
    assert "_pp_wide" not in source and "ALIGNED_ARGUMENTS" not in source


RUN = '''
@T.prim_func
def run(A: T.Buffer((20,), "float32"), B: T.Buffer((16,), "float32")):
    for t in T.thread_binding(4, thread="threadIdx.x"):
        for v in T.vectorized(4):
            B[4 * t + v] = {value}
'''


@pytest.mark.parametrize("value, loads, stores", [
    ("A[4 * t + v] * T.float32(3)", 1, 1),
    ("A[4 * t + v + 1]", 0, 1),  # the runs of A start at 1, 5, ...: scalar loads
    ("A[4 * t + 3 - v]", 0, 1),  # reversed: no run
    ("A[4 * t] + A[4 * t + v]", 1, 1),  # one element for every lane, and a run
    ("B[4 * t + v] + A[4 * t + v]", 1, 0),  # B is written: its loads stay, and the store
])
def test_what_goes_wide(value, loads, stores):
    func = pp.parse(RUN.format(value=value))
    source = codegen.build(func, target="cuda").source
    assert (source.count("_pp_wide.load4("), source.count("_pp_wide.store4(")) == \
        (loads, stores)
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_a_vectorized_loop_of_other_lengths_stays_a_loop():
    func = pp.parse(RUN.format(value="A[4 * t + v]").replace("T.vectorized(4)",
                                                              "T.vectorized(3)"))
    source = codegen.build(func, target="cuda").source
    assert "_pp_wide" not in source and "for v in range(3):" in source


SHARED = '''
@T.prim_func
def stage(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((16,), "float32", scope="shared"{align})
        for t in T.thread_binding(4, thread="threadIdx.x"):
            for v in T.vectorized(4):
                S[4 * t + v] = A[4 * t + v] * T.float32(2)
        for t2 in T.thread_binding(16, thread="threadIdx.x"):
            B[t2] = S[15 - t2]
'''


@pytest.mark.parametrize("align, stores", [("", 0), (", align=16", 1), (", align=8", 0)])
def test_a_shared_buffer_goes_wide_where_it_is_aligned(align, stores):
    func = pp.parse(SHARED.format(align=align))
    source = codegen.build(func, target="cuda").source
    assert source.count("_pp_wide.load4(A, (4 * t,))") == 1
    assert source.count("_pp_wide.store4(S, (4 * t,), ") == stores
    assert "ALIGNED_ARGUMENTS = {0: 16}" in source  # S is no argument: its own alignment
    a = np.arange(16, dtype=np.float32)
    gpu, _ = K.run_both(func, [a, np.zeros(16, np.float32)])
    np.testing.assert_array_equal(gpu[1], (a * 2)[::-1])


def test_the_call_refuses_a_misaligned_device_array():
    from numba import cuda

    func = pp.parse(RUN.format(value="A[4 * t + v] * T.float32(3)"))
    kernel = codegen.build(func, target="cuda")
    a = np.arange(21, dtype=np.float32)
    whole, out = cuda.to_device(a), cuda.to_device(np.zeros(16, np.float32))
    kernel(whole[:20], out)  # a fresh allocation starts on 16 bytes
    np.testing.assert_array_equal(out.copy_to_host(), a[:16] * 3)
    with pytest.raises(ArgumentError, match=r"argument 'A' starts at device address 0x[0-9a-f]+, "
                                            r"not a multiple of 16 bytes"):
        kernel(whole[1:], out)


def test_the_simulated_calls_check_the_runs_alignment():
    from numba import config

    if not config.ENABLE_CUDASIM:
        pytest.skip("on a GPU the calls are numba-cuda intrinsics, callable in kernels only")
    from codegen.cuda import wide

    a = np.arange(8, dtype=np.float32)
    assert wide.load4(a, (4,)) == (4, 5, 6, 7)
    wide.store2(a, (2,), 9, 9)
    assert a.tolist()[:4] == [0, 1, 9, 9]
    with pytest.raises(AssertionError, match="a wide load of 4 starts at element"):
        wide.load4(a, (2,))
    with pytest.raises(AssertionError, match="a wide store of 2 starts at element"):
        wide.store2(a, (1,), 0, 0)


def test_vector_must_divide_the_elements_per_thread():
    with pytest.raises(ArgumentValueError, match=r"vector=3 must be a positive divisor of "
                                                 r"per_thread=16"):
        elementwise.schedule_cuda(elementwise.scale(4, 64), vector=3)


SHIFTED = '''
@T.prim_func
def shifted(A: T.Buffer((20,), "float32"), B: T.Buffer((16,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((20,), "float32", scope="shared"{align})
        for t in T.thread_binding(20, thread="threadIdx.x"):
            S[t] = A[t]
        for t2 in T.thread_binding(4, thread="threadIdx.x"):
            for u in T.unroll(4):
                B[4 * t2 + u] = S[4 * t2 + u + {shift}]
'''


@pytest.mark.parametrize("align, shift, loads", [
    (", align=16", 0, ["S_v, S_v_1, S_v_2, S_v_3 = _pp_wide.load4(S, (4 * t2,))"]),
    # From 4 * t2 + 1: one load, a pair from the even element, one load.
    (", align=16", 1, ["S_v = S[4 * t2 + 1]",
                       "S_v_1, S_v_2 = _pp_wide.load2(S, (4 * t2 + 1 + 1,))",
                       "S_v_3 = S[4 * t2 + 3 + 1]"]),
    ("", 0, ["S_v = S[4 * t2]", "S_v_1 = S[4 * t2 + 1]", "S_v_2 = S[4 * t2 + 2]",
             "S_v_3 = S[4 * t2 + 3]"]),  # not aligned: scalar, as before
])
def test_an_unrolled_run_of_an_aligned_shared_buffer_is_one_load(align, shift, loads):
    func = pp.parse(SHIFTED.format(align=align, shift=shift))
    lines = _lines(codegen.build(func, target="cuda").source)
    start = lines.index("t2 = tid_x") + 2  # after the thread's guard
    assert lines[start:start + len(loads)] == loads
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_the_classic_sgemm_has_no_wide_access():
    from polypad.examples import matmul

    source = codegen.build(matmul.schedule_cuda(matmul.matmul(16, 16, 8), vector=1).func,
                           target="cuda").source
    assert "_pp_wide" not in source


def test_nested_vectorized_loops_go_wide_by_the_inner_one():
    func = pp.parse(RUN.format(value="A[4 * t + v] * T.float32(3)").replace(
        "        for v in T.vectorized(4):\n            B[4 * t + v] = A[4 * t + v]",
        "        for u in T.vectorized(2):\n            for w in T.vectorized(2):\n"
        "                B[4 * t + 2 * u + w] = A[4 * t + 2 * u + w]"))
    source = codegen.build(func, target="cuda").source
    assert source.count("_pp_wide.load2(") == 2 and source.count("_pp_wide.store2(") == 2
    assert "load4" not in source
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
