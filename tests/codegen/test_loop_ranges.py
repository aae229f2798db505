"""Loop ranges that do not fit the counter's dtype: both executors refuse them
at loop entry with a LoopRangeError, and the Numba kernel checks only the loops
whose range polypad cannot prove fits."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import ExecutionError, LoopRangeError
from polypad.script import parse

TARGETS = ["numba", "python"]
numba = pytest.mark.numba
BOTH = [pytest.param("numba", marks=numba), "python"]
INT32_MAX = 2**31 - 1

SHIFTED = parse('''
@T.prim_func
def f(A: T.Buffer((10,), "int32"), n: T.int32):
    for i in T.serial(n, n + 10):
        A[i - n] = i
''')

VARIABLE = parse('''
@T.prim_func
def g(A: T.Buffer((4,), "int32"), n: T.int32, m: T.int32):
    for i in T.serial(n, n + m):
        A[0] = A[0] + 1
''')

PARALLEL = parse('''
@T.prim_func
def h(A: T.Buffer((4, 3), "int32"), n: T.int32):
    for j in T.parallel(4):
        for i in T.serial(n, n + 3):
            A[j, i - n] = i
''')


@pytest.mark.parametrize("target", BOTH)
def test_range_past_int32_is_refused(target):
    a = np.zeros(10, np.int32)
    with pytest.raises(LoopRangeError) as caught:
        codegen.build(SHIFTED, target=target)(a, 2147483640)
    error = caught.value
    assert isinstance(error, ExecutionError) and isinstance(error, OverflowError)
    assert str(error) == (
        "loop 'i' of 'f' at <string>:4 runs from 2147483640 to 2147483649 (min "
        "2147483640, extent 10), outside the range [-2147483648, 2147483647] of its "
        "int32 counter")
    assert (error.var, error.dtype, error.first, error.last) == (
        "i", "int32", 2147483640, 2147483649)
    assert not a.any()  # refused at entry: no iteration ran


@numba
def test_targets_agree_on_ranges_that_fit():
    # n = 2147483638 ends exactly at INT32_MAX: the loop's end, one past it,
    # must not wrap (Numba once ran no iteration there).
    for n in (5, 2147483638):
        results = []
        for target in TARGETS:
            a = np.zeros(10, np.int32)
            codegen.build(SHIFTED, target=target)(a, n)
            results.append(a)
        np.testing.assert_array_equal(results[0], np.arange(n, n + 10, dtype=np.int64))
        np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("target", BOTH)
def test_an_empty_loop_takes_no_value(target):
    kernel = codegen.build(VARIABLE, target=target)
    for m, count in ((0, 0), (-5, 0), (1, 1)):
        a = np.zeros(4, np.int32)
        kernel(a, INT32_MAX, m)
        assert a[0] == count
    with pytest.raises(LoopRangeError, match=r"runs from 2147483647 to 2147483648 "
                                             r"\(min 2147483647, extent 2\)"):
        kernel(np.zeros(4, np.int32), INT32_MAX, 2)


def test_numba_checks_only_what_it_cannot_prove():
    fixed = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), m: T.int32):
    for i in T.serial(16):
        A[i] = 1.0
    for k in T.serial(m):
        A[0] = A[0] + 1.0
''')
    source = codegen.build(fixed).source
    # 0..15 and 0..m-1 (m an int32) fit int32: no check, no raise.
    assert "polypad.loop_range" not in source and "raise" not in source
    shifted = codegen.build(SHIFTED).source
    assert "if n > 2147483647 - (10 - 1):\n" in shifted
    assert "raise AssertionError('polypad.loop_range', 0, n, 10)" in shifted
    assert "for i_offset in range(10):\n        i = n + i_offset\n" in shifted


@numba
def test_parallel_loop_holding_a_check_runs_serially():
    kernel = codegen.build(PARALLEL)
    assert "numba.prange" not in kernel.source and "parallel=True" not in kernel.source
    with pytest.raises(LoopRangeError, match="loop 'i' of 'h' at <string>:5"):
        kernel(np.zeros((4, 3), np.int32), INT32_MAX)
    a, b = np.zeros((4, 3), np.int32), np.zeros((4, 3), np.int32)
    kernel(a, 7)
    codegen.build(PARALLEL, target="python")(b, 7)
    np.testing.assert_array_equal(a, np.tile([7, 8, 9], (4, 1)))
    np.testing.assert_array_equal(a, b)
