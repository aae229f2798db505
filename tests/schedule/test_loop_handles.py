"""Loop handles that last: what ``get_loops`` and the primitives that make loops return
finds the same loop after other loops are split, fused, reordered or computed at.

A handle (:class:`polypad.ir.loop_names.LoopRef`) is a ``str`` -- the loop's name
when handed out -- holding the loop's variable.  The trace records each handle by the
loop's name at the time of the call, so a replay gives the same function; a handle
whose loop is gone says so, instead of finding another loop of that name.
"""

from __future__ import annotations

import pytest

from polypad.errors import NotFoundError
from polypad.ir.loop_names import LoopRef
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

SOFTMAX = parse('''
@T.prim_func
def softmax(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    M = T.alloc_buffer((4,), "float32")
    E = T.alloc_buffer((4, 8), "float32")
    S = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        with T.block("max"):
            M[i] = T.float32(-3.4e38)
            for j in T.serial(8):
                M[i] = T.max(M[i], A[i, j])
    for i, j in T.grid(4, 8):
        with T.block("exp"):
            E[i, j] = T.exp(A[i, j] - M[i])
    for i in T.serial(4):
        with T.block("sum"):
            S[i] = T.float32(0)
            for j in T.serial(8):
                S[i] = S[i] + E[i, j]
    for i, j in T.grid(4, 8):
        with T.block("div"):
            B[i, j] = E[i, j] / S[i]
''')


def test_a_handle_outlives_compute_at_renaming_its_loop():
    sch = Schedule(SOFTMAX)
    i, j = sch.get_loops("div")
    assert (i, j) == ("div/i", "div/j") and isinstance(i, LoopRef)
    sch.compute_at("sum", i)
    # sum is now the first block inside: the loop's name is sum/i, the handle still works.
    assert "div/i" not in sch.get_loops() and "sum/i" in sch.get_loops()
    sch.compute_at("exp", i)
    sch.compute_at("max", i)
    sch.parallel(i)
    sch.vectorize(j)
    # The trace names each loop as it was named at the call: a replay finds them.
    assert str(sch.trace).splitlines() == [
        "sch.compute_at(block='sum', loop='div/i')",
        "sch.compute_at(block='exp', loop='sum/i')",
        "sch.compute_at(block='max', loop='exp/i')",
        "sch.parallel(loop='i')",
        "sch.vectorize(loop='div/j')",
    ]
    assert_structural_equal(sch.trace.apply_to(SOFTMAX).func, sch.func)


def test_handles_outlive_split_fuse_and_reorder_of_other_loops():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6, 8), "float32")):
    for i, j, k in T.grid(4, 6, 8):
        with T.block("B"):
            B[i, j, k] = A[i, j, k] * T.float32(2)
    for i, j, k in T.grid(4, 6, 8):
        with T.block("C"):
            A[i, j, k] = B[i, j, k]
''')
    sch = Schedule(f)
    i, j, k = sch.get_loops("B")
    ci, cj, ck = sch.get_loops("C")
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(j, i)
    fused = sch.fuse(ci, cj)
    sch.parallel(i)         # handles from before every step
    sch.vectorize(k_1)
    sch.unroll(ck)
    assert fused == "i_j_fused"
    with pytest.raises(NotFoundError, match="'B/k' is no longer in function f: a rewrite "
                                            "replaced it"):
        sch.vectorize(k)    # split replaced it: its own handle is gone
    with pytest.raises(NotFoundError, match="no longer in function f"):
        sch.parallel(ci)    # fused away
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)


def test_a_plain_name_still_works_and_handles_compare_as_their_names():
    sch = Schedule(SOFTMAX)
    assert sch.get_loops("max") == ["max/i", "max/j"]
    sch.parallel("max/i")
    assert {sch.get_loops("exp")[0]: 1}["exp/i"] == 1
    assert str(sch.trace) == "sch.parallel(loop='max/i')"
