"""The box of a loop that ``reorder_by_map`` rebuilds, on integer divisions with large
coefficients.

Found by the fuzz (seed 20001, case 182): after ``transform_layout`` of a
4 x 4 buffer into rows of 5 (``(4 * i + j) // 5``) in a function that
assumes ``n >= 2**31 - 9``, ``sequential_buffer_access`` spent 190 s of its
10 s budget in one ISL call, the polyhedral hull of one loop's values:
ISL's hull with the divisions as dimensions ran its big-integer arithmetic
for minutes, where no deadline and no operation limit stops it.  The values
below are that loop's, as ISL printed them; their hull, taken after the
divisions are projected out, is the loop's range at once, and the primitive
is decided well inside its budget: the new order is taken, and runs like
the old one.
"""

from __future__ import annotations

import functools

import islpy as isl
import numpy as np
import pytest

import codegen
from polypad.schedule.reschedule_ast import loop_hull
from polypad.schedule.schedule import Schedule
from polypad.script import parse

LINE = (
    "[n] -> { [i0] : ((1 + n + i0) mod 2 = 0 and i0 <= 4 and 3 + n - 3i0 <= "
    "4*floor((n - i0)/4) < n - i0) or (exists (e2: i0 <= 4 and 4*floor((-1 + 4n - 5i0)/16) "
    "<= -4 + n - i0 and 16*floor((-1 + 4n - 5i0)/16) <= -13 + 4n - 5i0 and "
    "192*floor((-1 + 4n - 5i0)/16) >= -249 + 48n - 53i0 - 20*floor((-i0)/4) and 4e2 >= "
    "12 - 5n + 5i0 + 16*floor((-1 + 4n - 5i0)/16) and 60e2 <= 132 - 59n + 55i0 + "
    "176*floor((-1 + 4n - 5i0)/16) and 192e2 <= 633 - 240n + 245i0 + 20*floor((-i0)/4) + "
    "768*floor((-1 + 4n - 5i0)/16))) or ((2 - n + i0) mod 4 = 0 and 0 <= i0 <= 1) or "
    "(exists (e1: (n + i0) mod 2 = 0 and i0 >= 0 and 4e1 <= 6 + n - 3i0 and "
    "68e1 >= 46 + 17n - 27i0)) }"
)

CASE_182 = """
@T.prim_func
def func(A: T.Buffer((8,), "float32"), B: T.Buffer((4, 4), "float32"),
         C: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(2147483639 <= n)
    for i1 in T.serial(4):
        B[(n - i1) % 4, i1 % 4] = T.float32(n - i1)
    for i2 in T.serial(4):
        A[(n - i2) % 8] = T.float32(n - i2)
        if n + 1 > n:
            C[0] = T.if_then_else(((i2 < 4) or (i2 < 4)) or (B[1, 0] > -1), 1, 0)
            B[i2, 3 - i2] = -1.0
"""


def test_the_hull_of_the_loop_is_its_range():
    line = isl.Set(LINE)
    hull = loop_hull(line)
    assert hull.is_equal(isl.Set("[n] -> { [i0] : 0 <= i0 <= 4 }"))
    assert line.is_subset(hull)


@functools.cache
def _rescheduled():
    """The function after ``transform_layout``, and the schedule that then made its
    accesses to ``B`` sequential."""
    sch = Schedule(parse(CASE_182), budget=None)
    sch.transform_layout(None, "B", "lambda i, j: [(4 * i + j) // 5, (4 * i + j) % 5]",
                         pad_value="T.undef()")
    before = sch.func
    sch.sequential_buffer_access(None, "B")
    return before, sch


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_the_case_is_rescheduled_and_runs_like_before(target):
    # Where it used to overrun its budget, the reorder is now decided (and taken):
    # the new order runs like the old one at n near 2**31, where the function runs.
    before, sch = _rescheduled()
    assert str(sch.trace).count("sequential_buffer_access") == 1
    logical = [(4 * i + j) // 5 * 5 + (4 * i + j) % 5 for i in range(4) for j in range(4)]
    rng = np.random.default_rng(182)
    old, new = codegen.build(before, target=target), codegen.build(sch.func, target=target)
    for n in (2147483639, 2147483642, 2147483647):
        args = [rng.integers(-4, 5, 8).astype("float32"),
                rng.integers(-4, 5, (4, 5)).astype("float32"), np.zeros(4, "int32")]
        want, got = [a.copy() for a in args], [a.copy() for a in args]
        old(*want, n)
        new(*got, n)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1].ravel()[logical], want[1].ravel()[logical])
        np.testing.assert_array_equal(got[2], want[2])
