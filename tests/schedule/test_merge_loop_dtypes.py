"""``merge_adjacent_loops`` of an ``int32`` loop and an ``int64`` one.

Found by the fuzz (``--shapes views``, seed 20010, cases 21 and 23): the
second loop's counter became the first's, of the other width, and the body
was left ill-typed (``j + T.int64(8)`` with ``j`` an ``int32`` now; the
verifier: "operands of Sub have dtypes int64 and int32").  It is now the
first's distance from its minimum cast to the second's dtype, plus the
second's minimum: each expression keeps its dtype, and the merged loop runs
like the two.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

BEFORE = """
@T.prim_func
def func(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in T.serial({first}):
        A[i] = B[i]
    for j in T.serial({second}):
        A[j + 8] = B[j] * 2
"""

AFTER = """
@T.prim_func
def func(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in T.serial({first}):
        A[i] = B[i]
        A[{j} + 8] = B[{j}] * 2
"""

CASES = {  # loops' ranges, and the second counter written with the first's
    "int32 then int64": ("4", "T.int64(4)", 'T.Cast("int64", i)'),
    "int64 then int32": ("T.int64(4)", "4", 'T.Cast("int32", i)'),
    "int64 then int32, other minimums": ("T.int64(1), T.int64(5)", "2, 6",
                                         'T.Cast("int32", i - T.int64(1)) + 2'),
    "int32 then int64, other minimums": ("1, 5", "T.int64(2), T.int64(6)",
                                         'T.Cast("int64", i - 1) + T.int64(2)'),
}


def _merged(name):
    first, second, _ = CASES[name]
    before = parse(BEFORE.format(first=first, second=second))
    sch = Schedule(before)
    sch.merge_adjacent_loops("i", "j")
    return before, sch.func


@pytest.mark.parametrize("name", CASES)
def test_the_second_counter_keeps_its_dtype(name):
    first, _, j = CASES[name]
    _, after = _merged(name)
    verify(after)
    assert_structural_equal(after, parse(AFTER.format(first=first, j=j)))


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_the_merged_loop_runs_like_the_two(target):
    for name in CASES:
        before, after = _merged(name)
        b = np.arange(16, dtype="int32") - 5
        want = [np.zeros(16, "int32"), b.copy()]
        got = [np.zeros(16, "int32"), b.copy()]
        codegen.build(before, target=target)(*want)
        codegen.build(after, target=target)(*got)
        np.testing.assert_array_equal(got[0], want[0], err_msg=name)
        assert want[0][8:12].tolist() != [0, 0, 0, 0], name  # the second loop wrote
