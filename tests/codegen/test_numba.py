"""Numba kernels against the reference executor on random inputs, and the
shape of the emitted source.  Each function is compiled once per module."""

import ast

import codegen_kernels as K
import numpy as np
import pytest
from codegen_support import random_args, run_both

import codegen

pytestmark = pytest.mark.numba

NAMES = ["elementwise", "row_summation", "conv1d", "parallel_vectorized", "unrolled",
         "symbolic", "expressions", "floor_division", "temporary", "padded", "scratch"]


@pytest.fixture(scope="module")
def kernels():
    # Strict IEEE, so that floats compare bitwise with the reference; the default
    # flags (FMA contraction) are tested in test_fastmath.py.
    return {name: codegen.build(getattr(K, name)(), fastmath=None) for name in NAMES}


def default_source(kernel: codegen.Kernel) -> str:
    """The source of ``kernel``'s function under the default flags (not compiled)."""
    return codegen.build(kernel.func).source


def decorators(source: str) -> dict[str, str]:
    """Each function of the emitted module, with its decorator's text."""
    tree = ast.parse(source)
    return {f.name: ast.unparse(f.decorator_list[0]) for f in tree.body
            if isinstance(f, ast.FunctionDef)}


@pytest.mark.parametrize("name", NAMES)
def test_matches_reference(kernels, name):
    kernel = kernels[name]
    # Math intrinsics may differ by an ulp between numpy and LLVM's libm.
    rtol = 1e-6 if name == "expressions" else 0.0
    for seed in range(2):
        run_both(kernel, random_args(kernel.func, seed, n=7), rtol=rtol)


def test_row_summation_against_numpy(kernels):
    a, b = random_args(kernels["row_summation"].func)
    kernels["row_summation"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-6)


def test_float32_constants_are_typed(kernels):
    source = default_source(kernels["elementwise"])
    assert "B[i] = A[i] * np.float32(2.0) + np.float32(1.0)" in source
    assert decorators(source) == {
        "kernel": "numba.njit(cache=True, fastmath={'contract'}, error_model='numpy')"}


def test_conv1d_let_and_guard(kernels):
    source = kernels["conv1d"].source
    assert "Ai = Bi - fi + 2" in source
    assert "if 0 <= Ai and Ai < 16:" in source


def test_parallel_and_vectorized_flags(kernels):
    source = default_source(kernels["parallel_vectorized"])
    # Under the default fastmath="contract" every function has the same flags,
    # so the vectorized loop is written in place, not in a helper.
    assert decorators(source) == {
        "kernel": "numba.njit(cache=True, parallel=True, fastmath={'contract'}, "
                  "error_model='numpy')"}
    assert "in numba.prange(5):" in source
    assert "i = 1 + i_offset" in source
    assert "        for j in range(8):\n            B[i, j] = A[i, j] * A[i, j]" in source


def test_unrolled_source(kernels):
    source = kernels["unrolled"].source
    assert "for j" not in source
    for j in range(3):
        # int32 subtraction of two loads may wrap: numpy's meaning, spelled out.
        assert f"B[i, {j}] = np.int32(A[i, {j + 1}] - A[i, {j}])" in source


def test_symbolic_extent_with_several_sizes(kernels):
    kernel = kernels["symbolic"]
    for n in (1, 5, 12):
        out = run_both(kernel, random_args(kernel.func, n, n=n))
        n_, a, b = out
        np.testing.assert_array_equal(b, a[:, 0] + a[:, 2] * np.float32(n))


def test_guarded_let_is_lazy(kernels):
    a = np.linspace(0.0, 1.0, 10, dtype=np.float32)
    b = np.zeros((10, 6), np.float32)
    kernels["expressions"](a, b)
    assert b[9, 4] == np.float32(-1.0)
    np.testing.assert_array_equal(b[:9, 4], a[1:] * a[1:])
    assert "(lambda x: x * x)(A[i + 1]) if i < 9 else np.float32(-1.0)" in \
        kernels["expressions"].source


def test_negative_floor_division_and_zero_divisor(kernels):
    kernel = kernels["floor_division"]
    n, d, b, c = random_args(kernel.func, 3)
    d[:4] = [0, -3, 3, -1]
    n[:4] = [5, -7, -7, 7]
    out = run_both(kernel, [n, d, b, c])
    b = out[2]
    assert list(b[:4, 4]) == [0, 2, -3, -7]   # 5 // 0 is 0 under numpy's error model
    assert list(b[:4, 5]) == [0, -1, 2, 0]
    i = np.arange(16)
    np.testing.assert_array_equal(b[:, 0], (i - 7) // 3)
    np.testing.assert_array_equal(b[:, 1], (i - 7) % 3)
    np.testing.assert_array_equal(b[:, 2], (i - 7) // -3)
    np.testing.assert_array_equal(b[:, 3], (i - 7) % -3)


def test_temporary_is_zero_filled_stack_allocation(kernels):
    # Small and of constant shape: on the stack, zero-filled (codegen/numba/stack.py).
    assert ("T_ = numba.carray(_pp_stack_zeros(9, np.float64), (9,))"
            in kernels["temporary"].source)


def test_assume_and_undef_are_lowered_away(kernels):
    kernel = kernels["padded"]
    assert "assume" not in kernel.source and "undef" not in kernel.source
    a, b = random_args(kernel.func)
    b[:] = 5.0
    kernel(a, b)
    assert list(b.reshape(-1)[14:]) == [5.0, 5.0]


def test_compile_is_separate_from_the_first_call():
    kernel = codegen.build(K.elementwise())
    assert not kernel.compiled
    assert kernel.compile() is kernel and kernel.compiled
    # Same source, same compiled function.
    assert codegen.build(K.elementwise()).compile()._impl is kernel._impl


def test_vector_helpers_take_free_variables(kernels):
    kernel = kernels["scratch"]
    # Emitted in place under the default flags; fastmath="full" moves the
    # vectorized loops into helpers (tests/codegen/test_fastmath.py).
    assert "def _pp_vector" not in kernel.source and "def _pp_vector" not in \
        default_source(kernel)
    helpers = codegen.build(kernel.func, fastmath="full").source
    assert "_pp_vector_0(S, A, i, scale)" in helpers
    # The unrolled copies share one helper and pass the row as a literal.
    assert "_pp_vector_1(B, S, 0, i)" in helpers
    assert "_pp_vector_1(B, S, 1, i)" in helpers
    a, b, n = random_args(kernel.func, n=3)
    kernel(a, b, n)
    expected = a * (np.arange(4, dtype=np.float32)[:, None] + 3) + np.repeat([0, 1], 4)
    np.testing.assert_allclose(b, expected, rtol=1e-6)
