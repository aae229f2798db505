"""A small corpus of realistic kernels, mostly in TVM's lowered style, one in blocks.

Each is parsed, round-tripped (``parse(script(f))`` structurally equal to
``f``), run on the reference executor and the Numba kernel against numpy,
and analysed: the elements it writes (``analyses.domain_touched``) and its
dependences (``analyses.dependences``).
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from tvmscript_support import arguments, roundtrip, run_both

import analyses

pytestmark = pytest.mark.numba

MATMUL = """
@T.prim_func(private=True)
def matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    A = T.match_buffer(a, (16, 32), "float32")
    B = T.match_buffer(b, (32, 8), "float32")
    C = T.match_buffer(c, (16, 8), "float32")
    for i, j in T.grid(16, 8):
        acc_data = T.allocate([1], "float32", "local")
        acc = T.decl_buffer((1,), "float32", data=acc_data, scope="local")
        acc[0] = T.float32(0)
        for k in T.serial(32):
            acc[0] = acc[0] + A[i, k] * B[k, j]
        C[i, j] = acc[0]
"""

SOFTMAX = """
@T.prim_func(check_well_formed=False)
def softmax(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 16), "float32")
    B = T.match_buffer(b, (n, 16), "float32")
    for i in T.serial(n):
        with T.decl_buffer((2,), "float32", scope="local") as stat:
            stat[0] = T.float32(-3.4e38)
            for j in T.serial(16):
                stat[0] = T.max(stat[0], A[i, j])
            stat[1] = T.float32(0)
            for j in T.serial(16):
                B[i, j] = T.exp(A[i, j] - stat[0])
                stat[1] = stat[1] + B[i, j]
            for j in T.serial(16):
                B[i, j] = B[i, j] / stat[1]
"""

POOL = """
@T.prim_func
def max_pool(A: T.Buffer((T.int64(2), T.int64(9), T.int64(9)), "float32"),
             B: T.Buffer((T.int64(2), T.int64(5), T.int64(5)), "float32")):
    T.evaluate(0)
    for c, h, w in T.grid(2, 5, 5):
        B[c, h, w] = T.float32(-3.4e38)
        for kh, kw in T.grid(2, 2):
            B[c, h, w] = T.max(B[c, h, w], T.if_then_else(
                h * 2 + kh < 9 and w * 2 + kw < 9, A[c, h * 2 + kh, w * 2 + kw],
                T.float32(-3.4e38), dtype="float32"))
"""

TRANSPOSE = """
@T.prim_func
def transpose(a: T.handle, b: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (m, 8), "int32")
    B = T.match_buffer(b, (8, m), "int32")
    T.evaluate(T.assume(0 <= m and m < 1024))
    for i in T.serial(m):
        row_data = T.allocate([8], "int32", "global")
        row = T.Buffer((8,), "int32", data=row_data)
        for j in T.serial(8):
            row[j] = A[i, j] ^ (j << 3)
        for j in T.serial(8):
            B[j, i] = T.bitwise_xor(row[j], T.shift_left(j, 3))
"""


LAYER_NORM = """
@T.prim_func
def layer_norm(A: T.Buffer((4, 32), "float32"), gamma: T.Buffer((32,), "float32"),
               B: T.Buffer((4, 32), "float32")):
    for i in T.serial(4):
        with T.decl_buffer((2,), "float32", scope="local") as s:
            s[0] = T.float32(0)
            s[1] = T.float32(0)
            for j in T.serial(32):
                s[0] = s[0] + A[i, j]
                s[1] = s[1] + A[i, j] * A[i, j]
            for j in T.serial(32):
                B[i, j] = (A[i, j] - s[0] / T.float32(32)) * gamma[j] / T.sqrt(
                    s[1] / T.float32(32) - s[0] / T.float32(32) * (s[0] / T.float32(32))
                    + T.float32(1e-5))
"""

CONV1D_BLOCKS = """
@T.prim_func(private=True)
def conv1d(A: T.Buffer((18,), "float32"), W: T.Buffer((3,), "float32"),
           B: T.Buffer((16,), "float32")):
    for xo, xi, r in T.grid(4, 5, 3):
        with T.block("conv"):
            vx = T.axis.spatial(16, xo * 5 + xi)
            vr = T.axis.reduce(3, r)
            T.where(xo * 5 + xi < 16)
            T.reads(A[vx + vr], W[vr])
            T.writes(B[vx])
            with T.init():
                B[vx] = T.float32(0)
            B[vx] = B[vx] + A[vx + vr] * W[vr]
"""


def _written(f, name: str, **params) -> isl.Set:
    """The elements of ``name`` that ``f`` writes, with the parameters fixed."""
    touched = analyses.domain_touched(f, name, "write")
    assert touched.exact
    s = touched.set
    for p, v in params.items():
        s = s.fix_val(isl.dim_type.param, s.find_dim_by_name(isl.dim_type.param, p), v)
    return s


def _box(text: str) -> isl.Set:
    return isl.Set(text)


def test_matmul():
    f = roundtrip(MATMUL)
    args = arguments(f)
    out = run_both(f, args, rtol=1e-5)
    np.testing.assert_allclose(out[2], args[0] @ args[1], rtol=1e-5, atol=1e-5)
    assert _written(f, "C").is_equal(_box("{ C[i, j] : 0 <= i < 16 and 0 <= j < 8 }"))
    deps = analyses.dependences(f)
    assert not deps.flow.is_empty()  # acc is read after it is written
    assert f.attrs == (("global_symbol", "matmul"), ("tir.noalias", True))


def test_softmax_with_a_symbolic_row_count():
    f = roundtrip(SOFTMAX)
    args = arguments(f, n=3)
    out = run_both(f, args, rtol=1e-5)
    a = args[0]
    want = np.exp(a - a.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-6)
    written = _written(f, "B", n=3)
    assert written.is_equal(_box("[n] -> { B[i, j] : n = 3 and 0 <= i < 3 and 0 <= j < 16 }"))
    assert not analyses.dependences(f).flow.is_empty()


def test_max_pool_with_int64_shapes_and_a_typed_select():
    f = roundtrip(POOL)
    args = arguments(f)
    out = run_both(f, args)
    padded = np.full((2, 10, 10), -3.4e38, np.float32)
    padded[:, :9, :9] = args[0]
    want = padded.reshape(2, 5, 2, 5, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(out[1], want)
    assert _written(f, "B").is_equal(
        _box("{ B[c, h, w] : 0 <= c < 2 and 0 <= h < 5 and 0 <= w < 5 }"))
    read = analyses.domain_touched(f, "A", "read").set
    assert read.is_equal(_box("{ A[c, h, w] : 0 <= c < 2 and 0 <= h < 9 and 0 <= w < 9 }"))
    assert not analyses.dependences(f).output.is_empty()


def test_transpose_through_an_allocated_row():
    f = roundtrip(TRANSPOSE)
    args = arguments(f, m=10)
    out = run_both(f, args)
    np.testing.assert_array_equal(out[1], args[0].T)
    assert _written(f, "B", m=10).is_equal(
        _box("[m] -> { B[j, i] : m = 10 and 0 <= j < 8 and 0 <= i < 10 }"))
    deps = analyses.dependences(f)
    assert not deps.flow.is_empty()  # the row is written, then read


def test_layer_norm():
    f = roundtrip(LAYER_NORM)
    args = arguments(f)
    out = run_both(f, args, rtol=1e-4)
    a, g = args[0].astype(np.float64), args[1].astype(np.float64)
    mean = a.mean(axis=1, keepdims=True)
    var = (a * a).mean(axis=1, keepdims=True) - mean * mean
    np.testing.assert_allclose(out[2], (a - mean) * g / np.sqrt(var + 1e-5), rtol=1e-3,
                               atol=1e-4)
    assert _written(f, "B").is_equal(_box("{ B[i, j] : 0 <= i < 4 and 0 <= j < 32 }"))
    assert not analyses.dependences(f).flow.is_empty()


def test_conv1d_in_the_block_dialect():
    f = roundtrip(CONV1D_BLOCKS)
    args = arguments(f)
    args[2][:] = 5.0  # T.init must overwrite it
    out = run_both(f, args, rtol=1e-5)
    want = np.convolve(args[0], args[1][::-1], mode="valid")
    np.testing.assert_allclose(out[2], want, rtol=1e-5, atol=1e-6)
    assert _written(f, "B").is_equal(_box("{ B[x] : 0 <= x < 16 }"))
    read = analyses.domain_touched(f, "A", "read").set
    assert read.is_equal(_box("{ A[x] : 0 <= x < 18 }"))
    assert not analyses.dependences(f).flow.is_empty()
