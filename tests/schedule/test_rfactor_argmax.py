"""``rfactor`` of an argmax (argmin): the index and value stores factored together.

An argmax updates two buffers per step (:class:`analyses.combiners.ArgUpdate`);
``rfactor`` gives each value of the factored loop a partial winner, value and
index, folds them into lane 0 by (best value, then smaller index) and meets the
value and index the nest started from with the update itself.  Checked as every
rewrite is: the script it should print, read back and replayed, and the original
and factored kernels run on random inputs full of ties (and rows of ``-inf``) with
the reference executor and Numba, bit for bit.  Refusals by class and witness.
"""

from __future__ import annotations

import pytest
from argmax_support import assert_runs_the_same
from kind_support import check_schedule

from analyses.combiners import arg_update_of
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.schedule.rfactor import Factored
from polypad.script import parse

# M and I come in started (M[i] = A[i, 0], I[i] = 0, as a caller would), so the
# whole nest is the reduction and i is a loop of it.
GRID = '''
@T.prim_func
def f(A: T.Buffer((4, 12), "float32"), M: T.Buffer((4,), "float32"),
      I: T.Buffer((4,), "int32")):
    for i, j in T.grid(4, 12):
        I[i] = {index}
        M[i] = {value}
'''
ARGMAX = dict(index="T.if_then_else(A[i, j] > M[i], j, I[i])", value="T.max(M[i], A[i, j])")

# The zoo's argmax: the row's start inside the row loop, the steps from j = 1.
ROWS = '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32")):
    M = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        with T.block("argmax"):
            M[i] = A[i, 0]
            I[i] = 0
            for j in T.serial(1, 30):
                I[i] = T.if_then_else(A[i, j] > M[i], j, I[i])
                M[i] = T.max(M[i], A[i, j])
'''


def test_rfactor_of_an_argmax_factors_the_index_with_the_value():
    f = parse(GRID.format(**ARGMAX))
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 4])
    made = sch.rfactor(j_1, factor_axis=1)
    assert made == Factored("M_rf", ["i_init", "j_1_init"], ["i", "j_0", "j_1"],
                            ["i_wb", "j_1_wb", "i_wb_1"], index_buffer="I_rf")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((4, 12), "float32"), M: T.Buffer((4,), "float32"),
      I: T.Buffer((4,), "int32")):
    with T.decl_buffer((4, 4), "float32") as M_rf:
        I_rf = T.alloc_buffer((4, 4), "int32")
        for i_init, j_1_init in T.grid(4, 4):
            M_rf[i_init, j_1_init] = T.float32("-inf")
            I_rf[i_init, j_1_init] = 2147483647
        for i, j_0, j_1 in T.grid(4, 3, 4):
            I_rf[i, j_1] = T.if_then_else(A[i, j_0 * 4 + j_1] > M_rf[i, j_1], j_0 * 4 + j_1,
                                          I_rf[i, j_1])
            M_rf[i, j_1] = T.max(M_rf[i, j_1], A[i, j_0 * 4 + j_1])
        for i_wb in T.serial(4):
            for j_1_wb in T.serial(1, 4):
                I_rf[i_wb, 0] = T.if_then_else(
                    M_rf[i_wb, j_1_wb] > M_rf[i_wb, 0], I_rf[i_wb, j_1_wb],
                    T.if_then_else(M_rf[i_wb, j_1_wb] == M_rf[i_wb, 0],
                                   T.min(I_rf[i_wb, j_1_wb], I_rf[i_wb, 0]), I_rf[i_wb, 0]))
                M_rf[i_wb, 0] = T.if_then_else(I_rf[i_wb, 0] == I_rf[i_wb, j_1_wb],
                                               M_rf[i_wb, j_1_wb], M_rf[i_wb, 0])
        for i_wb_1 in T.serial(4):
            I[i_wb_1] = T.if_then_else(M_rf[i_wb_1, 0] > M[i_wb_1], I_rf[i_wb_1, 0], I[i_wb_1])
            M[i_wb_1] = T.max(M[i_wb_1], M_rf[i_wb_1, 0])
''')
    assert_runs_the_same(f, sch.func)
    sch.vectorize(j_1)  # each lane its own partial winner
    sch.parallel("i")
    assert_runs_the_same(f, sch.func)


@pytest.mark.parametrize(("index", "value"), [
    ("T.if_then_else(M[i] < A[i, j], j, I[i])", "T.max(A[i, j], M[i])"),
    ("T.if_then_else(M[i] >= A[i, j], I[i], j)", "T.max(M[i], A[i, j])"),
    ("T.if_then_else(A[i, j] < M[i], j, I[i])", "T.min(M[i], A[i, j])"),    # argmin
    ("T.if_then_else(A[i, j] >= M[i], I[i], j * 2 + 1)", "T.min(M[i], A[i, j])"),
])
def test_every_spelling_of_a_first_index_argmax_or_argmin_factors_exactly(index, value):
    f = parse(GRID.format(index=index, value=value))
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 4])
    sch.rfactor(j_1)
    assert_runs_the_same(f, sch.func)


def test_the_zoo_argmax_factors_inside_its_row_and_vectorizes():
    f = parse(ROWS)
    sch = Schedule(f)
    _, lanes = sch.split("j", [None, 16], tail="partition")
    made = sch.rfactor(lanes)
    assert made == Factored("M_rf", ["j_1_init"], ["j_0", "j_1"], ["j_1_wb"],
                            index_buffer="I_rf")
    sch.vectorize(lanes)
    sch.parallel("i")
    rf = {x.buffer.name: x.buffer.shape for x in walk(sch.func.body)
          if isinstance(x, n.Allocate)}
    assert rf == {"M": (4,), "M_rf": (16,), "I_rf": (16,)}  # the row's own lanes
    assert_runs_the_same(f, sch.func)


def test_arg_update_of_takes_the_first_index_forms_only():
    def pair(index, value):
        return [x for x in walk(parse(GRID.format(index=index, value=value)).body)
                if isinstance(x, n.BufferStore)]

    arg = arg_update_of(*pair(**ARGMAX))
    assert (arg.update.combiner.name, arg.index_buffer.name, arg.update.buffer.name) == (
        "max", "I", "M")
    assert isinstance(arg.index, n.Var) and arg.index.name == "j"
    # The last index of the best value (>=) does not combine with an identity.
    assert arg_update_of(*pair("T.if_then_else(A[i, j] >= M[i], j, I[i])",
                               ARGMAX["value"])) is None
    # A strict argmax of an argmin's value: not one.
    assert arg_update_of(*pair("T.if_then_else(A[i, j] > M[i], j, I[i])",
                               "T.min(M[i], A[i, j])")) is None
    # The value first: the index would compare with the new value.
    index, value = pair(**ARGMAX)
    assert arg_update_of(value, index) is None
    # An index that reads the value buffer.
    assert arg_update_of(*pair("T.if_then_else(A[i, j] > M[i], T.int32(M[i]), I[i])",
                               ARGMAX["value"])) is None


def test_rfactor_refuses_an_index_that_does_not_increase():
    f = parse(GRID.format(index="T.if_then_else(A[i, j] > M[i], 11 - j, I[i])",
                          value=ARGMAX["value"]))
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="does not increase from step to step") \
            as caught:
        sch.rfactor("j")
    steps = caught.value.evidence
    assert steps["i"] == steps["i'"] and steps["j"] < steps["j'"]  # j runs before j'
    assert len(sch.trace) == 0


def test_rfactor_of_a_last_index_argmax_is_refused_as_no_reduction():
    f = parse(GRID.format(index="T.if_then_else(A[i, j] >= M[i], j, I[i])",
                          value=ARGMAX["value"]))
    with pytest.raises(PolypadError, match="an argmax, its index store then its value store"):
        Schedule(f).rfactor("j")
