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
    # body of j_0: fused, with the guard inside (in the split's forms that cannot wrap).
    source = codegen.build(split_and_vectorize(8, tail="predicate")).source
    assert "for j_0_j_1 in range((m // 8 + (m % 8 + 7) // 8) * 8):" in source
    assert "if j_1 < np.int32(m - j_0 * 8):" in source


@pytest.mark.parametrize("lanes, tail", [(16, "partition"), (8, "predicate"), (4, "partition")])
@pytest.mark.parametrize("n, m", [(3, 37), (2, 16), (1, 3)])
def test_fused_lanes_compute_what_the_reference_does(lanes, tail, n, m):
    func = split_and_vectorize(lanes, tail)
    args = random_args(func, seed=n * m, n=n, m=m)
    expected, got = copy(args), copy(args)
    codegen.build(func, target="python")(*expected)
    codegen.build(func)(*got)
    np.testing.assert_array_equal(got[1], expected[1])


TILE = '''
@T.prim_func
def tile(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
    for i_0 in T.serial(2):
        T_ = T.alloc_buffer((8, 32), "float32")
        for i_1 in T.serial(8):
            for j in T.vectorized(32):
                T_[i_1, j] = A[i_0 * 8 + i_1, j] * T.float32(2)
        for i_1 in T.serial(8):
            for j in T.vectorized(32):
                B[i_0 * 8 + i_1, j] = T_[i_1, j] + T.float32(1)
'''


def test_the_rows_and_columns_of_a_tile_keep_their_loops():
    # T_[i_1, j]: the counters index different dimensions, so `flat // 32` and
    # `flat % 32` would not fold back into `flat` (LLVM made gathers and scatters).
    source = codegen.build(parse(TILE)).source
    assert "//" not in source and "%" not in source
    assert "        for i_1 in range(8):\n            for j in range(32):\n" in source
    func = parse(TILE)
    args = random_args(func, seed=5)
    expected, got = copy(args), copy(args)
    codegen.build(func, target="python")(*expected)
    codegen.build(func)(*got)
    np.testing.assert_array_equal(got[1], expected[1])
