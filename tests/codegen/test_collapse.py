"""A vectorized loop of a few lanes, emitted fused with the serial loop around it
(codegen/numba/collapse.py): the emitted form, when it applies, and the same results."""

import numpy as np
import pytest
from codegen_support import copy, random_args

import codegen
from polypad.schedule import Schedule
from polypad.script import parse

SCALE = '''
@T.prim_func
def scale(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32"), n: T.int32,
          m: T.int32):
    for i in T.serial(n):
        for j in T.serial(m):
            B[i, j] = A[i, j] * T.float32(2) + T.float32(1)
'''


def split_and_vectorize(lanes: int, tail: str = "partition"):
    sch = Schedule(parse(SCALE))
    _, inner = sch.split("j", [None, lanes], tail=tail)
    sch.vectorize(inner)
    return sch.func


def test_split_lanes_are_one_loop_from_zero():
    source = codegen.build(split_and_vectorize(16)).source
    assert ("        for j_0_j_1 in range(m // 16 * 16):\n"
            "            j_0 = j_0_j_1 // 16\n"
            "            j_1 = j_0_j_1 % 16\n") in source


def test_a_lane_with_an_element_of_its_own_keeps_its_loop():
    from polypad.examples.row_summation import schedule

    source = codegen.build(schedule().func).source
    assert "for j_1 in range(16):\n" in source and "j_0_j_1" not in source


def test_a_guarded_split_is_fused_with_its_guard():
    # The predicate tail puts an `if` inside the lanes loop, which is still the whole
    # body of j_0: fused, with the guard inside (m + 7 may wrap at int32, as before).
    source = codegen.build(split_and_vectorize(8, tail="predicate")).source
    assert "for j_0_j_1 in range(np.int32(m + 7) // 8 * 8):" in source
    assert "if j_0 * 8 + j_1 < m:" in source


@pytest.mark.parametrize("lanes, tail", [(16, "partition"), (8, "predicate"), (4, "partition")])
@pytest.mark.parametrize("n, m", [(3, 37), (2, 16), (1, 3)])
def test_fused_lanes_compute_what_the_reference_does(lanes, tail, n, m):
    func = split_and_vectorize(lanes, tail)
    args = random_args(func, seed=n * m, n=n, m=m)
    expected, got = copy(args), copy(args)
    codegen.build(func, target="python")(*expected)
    codegen.build(func)(*got)
    np.testing.assert_array_equal(got[1], expected[1])
