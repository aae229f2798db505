"""``reorder`` and ``tile`` through the guard of a split whose factors do not divide.

``split`` with the "predicate" tail puts ``if i_0 * 2 + i_1 < 5:`` as deep as
the loops are perfectly nested; above a block that holds a reduction's init and
its ``k`` loop, the guard broke the chain down to the ``k`` loops.  The
primitives now move it down (into the block as its predicate, then into each
loop, nested guards together), which is exact where the loop's bounds are safe
to evaluate where the guard is false; the init then sinks into ``k`` as before.
Each result is checked by the script it prints (read back, replayed) and run
against the original, bit for bit, on the reference executor and Numba.
"""

from __future__ import annotations

import pytest
from kind_support import check_schedule, same_bits

from polypad.errors import PolypadError
from polypad.examples import matmul
from polypad.schedule import Schedule
from polypad.script import parse


def test_reorder_moves_the_guard_of_a_partial_tile_down_to_the_update():
    f = matmul.matmul(5, 4, 12)  # C is 5 x 4: tiles of 2 rows leave one over
    sch = Schedule(f)
    i, j, k = sch.get_loops("C")
    bi, ii, ti = sch.split(i, [None, 1, 2])
    bj, ji, tj = sch.split(j, [None, 1, 2])
    ko, ki = sch.split(k, [None, 3])
    sch.reorder(bi, bj, ko, ti, tj, ki, ii, ji)
    check_schedule(f, sch, '''
@T.prim_func
def matmul(A: T.Buffer((5, 12), "float32"), B: T.Buffer((12, 4), "float32"),
           C: T.Buffer((5, 4), "float32")):
    for i_0, j_0, k_0, i_2, j_2, k_1 in T.grid(3, 2, 4, 2, 2, 3):
        with T.block("C"):
            for i_1, j_1 in T.grid(1, 1):
                if i_0 * 2 + i_1 * 2 + i_2 < 5:
                    if k_0 == 0 and k_1 == 0:
                        C[i_0 * 2 + i_1 * 2 + i_2, j_0 * 2 + j_1 * 2 + j_2] = T.float32(0)
                    C[i_0 * 2 + i_1 * 2 + i_2, j_0 * 2 + j_1 * 2 + j_2] = (
                        C[i_0 * 2 + i_1 * 2 + i_2, j_0 * 2 + j_1 * 2 + j_2]
                        + A[i_0 * 2 + i_1 * 2 + i_2, k_0 * 3 + k_1]
                        * B[k_0 * 3 + k_1, j_0 * 2 + j_1 * 2 + j_2])
''')
    same_bits(f, sch.func)


def test_tile_takes_nested_guards_down_together():
    f = matmul.matmul(5, 6, 7)  # no factor divides its extent
    sch = Schedule(f)
    assert sch.tile(sch.get_loops("C"), [2, 4, 3]) == ["i_0", "j_0", "k_0", "i_1", "j_1",
                                                       "k_1"]
    check_schedule(f, sch, '''
@T.prim_func
def matmul(A: T.Buffer((5, 7), "float32"), B: T.Buffer((7, 6), "float32"),
           C: T.Buffer((5, 6), "float32")):
    for i_0, j_0, k_0, i_1 in T.grid(3, 2, 3, 2):
        with T.block("C"):
            for j_1, k_1 in T.grid(4, 3):
                if i_0 * 2 + i_1 < 5 and j_0 * 4 + j_1 < 6:
                    if k_0 == 0 and k_1 == 0:
                        C[i_0 * 2 + i_1, j_0 * 4 + j_1] = T.float32(0)
                    if k_0 * 3 + k_1 < 7:
                        C[i_0 * 2 + i_1, j_0 * 4 + j_1] = (
                            C[i_0 * 2 + i_1, j_0 * 4 + j_1]
                            + A[i_0 * 2 + i_1, k_0 * 3 + k_1] * B[k_0 * 3 + k_1, j_0 * 4 + j_1])
''')
    same_bits(f, sch.func)


def test_a_guard_over_a_loop_whose_bound_reads_a_buffer_stays_and_is_refused():
    # Where the guard is false, L's index could be out of bounds in general.
    f = parse('''
@T.prim_func
def f(L: T.Buffer((1,), "int32"), A: T.Buffer((5, 8), "float32"), C: T.Buffer((5,), "float32")):
    for i in range(5):
        with T.block("C"):
            C[i] = T.float32(0)
            for k in range(L[0]):
                C[i] = C[i] + A[i, k]
''')
    sch = Schedule(f)
    i, k = sch.get_loops("C")
    io, ii = sch.split(i, [None, 2])
    before = sch.func
    with pytest.raises(PolypadError) as err:
        sch.reorder(io, k, ii)
    assert str(err.value) == (
        "reorder: the guard `if i_0 * 2 + i_1 < 5:` above the loop over k cannot move into "
        "it: the loop's bounds read the buffer L (L[0]), which need not be safe to evaluate "
        "where the guard is false")
    assert sch.func is before



def test_a_guard_that_reads_a_buffer_the_loop_writes_stays_and_is_refused():
    # A[0] is read once, before the loop; moved into it, it would be read again after
    # the first iteration's store (review finding: A = [1, 2, 3, 4] gave [-4, 2, 3, 4]
    # instead of [-4, -3, -2, -1]).
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in range(2):
        if A[0] > 0:
            for j in range(4):
                with T.block("U"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vj] = A[vj] - 5
''')
    message = ("{}: the guard `if A[0] > 0:` above the loop over j cannot move into it: it "
               "reads A, once before the loop, and inside it would read it at every "
               "iteration, after the body's stores")
    for primitive, apply in (("reorder", lambda s: s.reorder("i", "j")),
                             ("tile", lambda s: s.tile(["i", "j"], [1, 2]))):
        sch = Schedule(f)
        with pytest.raises(PolypadError) as err:
            apply(sch)
        assert str(err.value) == message.format(primitive)
        assert sch.func is f


def test_a_guard_over_a_loop_whose_range_may_leave_its_dtype_stays_and_is_refused():
    # At i = 5, where the guard is false, k would start at 2500000000: not an int32.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((5,), "float32"), C: T.Buffer((5,), "float32")):
    for i in range(5):
        with T.block("C"):
            C[i] = T.float32(0)
            for k in T.serial(i * 500000000, i * 500000000 + 2):
                C[i] = C[i] + A[k - i * 500000000 + i // 2]
''')
    sch = Schedule(f)
    i, k = sch.get_loops("C")
    io, ii = sch.split(i, [None, 2])
    with pytest.raises(PolypadError) as err:
        sch.reorder(io, ii, k)
    assert str(err.value) == (
        "reorder: the guard `if i_0 * 2 + i_1 < 5:` above the loop over k cannot move into "
        "it: the loop's bounds (from (i_0 * 2 + i_1) * 500000000, 2 times) may leave int32, "
        "which need not be safe to evaluate where the guard is false")


TVM_MATMUL = '''
@T.prim_func
def matmul(A: T.Buffer((5, 12), "float32"), B: T.Buffer((12, 4), "float32"),
           C: T.Buffer((5, 4), "float32")):
    for i, j, k in T.grid(5, 4, 12):
        with T.sblock("C"):
            vi = T.axis.spatial(5, i)
            vj = T.axis.spatial(4, j)
            vk = T.axis.reduce(12, k)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_the_tvm_block_form_reorders_past_its_guard():
    f = parse(TVM_MATMUL)
    sch = Schedule(f)
    i, j, k = sch.get_loops("C")
    bi, ii, ti = sch.split(i, [None, 1, 2])
    bj, ji, tj = sch.split(j, [None, 1, 2])
    ko, ki = sch.split(k, [None, 5])
    sch.reorder(bi, bj, ko, ti, tj, ki, ii, ji)
    check_schedule(f, sch, '''
@T.prim_func
def matmul(A: T.Buffer((5, 12), "float32"), B: T.Buffer((12, 4), "float32"),
           C: T.Buffer((5, 4), "float32")):
    for i_0, j_0, k_0, i_2, j_2, k_1, i_1, j_1 in T.grid(3, 2, 3, 2, 2, 5, 1, 1):
        if k_0 * 5 + k_1 < 12:
            if i_0 * 2 + i_1 * 2 + i_2 < 5:
                with T.sblock("C"):
                    vi = T.axis.spatial(5, i_0 * 2 + i_1 * 2 + i_2)
                    vj = T.axis.spatial(4, j_0 * 2 + j_1 * 2 + j_2)
                    vk = T.axis.reduce(12, k_0 * 5 + k_1)
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    same_bits(f, sch.func)


def test_a_guard_moved_into_a_block_with_axes_is_conjoined_with_its_predicate():
    from polypad.ir import nodes as n
    from polypad.ir.locate import replace
    from polypad.ir.structural import assert_structural_equal
    from polypad.ir.visitor import walk
    from polypad.schedule.sink_guards import guard_step

    f = parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i, j in T.grid(3, 4):
        if i * 3 + j < 7:
            with T.sblock("B"):
                vi = T.axis.spatial(8, i * 3 + j)
                T.where(i * 3 + j < 8)
                B[vi] = A[vi] + T.float32(1)
''')
    guard = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse))
    moved, statements = guard_step(guard, lambda s: None, "reorder", {})
    assert statements == []
    assert_structural_equal(replace(f, guard, moved), parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i, j in T.grid(3, 4):
        with T.sblock("B"):
            vi = T.axis.spatial(8, i * 3 + j)
            T.where(i * 3 + j < 7 and i * 3 + j < 8)
            B[vi] = A[vi] + T.float32(1)
'''))
    assert moved.header.where
