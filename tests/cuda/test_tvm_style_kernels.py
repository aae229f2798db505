"""TVM-style GPU kernels written in our script syntax, as TVM 0.27 prints its lowered
GPU functions (``T.launch_thread``, ``T.tvm_thread_allreduce`` under a
``T.comm_reducer``, flattened views): softmax with TOPI's ``fast_exp`` (a bit cast
and a shift), layer norm with two cross-thread sums, and a transpose through a
shared tile.  Each runs on Numba's simulator against the reference executor on
random inputs; the transpose's read in the same thread loop as its write is the
race the target refuses, with both threads."""

from __future__ import annotations

import functools

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from polypad.errors import RaceError

_HEAD = '''
@T.prim_func
def main(x: T.Buffer((2, 32), "float32"), y: T.Buffer((2, 32), "float32")):
    x_1 = x.view(64)
    y_1 = y.view(64)
    with T.launch_thread("blockIdx.x", 2) as i0:
'''

# TOPI's fast_exp of x - max(x), its 2 ** n in the exponent bits of a float32.
SOFTMAX_FAST_EXP = _HEAD + '''
        row_max = T.alloc_shared((1,), "float32")
        e = T.alloc_shared((32,), "float32")
        total = T.alloc_shared((1,), "float32")
        cross_max = T.alloc_local((1,), "float32")
        cross_sum = T.alloc_local((1,), "float32")
        with T.launch_thread("threadIdx.x", 32) as t:
            with T.attr(T.comm_reducer(lambda a, b: T.max(a, b), [T.float32(-3.4e38)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), x_1[i0 * 32 + t], T.bool(True), cross_max[0], t)
            if t == 0:
                row_max[0] = cross_max[0]
        with T.launch_thread("threadIdx.x", 32) as t:
            v: T.let[T.float32] = T.max(T.min(x_1[i0 * 32 + t] - row_max[0], T.float32(88.3762626647949)), T.float32(-88.3762626647949))
            n: T.let[T.float32] = T.floor(v * T.float32(1.4426950216293335) + T.float32(0.5))
            r: T.let[T.float32] = v - n * T.float32(0.69314718246459961)
            p: T.let[T.float32] = ((((((T.float32(0.00019875691214110702) * r + T.float32(0.0013981999363750219)) * r + T.float32(0.008333452045917511)) * r + T.float32(0.041665796190500259)) * r + T.float32(0.1666666567325592)) * r + T.float32(0.5)) * r * r + r + T.float32(1.0))
            e[t] = T.reinterpret("float32", T.shift_left(T.Cast("int32", n + T.float32(127.0)), 23)) * p
        with T.launch_thread("threadIdx.x", 32) as t:
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0.0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), e[t], T.bool(True), cross_sum[0], t)
            if t == 0:
                total[0] = cross_sum[0]
        with T.launch_thread("threadIdx.x", 32) as t:
            y_1[i0 * 32 + t] = e[t] / total[0]
'''  # noqa: E501 (TVM prints each statement on one line)

LAYER_NORM = _HEAD + '''
        mean = T.alloc_shared((1,), "float32")
        var = T.alloc_shared((1,), "float32")
        cross_mean = T.alloc_local((1,), "float32")
        cross_var = T.alloc_local((1,), "float32")
        with T.launch_thread("threadIdx.x", 32) as t:
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0.0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), x_1[i0 * 32 + t], T.bool(True), cross_mean[0], t)
            if t == 0:
                mean[0] = cross_mean[0] * T.float32(0.03125)
        with T.launch_thread("threadIdx.x", 32) as t:
            d: T.let[T.float32] = x_1[i0 * 32 + t] - mean[0]
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0.0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), d * d, T.bool(True), cross_var[0], t)
            if t == 0:
                var[0] = cross_var[0] * T.float32(0.03125)
        with T.launch_thread("threadIdx.x", 32) as t:
            y_1[i0 * 32 + t] = (x_1[i0 * 32 + t] - mean[0]) * T.rsqrt(var[0] + T.float32(1e-5))
'''  # noqa: E501 (TVM prints each statement on one line)

TRANSPOSE = '''
@T.prim_func
def transpose(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            S = T.alloc_buffer((8, 9), "float32", scope="shared")
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    S[ty, tx] = A[by * 8 + ty, bx * 8 + tx]
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    B[bx * 8 + ty, by * 8 + tx] = S[tx, ty]
'''


@functools.cache
def _run(name: str):
    text = {"softmax": SOFTMAX_FAST_EXP, "layer_norm": LAYER_NORM, "transpose": TRANSPOSE}[name]
    func = pp.parse(text)
    shape = [int(s) for s in func.params[0].shape]
    x = np.random.default_rng(6).uniform(-30, 30, shape).astype("float32")
    gpu, ref = K.run_both(func, [x, np.zeros(shape, "float32")])
    return func, x, gpu, ref, codegen.build(func, target="cuda").source


def test_softmax_with_fast_exp_runs_the_reference_executors_bits():
    _, x, gpu, ref, source = _run("softmax")
    np.testing.assert_array_equal(gpu[1], ref[1])  # the same tree, the same bit casts
    want = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(gpu[1], want / want.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-7)
    assert "_pp_bits.as_float32(np.int32(" in source and ".view(" not in source


def test_layer_norm_with_two_cross_thread_sums():
    _, x, gpu, ref, _ = _run("layer_norm")
    np.testing.assert_array_equal(gpu[1], ref[1])
    want = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(gpu[1], want, rtol=1e-4, atol=1e-5)


def test_a_transpose_through_a_shared_tile_gets_one_barrier():
    _, x, gpu, ref, source = _run("transpose")
    np.testing.assert_array_equal(gpu[1], x.T)
    np.testing.assert_array_equal(gpu[1], ref[1])
    lines = [line.strip() for line in source.splitlines()]
    assert lines.count("cuda.syncthreads()") == 1
    write = lines.index("S[ty, tx] = A[by * 8 + ty, bx * 8 + tx]")
    read = lines.index("B[bx * 8 + ty_1, by * 8 + tx_1] = S[tx_1, ty_1]")
    assert write < lines.index("cuda.syncthreads()") < read


def test_the_transposed_read_in_the_writes_own_thread_loop_is_refused_with_both_threads():
    """Thread (ty, tx) reads S[tx, ty], which thread (tx, ty) writes in the same step: no
    barrier orders them, so there is none to place."""
    text = TRANSPOSE.replace('''                    S[ty, tx] = A[by * 8 + ty, bx * 8 + tx]
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
''', '''                    S[ty, tx] = A[by * 8 + ty, bx * 8 + tx]
''')
    with pytest.raises(RaceError) as info:
        codegen.build(pp.parse(text), target="cuda")
    assert str(info.value).startswith(
        "cannot build 'transpose' for cuda: S1(by=0, bx=0, ty=0, tx=1) on block (0, 0, 0) "
        "thread (1, 0, 0) reads S[1, 0] and S0(by=0, bx=0, ty=1, tx=0) on block (0, 0, 0) "
        "thread (0, 1, 0) writes it after it in the serial program, but two threads of one "
        "block run them in either order: no barrier can order them")
    assert info.value.evidence.element.buffer == "S"
