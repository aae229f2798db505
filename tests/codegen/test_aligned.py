"""Heap allocations of Numba kernels start on a 64-byte boundary."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import codegen
from codegen.numba.aligned import ALIGN, aligned_zeros, python_aligned_zeros
from polypad.script import parse


@numba.njit(cache=True)
def _address_and_sum(count, dtype):
    array = aligned_zeros(count, dtype)
    return array.ctypes.data, array.size, array.sum()


@pytest.mark.numba
@pytest.mark.parametrize("count", [1, 7, 100, 4097, 100_003])
def test_kernel_allocations_start_on_a_cache_line(count):
    for dtype in (np.float32, np.float64, np.int8, np.int32):
        address, size, total = _address_and_sum(count, dtype)
        assert address % ALIGN == 0 and size == count and total == 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8"])
def test_plain_python_twin_matches(dtype):
    a = python_aligned_zeros(1001, np.dtype(dtype))
    assert a.ctypes.data % ALIGN == 0 and a.shape == (1001,) and not a.any()


@pytest.mark.numba
def test_a_large_buffer_runs_aligned_and_like_the_reference():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((64, 300), "float32"), C: T.Buffer((64, 299), "float32")):
    B = T.alloc_buffer((64, 300), "float32")
    for i, j in T.grid(64, 300):
        B[i, j] = A[i, j] * 2.0
    for i, j in T.grid(64, 299):
        C[i, j] = B[i, j] + B[i, j + 1]
''')
    kernel = codegen.build(f)
    assert "B = _pp_aligned_zeros((64) * (300), np.float32).reshape((64, 300))" in kernel.source
    a = np.random.default_rng(0).standard_normal((64, 300)).astype("float32")
    got, want = np.zeros((64, 299), "float32"), np.zeros((64, 299), "float32")
    kernel(a, got)
    codegen.build(f, target="python")(a, want)
    np.testing.assert_array_equal(got, want)
