"""Integer arithmetic that wraps, on the cuda target (Numba's simulator): the values the
reference executor computes, at the extremes of each dtype.

An ``int64`` ``+ - *`` that may wrap is computed in ``uint64`` (:mod:`codegen.cuda.expr`):
LLVM takes a signed overflow for undefined, and on the simulator Python's integers
never wrapped (``np.int32`` of one out of range raised ``OverflowError``).  On the
simulator the ``uint64`` arithmetic that wraps warns, as numpy's scalars do."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.script import parse

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in scalar")

E = 2 ** 63
INT64_VALUES = [(-1, 2), (E - 1, 1), (-E, -1), (E - 2, E - 1), (123456789, -987654321)]
INT64_EXPRESSIONS = [
    "(m - 5) // 3",
    "(m * T.int64(-3)) % 7",
    "T.if_then_else(m + k < 0, T.int64(1), T.int64(2))",
    "T.max(m - k, T.int64(-4))",
    'T.Cast("int64", T.Cast("int32", m * k))',
    "T.min(T.max(5 + m, T.int64(0)), T.int64(15))",
]


def _int64_function(expression: str):
    return parse(f'''
@T.prim_func
def wrap64(C: T.Buffer((1,), "int64"), m: T.int64, k: T.int64):
    C[0] = {expression}
''')


def _results(func, target: str, dtype: str, values) -> list:
    kernel = codegen.build(func, target=target)
    out = []
    for scalars in values:
        C = np.zeros(1, dtype)
        kernel(C, *scalars)
        out.append(int(C[0]))
    return out


@pytest.mark.parametrize("expression", INT64_EXPRESSIONS)
def test_int64_arithmetic_wraps_as_the_reference(expression):
    func = _int64_function(expression)
    assert "np.uint64(" in codegen.build(func, target="cuda").source
    assert (_results(func, "cuda", "int64", INT64_VALUES)
            == _results(func, "python", "int64", INT64_VALUES))


def test_int64_arithmetic_that_cannot_wrap_stays_plain():
    func = parse('''
@T.prim_func
def plain(C: T.Buffer((4,), "int64")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        C[i] = T.Cast("int64", i) * T.int64(3) + T.int64(1)
''')
    kernel = codegen.build(func, target="cuda")
    assert "uint64" not in kernel.source
    C = np.zeros(4, "int64")
    kernel(C)
    assert C.tolist() == [1, 4, 7, 10]


NARROW_VALUES = [(2 ** 31 - 1, 3), (-2 ** 31, -1), (5, 7), (2 ** 31 - 1, 2 ** 31 - 1)]


@pytest.mark.parametrize("expression", ["n + 1", "n * k", "n - k", "(n + k) // 2"])
def test_int32_arithmetic_on_scalar_arguments_wraps_as_the_reference(expression):
    # On the simulator the scalars are Python ints: np.int32(n + 1) raised OverflowError.
    func = parse(f'''
@T.prim_func
def wrap32(C: T.Buffer((1,), "int32"), n: T.int32, k: T.int32):
    C[0] = {expression}
''')
    assert (_results(func, "cuda", "int32", NARROW_VALUES)
            == _results(func, "python", "int32", NARROW_VALUES))


def test_an_unrolled_int64_index_folds_its_constants_wrapped():
    """The printer folds an unrolled counter's constants into an index: an int64 product
    of constants past 2**63 wraps there as the kernel's arithmetic would (the build
    raised DTypeError on the folded 2**64)."""
    func = parse('''
@T.prim_func
def folded(B: T.Buffer((8,), "int64")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        for u in T.unroll(2):
            B[T.int64(4611686018427387904) * T.int64(4) + T.Cast("int64", tx) * T.int64(2)
              + T.Cast("int64", u)] = T.Cast("int64", tx) + T.int64(7)
''')
    kernel = codegen.build(func, target="cuda")
    stores = [line.strip() for line in kernel.source.splitlines() if "B[" in line]
    assert stores == ["B[np.int64(tx) * 2 + np.int64(0)] = np.int64(tx) + 7",
                      "B[np.int64(tx) * 2 + np.int64(1)] = np.int64(tx) + 7"]
    ours, reference = np.zeros(8, np.int64), np.zeros(8, np.int64)
    kernel(ours)
    codegen.build(func, target="python")(reference)
    np.testing.assert_array_equal(ours, reference)
    np.testing.assert_array_equal(reference, [7, 7, 8, 8, 9, 9, 10, 10])


@pytest.mark.parametrize("source, target", [("int64", "int32"), ("int64", "uint8"),
                                            ("int32", "int16"), ("int32", "uint32"),
                                            ("uint32", "int32"), ("int64", "uint64")])
def test_a_narrowing_cast_of_a_scalar_argument_wraps_as_the_reference(source, target):
    """A cast to a narrower type (or the other signedness) of a scalar argument: on the
    simulator the argument is a Python int, which ``np.int32`` refused out of range
    (``OverflowError``); it goes through its own type first, as on a GPU."""
    func = parse(f'''
@T.prim_func
def narrow(C: T.Buffer((2,), "{target}"), m: T.{source}):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        C[tx] = T.Cast("{target}", m) + T.Cast("{target}", tx)
''')
    info = np.iinfo(source)
    kernel, reference = codegen.build(func, target="cuda"), codegen.build(func, target="python")
    for m in (info.min, info.max, info.min + 12345, info.max // 3):
        ours, theirs = np.zeros(2, target), np.zeros(2, target)
        kernel(ours, m)
        reference(theirs, m)
        np.testing.assert_array_equal(ours, theirs)
