"""TVM's argmin as its tests write it -- the new value stored first, then the index,
both bound by lets read before either store -- through ``parallel``, ``vectorize``,
``reorder`` and ``tile`` as written, without ``rfactor`` or ``decompose_reduction``
putting the stores in order first.

The model cannot read that order as written (the index's let read the value before
the value's store changed it), so the primitives ask the deciders about the same
function with the stores in order (:func:`polypad.schedule.update_lets.read_as_stores`)
and rewrite the function as it was: its lets stay.  The row loop, which is not the
reduction's axis, runs in parallel, in lanes, or innermost; the loops over the
reduction's axis are still refused wherever their order decides which tied step
wins, with the two steps and the element, and the refused reorder, built anyway,
does pick another index on the counterexample's tie.

Each rewrite: the script it should print (read back and replayed), and the original
and rewritten kernels run on inputs full of ties and rows of +inf, reference executor
and Numba, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from argmax_support import assert_runs_the_same
from kind_support import check_schedule
from test_rfactor_argmax_tvm import ARGMIN_SPLIT, by_loop

import codegen
from polypad.errors import IllegalTransformError
from polypad.ir.locate import find_loop
from polypad.schedule import Schedule
from polypad.schedule.fuse_reorder import reorder
from polypad.script import parse

ARGMIN = by_loop(ARGMIN_SPLIT, rows=16)

# The block as TVM wrote it, under the two lines of loops {loops}.
EXPECTED = '''
@T.prim_func
def argmin_split_init_update_reordered(val: T.Buffer((16, 16), "float32"),
                                       argmin_v0: T.Buffer((16,), "int32"),
                                       argmin_v1: T.Buffer((16,), "float32")):
{loops}
            with T.block("argmin"):
                i = T.axis.spatial(16, {i})
                k = T.axis.reduce(16, {k})
                T.reads(val[i, k])
                T.writes(argmin_v0[i], argmin_v1[i])
                with T.init():
                    argmin_v1[i] = T.max_value("float32")
                    argmin_v0[i] = -1
                v_argmin_v0: T.int32 = T.Select(argmin_v1[i] <= val[i, k], argmin_v0[i], k)
                v_argmin_v1: T.float32 = T.Select(argmin_v1[i] <= val[i, k], argmin_v1[i],
                                                  val[i, k])
                argmin_v1[i] = v_argmin_v1
                argmin_v0[i] = v_argmin_v0
'''


def expected(loops: str, i: str = "i0", k: str = "i1_0 * 4 + i1_1") -> str:
    return EXPECTED.format(loops=loops, i=i, k=k)


def assert_argmin_runs_the_same(f, g) -> None:
    assert_runs_the_same(f, g, started=False, fill=np.inf)  # rows of +inf: -1 stays
    assert_runs_the_same(f, g, started=False)


@pytest.mark.parametrize(("kind", "loop"), [("parallel", "T.parallel"),
                                            ("vectorize", "T.vectorized")])
def test_the_row_loop_runs_in_parallel_or_in_lanes(kind, loop):
    f = parse(ARGMIN)
    sch = Schedule(f)
    getattr(sch, kind)("i0")
    check_schedule(f, sch, expected(f"    for i0 in {loop}(16):\n"
                                    "        for i1_0, i1_1 in T.grid(4, 4):"))
    assert_argmin_runs_the_same(f, sch.func)


def test_the_row_loop_moves_innermost_and_vectorizes():
    f = parse(ARGMIN)
    sch = Schedule(f)
    i0, i1_0, i1_1 = sch.get_loops("argmin")
    sch.reorder(i1_0, i1_1, i0)
    sch.vectorize(i0)
    check_schedule(f, sch, expected("    for i1_0, i1_1 in T.grid(4, 4):\n"
                                    "        for i0 in T.vectorized(16):"))
    assert_argmin_runs_the_same(f, sch.func)


def test_tile_moves_the_rows_inside_the_reduction_chunks():
    f = parse(ARGMIN)
    sch = Schedule(f)
    assert sch.tile(["i0", "i1_0"], [4, 2]) == ["i0_0", "i1_0_0", "i0_1", "i1_0_1"]
    sch.parallel("i0_0")
    check_schedule(f, sch, expected(
        "    for i0_0 in T.parallel(4):\n"
        "        for i1_0_0, i0_1, i1_0_1, i1_1 in T.grid(2, 4, 2, 4):",
        i="i0_0 * 4 + i0_1", k="(i1_0_0 * 2 + i1_0_1) * 4 + i1_1"))
    assert_argmin_runs_the_same(f, sch.func)


def test_reorder_of_the_reduction_axis_is_refused_where_a_tie_would_change_sides():
    f = parse(ARGMIN)
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match=r"^reorder would break a dependence: "
                       r"flow dependence") as caught:
        sch.reorder("i0", "i1_1", "i1_0")
    message = str(caught.value)
    # Its statements are those of the stores in order: the index's store is argmin_2.
    assert message.endswith("(TVM's let form read as its stores, in the order that reads "
                            "the same: argmin_2 stores argmin_v0, argmin_3 stores argmin_v1)")
    cex = caught.value.evidence
    assert [(x.statement, x.indices) for x in cex.instances] == [
        ("argmin_3", {"i0": 0, "i1_0": 0, "i1_1": 3}),
        ("argmin_2", {"i0": 0, "i1_0": 1, "i1_1": 0})]
    assert (cex.element.buffer, cex.element.indices) == ("argmin_v1", (0,))
    assert len(sch.trace) == 0
    # Run: k = 3 and k = 4 tie for the row's least value.  The nest takes the first
    # of them, 3; the refused order meets 4 first and keeps it.
    swapped, _, _ = reorder(f, [find_loop(f, x) for x in ("i0", "i1_1", "i1_0")])
    for target in ("python", "numba"):
        results = []
        for func in (f, swapped):
            val = np.ones((16, 16), np.float32)
            val[0, 3] = val[0, 4] = 0.0
            index, value = np.zeros(16, np.int32), np.zeros(16, np.float32)
            codegen.build(func, target=target)(val, index, value)
            results.append((index[0], value[0]))
        assert results == [(3, 0.0), (4, 0.0)], target


@pytest.mark.parametrize(("kind", "loop", "steps"), [
    ("vectorize", "i1_1", [{"i0": 0, "i1_0": 0, "i1_1": 0}, {"i0": 0, "i1_0": 0, "i1_1": 1}]),
    ("parallel", "i1_0", [{"i0": 0, "i1_0": 0, "i1_1": 3}, {"i0": 0, "i1_0": 1, "i1_1": 0}]),
])
def test_the_reduction_axis_is_still_refused_in_lanes_and_in_parallel(kind, loop, steps):
    f = parse(ARGMIN)
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError,
                       match=rf"^{kind} would break a dependence: the loop over {loop} "
                             r"carries a flow dependence") as caught:
        getattr(sch, kind)(loop)
    assert str(caught.value).endswith(f"sch.decompose_reduction('argmin', '{loop}') moves it "
                                      "out first; (TVM's let form read as its stores, in the "
                                      "order that reads the same: argmin_2 stores argmin_v0)")
    cex = caught.value.evidence
    assert [(x.statement, x.indices) for x in cex.instances] == [
        ("argmin_2", steps[0]), ("argmin_2", steps[1])]
    assert (cex.element.buffer, cex.element.indices) == ("argmin_v0", (0,))
    assert len(sch.trace) == 0


def test_reorder_moves_a_hand_written_init_through_the_let_form():
    # The init before the loop over k moves into k's first iteration (checked on the
    # stores in order, as the dependences are); the rows then run in lanes.
    f = parse('''
@T.prim_func
def argmin(A: T.Buffer((8, 16), "float32"), I: T.Buffer((8,), "int32"),
           M: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        M[i] = T.max_value("float32")
        I[i] = -1
        for k in T.serial(16):
            v0: T.int32 = T.Select(M[i] <= A[i, k], I[i], k)
            v1: T.float32 = T.Select(M[i] <= A[i, k], M[i], A[i, k])
            M[i] = v1
            I[i] = v0
''')
    sch = Schedule(f)
    sch.reorder("k", "i")
    sch.vectorize("i")
    check_schedule(f, sch, '''
@T.prim_func
def argmin(A: T.Buffer((8, 16), "float32"), I: T.Buffer((8,), "int32"),
           M: T.Buffer((8,), "float32")):
    for k in T.serial(16):
        for i in T.vectorized(8):
            if k == 0:
                M[i] = T.max_value("float32")
                I[i] = -1
            v0: T.int32 = T.Select(M[i] <= A[i, k], I[i], k)
            v1: T.float32 = T.Select(M[i] <= A[i, k], M[i], A[i, k])
            M[i] = v1
            I[i] = v0
''')
    assert_argmin_runs_the_same(f, sch.func)


def test_reorder_moves_a_step_in_the_let_form_after_the_loop_into_its_last_iteration():
    # The step after k is TVM's argmin let chain: it is read as its stores in the
    # functions before and after the move alike, so isl compares one statement's
    # domains.  (The steps in k are stores: a let chain before the moved step would
    # print as holding it, so the script would not read back.)
    f = parse('''
@T.prim_func
def argmin(A: T.Buffer((8, 17), "float32"), I: T.Buffer((8,), "int32"),
           M: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        M[i] = T.max_value("float32")
        I[i] = -1
        for k in T.serial(16):
            I[i] = T.Select(M[i] <= A[i, k], I[i], k)
            M[i] = T.min(M[i], A[i, k])
        w0: T.int32 = T.Select(M[i] <= A[i, 16], I[i], 16)
        w1: T.float32 = T.Select(M[i] <= A[i, 16], M[i], A[i, 16])
        M[i] = w1
        I[i] = w0
''')
    sch = Schedule(f)
    sch.reorder("k", "i")
    check_schedule(f, sch, '''
@T.prim_func
def argmin(A: T.Buffer((8, 17), "float32"), I: T.Buffer((8,), "int32"),
           M: T.Buffer((8,), "float32")):
    for k, i in T.grid(16, 8):
        if k == 0:
            M[i] = T.max_value("float32")
            I[i] = -1
        I[i] = T.Select(M[i] <= A[i, k], I[i], k)
        M[i] = T.min(M[i], A[i, k])
        if k == 15:
            w0: T.int32 = T.Select(M[i] <= A[i, 16], I[i], 16)
            w1: T.float32 = T.Select(M[i] <= A[i, 16], M[i], A[i, 16])
            M[i] = w1
            I[i] = w0
''')
    assert_argmin_runs_the_same(f, sch.func)
