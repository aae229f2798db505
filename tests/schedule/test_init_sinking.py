"""``reorder`` and ``tile`` through a reduction's init, as TVM users expect of ``T.init()``.

A reduction written with its init before the loop over its axis is not a perfect
nest.  The primitives move the init into that loop's first iteration (and what
follows the loop into its last), which isl proves runs exactly the same instances:
the loop runs at least once wherever the init ran.  Each result is checked by the
script it prints, read back and replayed, and run against the original (reference
executor and Numba, bit for bit: nothing is reassociated); the refusal names the
instance that would be lost, with the parameter values.
"""

from __future__ import annotations

import pytest
from kind_support import check_schedule, same_bits

from analyses import Instance
from polypad.errors import IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

MATMUL = '''
@T.prim_func
def mm(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"),
       C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in T.serial(8):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''


def test_reorder_moves_the_init_into_the_first_iteration_of_k():
    f = parse(MATMUL)
    sch = Schedule(f)
    i, j, k = sch.get_loops("C")
    i_0, j_0, i_1, j_1 = sch.tile([i, j], [4, 4])
    sch.reorder(i_0, j_0, k, i_1, j_1)
    check_schedule(f, sch, '''
@T.prim_func
def mm(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"),
       C: T.Buffer((16, 16), "float32")):
    for i_0, j_0, k, i_1 in T.grid(4, 4, 8, 4):
        with T.block("C"):
            for j_1 in T.serial(4):
                if k == 0:
                    C[i_0 * 4 + i_1, j_0 * 4 + j_1] = T.float32(0)
                C[i_0 * 4 + i_1, j_0 * 4 + j_1] = (C[i_0 * 4 + i_1, j_0 * 4 + j_1]
                                                   + A[i_0 * 4 + i_1, k] * B[k, j_0 * 4 + j_1])
''')
    same_bits(f, sch.func)
    # The guard pins k: decompose_reduction takes the init out again, inside j_0.
    assert sch.decompose_reduction("C", k) == ["i_1_init", "j_1_init"]
    sch.vectorize(j_1)
    sch.parallel(i_0)
    same_bits(f, sch.func)


def test_tile_of_the_reduction_axis_guards_the_init_by_both_of_its_loops():
    f = parse(MATMUL)
    sch = Schedule(f)
    assert sch.tile(sch.get_loops("C"), [4, 4, 4]) == ["i_0", "j_0", "k_0", "i_1", "j_1",
                                                       "k_1"]
    check_schedule(f, sch, '''
@T.prim_func
def mm(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"),
       C: T.Buffer((16, 16), "float32")):
    for i_0, j_0, k_0, i_1 in T.grid(4, 4, 2, 4):
        with T.block("C"):
            for j_1, k_1 in T.grid(4, 4):
                if k_0 == 0 and k_1 == 0:
                    C[i_0 * 4 + i_1, j_0 * 4 + j_1] = T.float32(0)
                C[i_0 * 4 + i_1, j_0 * 4 + j_1] = (
                    C[i_0 * 4 + i_1, j_0 * 4 + j_1]
                    + A[i_0 * 4 + i_1, k_0 * 4 + k_1] * B[k_0 * 4 + k_1, j_0 * 4 + j_1])
''')
    assert str(sch.trace) == "sch.tile(loops=['i', 'j', 'k'], factors=[4, 4, 4])"
    same_bits(f, sch.func)


def test_what_follows_the_loop_moves_into_its_last_iteration():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 6), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        B[i] = 0
        for k in T.serial(6):
            B[i] = B[i] + A[i, k]
        C[i] = B[i] * 2
''')
    sch = Schedule(f)
    sch.reorder("k", "i")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 6), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for k, i in T.grid(6, 8):
        if k == 0:
            B[i] = 0
        B[i] = B[i] + A[i, k]
        if k == 5:
            C[i] = B[i] * 2
''')
    same_bits(f, sch.func)


def test_a_loop_that_may_run_no_iteration_takes_no_init():
    f = parse('''
@T.prim_func
def f(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n), "int32")
    B = T.match_buffer(b, (8,), "int32")
    for i in T.serial(8):
        B[i] = 0
        for k in T.serial(n):
            B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="runs no iteration there") as info:
        sch.reorder("k", "i")
    cex = info.value.evidence
    assert cex.instances[0].statement == "S0" and cex.params == {"n": 0}
    assert isinstance(cex.instances[0], Instance)
    assert "sch.decompose_reduction" in str(info.value)
    assert len(sch.trace) == 0
    # What the refusal suggests: the init out of the nest, then the loops reorder.
    sch.decompose_reduction(None, "i")
    sch.reorder("k", "i")
    check_schedule(f, sch, '''
@T.prim_func
def f(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n), "int32")
    B = T.match_buffer(b, (8,), "int32")
    for i_init in T.serial(8):
        B[i_init] = 0
    for k, i in T.grid(n, 8):
        B[i] = B[i] + A[i, k]
''')
