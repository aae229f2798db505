"""Bounds checks hoisted out of loops (:mod:`codegen.numba.hoist`): each fails where,
and as, the reference executor fails."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import outcomes

from polypad.script import parse


def _gather_args(y: int, *scalars) -> list:
    return [np.arange(8, dtype="int32"), np.array([y, 0], "int32"), np.zeros(8, "int32"),
            *scalars]


# The outer and the inner loop both could hoist the check of X[Y[0]]: the inner
# forgot it after its loop, and the outer's forgetting raised KeyError in the build.
BOTH_LOOPS = parse('''
@T.prim_func
def both_loops(X: T.Buffer((8,), "int32"), Y: T.Buffer((2,), "int32"),
               C: T.Buffer((8,), "int32")):
    for j in T.serial(4):
        C[4] = X[Y[0]]
        for k in T.serial(2):
            C[k] = X[Y[0]] + 1
        C[3] = X[Y[0]]
''')


@pytest.mark.parametrize("y", [1, 9])
def test_a_check_hoisted_by_an_outer_loop_is_not_hoisted_again(y):
    reference, numba = outcomes(BOTH_LOOPS, _gather_args(y), named=True)
    assert numba == reference
    assert reference == ([[*range(8)], [1, 0], [2, 2, 0, 1, 1, 0, 0, 0]] if y == 1 else
                         "BoundsCheckError: load of X[9] is outside its shape (8,) in "
                         "'both_loops' at <string>:6 (as written: X[Y[0]])")


# The inner loop's int8 range may not fit (n = 126: 126 .. 129): the reference raises
# LoopRangeError there, before the gather after it runs; the check of X[Y[0]] hoisted
# out of the loop over j raised BoundsCheckError first.
RANGE_FIRST = parse('''
@T.prim_func
def range_first(X: T.Buffer((8,), "int32"), Y: T.Buffer((2,), "int32"),
                C: T.Buffer((8,), "int32"), n: T.int8):
    for j in T.serial(4):
        for k in T.serial(n, n + T.int8(4)):
            C[1] = C[1] + 1
        C[0] = X[Y[0]]
''')


@pytest.mark.parametrize(("y", "n"), [(1, 0), (9, 0), (1, 126), (9, 126)])
def test_no_check_is_hoisted_past_a_loop_range_check(y, n):
    reference, numba = outcomes(RANGE_FIRST, _gather_args(y, n), named=True)
    assert numba == reference
    if n == 126:
        assert reference.startswith("LoopRangeError: ")
    elif y == 9:
        assert reference.startswith("BoundsCheckError: load of X[9]")
    else:
        assert reference[2][:2] == [1, 16]


# X[Y[0]] is read under an `if` at line 7 before the statement at line 8 that reads it
# on every iteration: hoisted for line 8, the check named line 8 where the reference
# fails at line 7.
EARLIER_NESTED = parse('''
@T.prim_func
def earlier_nested(X: T.Buffer((8,), "int32"), Y: T.Buffer((2,), "int32"),
                   C: T.Buffer((8,), "int32")):
    for j in T.serial(4):
        if Y[1] == 0:
            C[1] = X[Y[0]] + 1
        C[3] = X[Y[0]]
''')


@pytest.mark.parametrize("y", [1, 9])
def test_a_check_made_earlier_in_the_body_is_not_hoisted(y):
    reference, numba = outcomes(EARLIER_NESTED, _gather_args(y), named=True)
    assert numba == reference
    if y == 9:
        assert reference == ("BoundsCheckError: load of X[9] is outside its shape (8,) in "
                             "'earlier_nested' at <string>:7 (as written: X[Y[0]])")


# Found by benchmarks/fuzz.py --seed 7 --case 55 --shapes guards: the store's check
# (its index reads nothing of the loop over j) went before the loop, past the gather
# in the `if` before it, which the reference executor fails first.
CHECK_IN_AN_IF_FIRST = parse('''
@T.prim_func
def if_first(X: T.Buffer((8,), "int32"), Y: T.Buffer((2,), "int32"),
             C: T.Buffer((8,), "int32")):
    for j in T.serial(4):
        if X[Y[1]] > 8:
            C[j] = 3
        C[Y[0]] = C[j] + 1
''')


@pytest.mark.parametrize(("y", "y1"), [(1, 0), (9, 0), (1, 12), (9, 12)])
def test_no_check_is_hoisted_past_a_check_that_stays_in_the_loop(y, y1):
    args = _gather_args(y)
    args[1][1] = y1
    reference, numba = outcomes(CHECK_IN_AN_IF_FIRST, args, named=True)
    assert numba == reference
    if y1 == 12:
        assert reference == ("BoundsCheckError: load of X[12] is outside its shape (8,) "
                             "in 'if_first' at <string>:6 (as written: X[Y[1]])")
    elif y == 9:
        assert reference.startswith("BoundsCheckError: store to C[9] is outside")
