"""Loops a band regenerates count in int32: a band whose counters leave it where the
original runs is refused with the instance and the parameters (the fuzz, seed 0,
case 8426); one whose counters stay inside is rebuilt and runs the same."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from analyses.evidence import Instance
from polypad.errors import IllegalTransformError
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

SYMBOLIC_START = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    for i in T.serial(n, n + 2):
        A[(i - n) % 8] = A[(i - n) % 8] + 1
'''

FROM_ZERO = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "int32")):
    for i in T.serial(n):
        A[i] = i * 3
'''


def test_a_reversal_that_leaves_int32_is_refused_with_the_instance():
    sch = Schedule(parse(SYMBOLIC_START))
    with pytest.raises(IllegalTransformError) as err:
        sch.reorder_by_map(None, "{ S0[i] -> [-i] }")
    cex = err.value.evidence
    assert cex.instances == (Instance("S0", {"i": -2147483648}),)
    assert cex.params == {"n": -2147483648}
    assert "would count to 2147483648" in str(err.value)


@pytest.mark.parametrize("n", [0, 5, 64, 100])
def test_a_reversal_that_stays_in_int32_runs_the_same(n):
    f = parse(FROM_ZERO)
    sch = Schedule(f)
    sch.reorder_by_map(None, "{ S0[i] -> [-i] }")
    want, got = np.zeros(n, "int32"), np.zeros(n, "int32")
    codegen.build(f, target="python")(n, want)
    codegen.build(sch.func, target="python")(n, got)
    np.testing.assert_array_equal(got, want)


def test_a_reversal_that_stays_in_int32_is_the_loop_counted_down():
    sch = Schedule(parse(FROM_ZERO))
    sch.reorder_by_map(None, "{ S0[i] -> [-i] }")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "int32")):
    for b0 in T.serial(1 - n, 1 - n + n):
        A[-1 * b0] = -b0 * 3
'''))
