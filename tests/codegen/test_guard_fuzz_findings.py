"""What the run-time guards' fuzz (``benchmarks/fuzz.py --shapes guards``) found in
the Numba target, each pinned by the smallest function that showed it."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import outcomes

import codegen
from polypad.script import parse

pytestmark = pytest.mark.numba

# A view at an offset is lowered to a flat index (A_flat[4 + X[i]]) that the
# analysis of the function as written never saw: checked, but its message had
# no location (guards 30001/1).  The view's own shape is checked first, and
# the error names the view (docs/semantics.md, "Views").
VIEW_GATHER = parse('''
@T.prim_func
def view_gather(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
                C: T.Buffer((4,), "int32")):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        C[i] = A_1[X[i]]
''')

# In a prange body Numba types the counter uint64; a checked index choosing between
# it and a signed integer (i if i < n else 3, min(i, n)) was a float64, which Numba
# refused to index with (guards 30001/10: the kernel did not compile).
PARALLEL_CHOICE = parse('''
@T.prim_func
def parallel_choice(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32"), n: T.int32):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=6)
    C[0] = A_1[T.max(7 - n, 2)]
    for i in T.parallel(8):
        C[i + 4] = A_1[T.if_then_else(i < n, i, 3)] + A_1[T.min(i, n)]
''')



def test_a_flat_view_index_that_fails_is_named_where_it_stands():
    args = [np.zeros(16, "int32"), np.array([0, 1, 40, 2], "int32"), np.zeros(4, "int32")]
    reference, numba = outcomes(VIEW_GATHER, args)
    assert numba == reference == ("load of A_1[40] is outside its shape (8,) in "
                                  "'view_gather' at <string>:7 (as written: A_1[X[i]])")


def test_a_checked_choice_of_a_parallel_counter_compiles_and_agrees():
    kernel = codegen.build(PARALLEL_CHOICE)
    assert "numba.prange" in kernel.source
    assert "np.int32(i) if i < n else np.int32(3)" in kernel.source
    for n in (9, 0, 4):
        reference, numba = outcomes(PARALLEL_CHOICE, [np.arange(16, dtype="int32"),
                                                      np.zeros(16, "int32"), n])
        assert numba == reference
    assert reference[1][4:12] == [12, 14, 16, 18, 19, 19, 19, 19]  # n = 4


# One access written alike in two statements had one check, reported at the
# location of the last: X[(j + n) % 13] failed at line 5 and was named at line 8
# (guards 30012/14).
TWICE = parse('''
@T.prim_func
def twice(X: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32"), n: T.int32):
    for j in T.serial(4):
        C[j] = X[(j + n) % 13]
        for k in T.serial(2):
            if X[k] > 0:
                C[k] = X[(j + n) % 13] + 1
''')


def test_an_access_written_alike_in_two_statements_is_named_where_it_failed():
    at_first = [np.array([1, 1, 0, 0, 0, 0, 0, 0], "int32"), np.zeros(8, "int32"), 7]
    reference, numba = outcomes(TWICE, at_first)
    assert numba == reference == ("load of X[8] is outside its shape (8,) in 'twice' at "
                                  "<string>:5 (as written: X[(j + n) % 13])")
    # n = 5: j + n = 8 first at j = 3, after the second statement ran for j = 0 .. 2.
    reference, numba = outcomes(TWICE, [at_first[0], np.zeros(8, "int32"), 5])
    assert numba == reference and reference.endswith("at <string>:5 (as written: "
                                                     "X[(j + n) % 13])")


# int64 arithmetic that wraps: Numba's signed add is LLVM's `add nsw`, so LLVM
# assumed 5 + m does not overflow and folded min(max(5 + m, 0), 15) to 15 at
# m = 2**63 - 1 (the reference: 5 + m wraps negative, the max gives 0); and
# min(j + m, 7) read X[7] where the reference's index wrapped to -2**63 and raised
# (guards 30012/62, 30012/78).
WRAP64 = parse('''
@T.prim_func
def wrap64(A: T.Buffer((16,), "int32"), X: T.Buffer((8,), "int32"),
           C: T.Buffer((16,), "int32"), m: T.int64):
    C[(14 * m + 1) % 15] = A[T.min(T.max(5 + m, 0), 15)]
    for j in T.serial(2):
        C[j + 3] = X[T.min(j + m, 7)]
''')


def test_int64_arithmetic_that_wraps_wraps_in_numba():
    args = [np.arange(100, 116, dtype="int32"), np.arange(8, dtype="int32"),
            np.zeros(16, "int32")]
    reference, numba = outcomes(WRAP64, [*args, 2**63 - 1])
    assert numba == reference == (
        "load of X[-9223372036854775808] is outside its shape (8,) in 'wrap64' at "
        "<string>:7 (as written: X[T.min(T.Cast(\"int64\", j) + m, 7)])")
    reference, numba = outcomes(WRAP64, [*args, 2**63 - 5])  # 5 + m wraps, j + m not
    assert numba == reference
    wrapped = (14 * (2**63 - 5) + 1 + 2**63) % 2**64 - 2**63
    assert reference[2][wrapped % 15] == 100 and reference[2][3:5] == [7, 7]  # A[0], X[7]
    assert "np.int64(np.uint64(5) + np.uint64(m))" in codegen.build(WRAP64).source


# Guards 11/163: in a parallel loop a failed check skipped the load as
# `X[_g] if ok else 0`, which LLVM made an unconditional load (a select): X[n] at
# n = 2**31 - 1 read far outside and the process died (SIGSEGV).  A failed check
# now reads element 0, and the kernel raises the reference's error after the loop.
PARALLEL_FAR_GATHER = parse('''
@T.prim_func
def far(X: T.Buffer((8,), "int32"), C: T.Buffer((16,), "int32"), n: T.int32):
    for i in T.parallel(8):
        for j in T.serial(T.int8(7)):
            if X[i % 8] > 5:
                C[i + X[n]] = C[i + X[n]] + X[T.min(j + n, 0)] + 1
''')


@pytest.mark.parametrize("n", [2 ** 31 - 1, -2 ** 31, 3])
def test_a_failed_check_in_a_parallel_loop_reads_nothing_outside(n):
    args = [np.array([8, 12, 16, 9, 4, 19, 4, 12], "int32"), np.zeros(16, "int32"), n]
    reference, numba = outcomes(PARALLEL_FAR_GATHER, args, named=True)
    assert numba == reference
    if n != 3:
        assert reference == (f"BoundsCheckError: load of X[{n}] is outside its shape (8,) "
                             "in 'far' at <string>:7 (as written: X[n])")
