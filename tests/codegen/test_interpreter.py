"""The reference executor against results computed by hand with numpy."""

import numpy as np
import pytest
from codegen_kernels import (
    conv1d,
    elementwise,
    floor_division,
    padded,
    row_summation,
    temporary,
)
from codegen_support import random_args

import codegen
from analyses import Element, Instance, Unknown
from polypad.errors import BoundsCheckError, OutOfBoundsError
from polypad.script import parse


def run(func, args):
    codegen.build(func, target="python")(*args)
    return args


def test_row_summation():
    a, b = random_args(row_summation())
    run(row_summation(), [a, b])
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-6)


def test_conv1d_matches_numpy_convolve():
    a, f, b = random_args(conv1d())
    run(conv1d(), [a, f, b])
    # B[Bi] = sum_fi F[fi] * A[Bi - fi + 2] with A zero outside: the full
    # convolution (length 18) shifted left by two.
    expected = np.concatenate([np.convolve(a, f, mode="full")[2:], [0.0, 0.0]])
    np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-6)


def test_floor_division_and_modulo():
    n, d, b, c = random_args(floor_division())
    d[d == 0] = 7
    run(floor_division(), [n, d, b, c])
    i = np.arange(16)
    np.testing.assert_array_equal(b[:, 0], (i - 7) // 3)
    np.testing.assert_array_equal(b[:, 1], (i - 7) % 3)
    np.testing.assert_array_equal(b[:, 2], (i - 7) // -3)
    np.testing.assert_array_equal(b[:, 3], (i - 7) % -3)
    assert list(b[:3, 0]) == [-3, -2, -2]  # floor, not truncation toward zero
    assert list(b[:3, 3]) == [-1, 0, -2]   # the sign of the divisor
    pairs = [(int(x), int(y)) for x, y in zip(n, d, strict=True)]
    np.testing.assert_array_equal(b[:, 4], [x // y for x, y in pairs])
    np.testing.assert_array_equal(b[:, 5], [x % y for x, y in pairs])
    np.testing.assert_array_equal(c[:, 0], [x * 10**9 // y for x, y in pairs])
    np.testing.assert_array_equal(c[:, 1], [x * 10**9 % y for x, y in pairs])


def test_float32_rounds_every_operation():
    a, b = [np.full(16, 0.1, np.float32), np.zeros(16, np.float32)]
    run(elementwise(), [a, b])
    assert b.dtype == np.float32
    assert b[0] == np.float32(0.1) * np.float32(2.0) + np.float32(1.0)


def test_temporary_buffer_prefix_sum():
    a, b = random_args(temporary())
    run(temporary(), [a, b])
    np.testing.assert_allclose(b, np.cumsum(a.astype(np.float64)).astype(np.float32))


def test_padding_stores_removed_keep_old_values():
    a, b = random_args(padded())
    b[:] = 5.0
    run(padded(), [a, b])
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    np.testing.assert_array_equal(flat_b[:14], flat_a[:14] * np.float32(2.0))
    np.testing.assert_array_equal(flat_b[14:], [5.0, 5.0])  # T.undef() stores are no-ops


def test_out_of_bounds_access_is_an_error_not_a_wrap_around():
    # A data-dependent index: the static check cannot decide it, so build lets it through
    # and the reference executor checks it at run time.
    f = parse('''
@T.prim_func
def gather(A: T.Buffer((4,), "float32"), I: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[i] = A[I[i]] + 1.0
''')
    kernel = codegen.build(f, target="python")
    assert isinstance(kernel.bounds, Unknown)
    assert "stays inside A" in kernel.bounds.reason and "data-dependent" in kernel.bounds.reason
    with pytest.raises(BoundsCheckError, match=r"load of A\[-1\] is outside its shape \(4,\) "
                       r"in 'gather' at <string>:5"):
        kernel(np.zeros(4, np.float32), np.array([0, 1, -1, 2], np.int32))
    with pytest.raises(BoundsCheckError, match=r"load of A\[4\] is outside its shape \(4,\)"):
        kernel(np.zeros(4, np.float32), np.array([0, 4, 1, 2], np.int32))


def test_affine_out_of_bounds_access_is_refused_by_build():
    f = parse('''
@T.prim_func
def shift(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = A[i - 1] + 1.0
''')
    with pytest.raises(OutOfBoundsError, match=r"cannot build 'shift': load of A\[i - 1\] at "
                       r"<string>:5 is outside the shape \(4,\) of A") as info:
        codegen.build(f, target="python")
    assert info.value.evidence.instances == (Instance("S0", {"i": 0}),)
    assert info.value.evidence.element == Element("A", (-1,))
