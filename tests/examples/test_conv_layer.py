"""The seed-004 conv layer and the row sum, scheduled by ``polypad.examples``: the
derived loop nests (structural equality), the traces, and execution against the
plain nests on random inputs, by the reference executor and by Numba."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.examples import row_summation as rs
from polypad.examples.conv_layer import conv_layer, schedule
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse

CONV_TRACE = """\
sch.split(loop='relu/x', factors=[None, 5])
sch.split(loop='relu/c', factors=[None, 8])
sch.reorder('relu/n', 'relu/y', 'x_0', 'c_0', 'x_1', 'c_1')
sch.fuse('relu/n', 'relu/y')
sch.parallel(loop='n_y_fused')
sch.compute_at(block='conv', loop='c_0')
sch.store_at(buffer='conv', loop='c_0')
sch.decompose_reduction(block='conv', loop='x')
sch.reorder('rz', 'ry', 'rx', 'x', 'c')
sch.vectorize(loop='c')
sch.unroll(loop='x')
sch.vectorize(loop='c_init')"""

CONV_SCHEDULED = '''
@T.prim_func
def conv_layer(input: T.Buffer((2, 4, 12, 3), "float32"), filter: T.Buffer((3, 3, 3, 16), "float32"),
               bias: T.Buffer((16,), "float32"), relu: T.Buffer((2, 2, 10, 16), "float32")):
    for n_y_fused in T.parallel(4):
        for x_0 in T.serial(2):
            for c_0 in T.serial(2):
                conv = T.alloc_buffer((1, 1, 5, 8), "float32")
                with T.block("conv"):
                    for x_init in T.serial(5 * x_0, 5 * x_0 + 5):
                        for c_init in T.vectorized(8 * c_0, 8 * c_0 + 8):
                            conv[0, 0, x_init - 5 * x_0, c_init - 8 * c_0] = bias[c_init]
                    for rz, ry, rx in T.grid(3, 3, 3):
                        for x in T.unroll(5 * x_0, 5 * x_0 + 5):
                            for c in T.vectorized(8 * c_0, 8 * c_0 + 8):
                                conv[0, 0, x - 5 * x_0, c - 8 * c_0] = (
                                    conv[0, 0, x - 5 * x_0, c - 8 * c_0]
                                    + filter[rx, rz, ry, c]
                                    * input[n_y_fused // 2, n_y_fused % 2 + rz, x + ry, rx])
                for x_1, c_1 in T.grid(5, 8):
                    with T.block("relu"):
                        relu[n_y_fused // 2, n_y_fused % 2, x_0 * 5 + x_1, c_0 * 8 + c_1] = T.max(
                            conv[0, 0, x_1, c_1], T.float32(0))
'''


def random_args(func, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(p.shape)).astype(np.float32) for p in func.params]


def numpy_conv(input, filter, bias) -> np.ndarray:
    """relu(bias + conv): numpy's im2col and a matmul, the benchmark's peer."""
    n, hp, wp, ci = input.shape
    cols = np.lib.stride_tricks.sliding_window_view(input, (3, 3), axis=(1, 2))
    cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * (hp - 2) * (wp - 2), 9 * ci)
    weights = filter.transpose(1, 2, 0, 3).reshape(9 * ci, -1)
    out = cols.astype(np.float64) @ weights.astype(np.float64) + bias
    return np.maximum(out, 0).reshape(n, hp - 2, wp - 2, -1)


def test_conv_schedule_derives_halides_loop_nest():
    sch = schedule(conv_layer(2, 3, 16, 10, 2), tile_c=8)
    assert str(sch.trace) == CONV_TRACE
    assert_structural_equal(sch.func, parse(CONV_SCHEDULED))


@pytest.mark.parametrize("sizes, tile_x, tile_c", [
    ((2, 3, 16, 10, 2), 5, 8),
    ((1, 4, 12, 7, 3), 5, 8),   # partial tiles in x and c
    ((2, 2, 5, 3, 2), 2, 4),
])
def test_conv_schedule_computes_the_plain_nest(sizes, tile_x, tile_c):
    func = conv_layer(*sizes)
    sch = schedule(func, tile_x=tile_x, tile_c=tile_c)
    args = random_args(func)
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    codegen.build(func, target="python")(*want)
    codegen.build(sch.func, target="python")(*got)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[3], numpy_conv(*args[:3]), rtol=1e-4, atol=1e-4)


@pytest.mark.numba
def test_conv_schedule_under_numba_keeps_the_tile_on_the_stack():
    func = conv_layer(2, 3, 16, 10, 2)
    kernel = codegen.build(schedule(func, tile_c=8).func)
    assert "conv = numba.carray(_pp_stack_zeros(40, np.float32), (1, 1, 5, 8))" in kernel.source
    # x is unrolled: five copies of the vectorized c loop, each from zero.
    assert kernel.source.count("for c_offset") == 5
    args = random_args(func, seed=1)
    kernel(*args)
    np.testing.assert_allclose(args[3], numpy_conv(*args[:3]), rtol=1e-4, atol=1e-4)


ROW_SUM_SCHEDULED = '''
@T.prim_func
def row_summation(A: T.Buffer((n, m), "float32"), B: T.Buffer((n,), "float32"),
                  n: T.int32, m: T.int32):
    for i in T.parallel(n):
        B[i] = T.float32(0)
        with T.decl_buffer((16,), "float32") as B_rf:
            for j_1_init in T.serial(16):
                B_rf[j_1_init] = T.float32(0)
            for j_0 in T.serial(m // 16):
                for j_1 in T.vectorized(16):
                    B_rf[j_1] = B_rf[j_1] + A[i, j_0 * 16 + j_1]
            for j_1_wb in T.serial(16):
                B[i] = B[i] + B_rf[j_1_wb]
        for j_1_tail in T.serial(m % 16):
            B[i] = B[i] + A[i, j_1_tail + m // 16 * 16]
'''


def test_row_sum_schedule_sums_in_lanes():
    sch = rs.schedule()
    assert str(sch.trace) == ("sch.split(loop='j', factors=[None, 16], tail='partition')\n"
                              "sch.rfactor(loop='j_1', factor_axis=0)\n"
                              "sch.parallel(loop='i')\nsch.vectorize(loop='j_1')")
    assert_structural_equal(sch.func, parse(ROW_SUM_SCHEDULED))


@pytest.mark.parametrize("rows, cols", [(3, 40), (5, 16), (2, 7), (1, 0)])
def test_row_sum_schedule_matches_the_sum(rows, cols):
    sch = rs.schedule()
    rng = np.random.default_rng(rows * 100 + cols)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    want, got = np.empty(rows, np.float32), np.empty(rows, np.float32)
    codegen.build(rs.row_summation, target="python")(a, want, rows, cols)
    codegen.build(sch.func, target="python")(a, got, rows, cols)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.numba
def test_row_sum_schedule_under_numba():
    kernel = codegen.build(rs.schedule().func)
    a = np.random.default_rng(0).standard_normal((33, 1001)).astype(np.float32)
    b = np.empty(33, np.float32)
    kernel(a, b, 33, 1001)
    np.testing.assert_allclose(b, a.astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-4)
