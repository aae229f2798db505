"""``codegen.build(f, fastmath=...)``: the option is checked, the flags reach the
emitted source, and results stay within the bounds docs/semantics.md gives.
Three kernels are compiled, one per mode."""

import ast
import functools

import numpy as np
import pytest
from codegen_support import copy, random_args

import codegen
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.script import parse

# A vectorized a * b + c: the pattern FMA contraction fuses.
FMA = '''
@T.prim_func
def fma(A: T.Buffer((64, 32), "float32"), C: T.Buffer((64, 32), "float32"),
        D: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i in T.serial(64):
        for j in T.vectorized(32):
            B[i, j] = A[i, j] * C[i, j] + D[i, j]
'''


@functools.cache
def fma_kernel(fastmath) -> codegen.Kernel:
    return codegen.build(parse(FMA), fastmath=fastmath)


def decorators(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {f.name: ast.unparse(f.decorator_list[0]) for f in tree.body
            if isinstance(f, ast.FunctionDef)}


@pytest.mark.parametrize("value", ["fast", "", "Contract", "none"])
def test_an_unknown_mode_is_a_value_error(value):
    with pytest.raises(ArgumentValueError, match="fastmath must be one of"):
        codegen.build(parse(FMA), fastmath=value)


@pytest.mark.parametrize("value", [1, 0, 1.0, {"contract"}])
def test_a_value_of_another_type_is_a_type_error(value):
    with pytest.raises(ArgumentTypeError, match="parameter fastmath takes"):
        codegen.build(parse(FMA), fastmath=value)
    with pytest.raises(ArgumentTypeError):  # whatever the target
        codegen.build(parse(FMA), target="python", fastmath=value)


def test_the_flags_in_the_source():
    contract = "numba.njit(cache=True, fastmath={'contract'}, error_model='numpy')"
    strict = decorators(fma_kernel(None).source)
    assert strict == {"kernel": "numba.njit(cache=True, error_model='numpy')"}
    assert decorators(codegen.build(parse(FMA), fastmath=False).source) == strict
    assert decorators(fma_kernel("contract").source) == {"kernel": contract}
    assert decorators(codegen.build(parse(FMA)).source) == {"kernel": contract}
    # Full fast-math reaches the vectorized loop only, in a helper of its own.
    full = decorators(fma_kernel("full").source)
    assert full == {"_pp_vector_0": "numba.njit(cache=True, fastmath=True, boundscheck=False, "
                                    "error_model='numpy')",
                    "kernel": contract}
    assert decorators(codegen.build(parse(FMA), fastmath=True).source) == full


def _run(kernel: codegen.Kernel, args: list) -> tuple[np.ndarray, np.ndarray]:
    ours, reference = copy(args), copy(args)
    kernel(*ours)
    codegen.build(kernel.func, target="python")(*reference)
    return ours[3], reference[3]


@pytest.mark.numba
def test_strict_ieee_is_bitwise_the_reference():
    for seed in range(2):
        got, want = _run(fma_kernel(None), random_args(fma_kernel(None).func, seed))
        np.testing.assert_array_equal(got, want)


@pytest.mark.numba
@pytest.mark.parametrize("mode", ["contract", "full"])
def test_contraction_stays_within_one_rounding_of_the_product(mode):
    # docs/semantics.md: a fused a * b + c differs from the two-rounding result
    # by at most u|ab| (1 + u) + 2u|ab + c|, u = 2**-24 for float32.
    u = 2.0 ** -24
    for seed in range(2):
        args = random_args(fma_kernel(mode).func, seed)
        got, want = _run(fma_kernel(mode), args)
        a, c, d = (x.astype(np.float64) for x in args[:3])
        bound = u * np.abs(a * c) * (1 + u) + 2 * u * np.abs(a * c + d)
        assert np.all(np.abs(got.astype(np.float64) - want) <= bound)
