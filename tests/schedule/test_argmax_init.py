"""An argmax (argmin) as TVM writes it: a block whose ``T.init()`` starts both buffers.

``decompose_reduction`` moves the whole ``T.init()`` -- the value's store and the
index's -- before the loop, checked as one store is; ``rfactor`` moves it out first
and factors the two updates (:mod:`polypad.schedule.rfactor_arg`): the partial
winners start at the combiner's identity and the largest index, and the init's
values meet the winner of the steps as the original started from them.  Where no step
beats the init (a row of ``-inf``, or of values below an init of 0) the original keeps
the init's index, -1, and so does the factored kernel.

Each rewrite: the script it should print (read back and replayed), and the original
and rewritten kernels run on random inputs full of ties and rows of one infinity,
reference executor and Numba, bit for bit.  Refusals by class and counterexample.
"""

from __future__ import annotations

import numpy as np
import pytest
from argmax_support import assert_runs_the_same, tied_inputs
from kind_support import check_schedule

import codegen
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.schedule.rfactor import Factored
from polypad.script import parse

BLOCK = '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i, j in T.grid(4, 30):
        with T.block("argmax"):
            vi, vj = T.axis.remap("SR", [i, j])
            {init}
            I[vi] = {index}
            M[vi] = {value}
'''
INIT = '''with T.init():
                M[vi] = {m}
                I[vi] = {i}'''
ARGMAX = dict(index="T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])",
              value="T.max(M[vi], A[vi, vj])")
ARGMIN = dict(index="T.if_then_else(A[vi, vj] < M[vi], vj, I[vi])",
              value="T.min(M[vi], A[vi, vj])")
FLT_MAX = float(np.finfo(np.float32).max)


def block(m='T.float32("-inf")', i="-1", init=None, **update) -> str:
    return BLOCK.format(init=init or INIT.format(m=m, i=i), **(update or ARGMAX))


def test_decompose_reduction_moves_both_stores_of_the_t_init():
    f = parse(block())
    sch = Schedule(f)
    assert sch.decompose_reduction("argmax", "j") == []  # j pinned at 0: no loop
    check_schedule(f, sch, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        M[i] = T.float32("-inf")
        I[i] = -1
        for j in T.serial(30):
            with T.block("argmax"):
                vi, vj = T.axis.remap("SR", [i, j])
                I[vi] = T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])
                M[vi] = T.max(M[vi], A[vi, vj])
''')
    assert_runs_the_same(f, sch.func, started=False)
    whole = Schedule(f)
    assert whole.decompose_reduction("argmax", "i") == ["i_init"]
    check_schedule(f, whole, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i_init in T.serial(4):
        M[i_init] = T.float32("-inf")
        I[i_init] = -1
    for i, j in T.grid(4, 30):
        with T.block("argmax"):
            vi, vj = T.axis.remap("SR", [i, j])
            I[vi] = T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])
            M[vi] = T.max(M[vi], A[vi, vj])
''')
    assert_runs_the_same(f, whole.func, started=False)


def test_decompose_reduction_keeps_the_order_of_the_t_init():
    # The index's store first: the copy stores in the same order.
    f = parse(block(init='''with T.init():
                I[vi] = -1
                M[vi] = T.min_value("float32")'''))
    sch = Schedule(f)
    sch.decompose_reduction("argmax", "j")
    check_schedule(f, sch, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        I[i] = -1
        M[i] = T.min_value("float32")
        for j in T.serial(30):
            with T.block("argmax"):
                vi, vj = T.axis.remap("SR", [i, j])
                I[vi] = T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])
                M[vi] = T.max(M[vi], A[vi, vj])
''')
    assert_runs_the_same(f, sch.func, started=False)


def test_decompose_reduction_moves_a_hand_written_argmax_start_whole():
    # No T.init(): the row's start written before its steps (the zoo's argmax).
    f = parse('''
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
''')
    whole = Schedule(f)
    assert whole.decompose_reduction("argmax", "i") == ["i_init"]
    check_schedule(f, whole, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32")):
    M = T.alloc_buffer((4,), "float32")
    for i_init in T.serial(4):
        M[i_init] = A[i_init, 0]
        I[i_init] = 0
    for i in T.serial(4):
        with T.block("argmax"):
            for j in T.serial(1, 30):
                I[i] = T.if_then_else(A[i, j] > M[i], j, I[i])
                M[i] = T.max(M[i], A[i, j])
''')
    assert_runs_the_same(f, whole.func)


def test_rfactor_of_an_argmax_with_t_init_moves_the_init_out_first():
    f = parse(block())
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 8], tail="partition")
    made = sch.rfactor(j_1)
    assert made == Factored("M_rf", ["j_1_init"], ["j_0", "j_1"], ["j_1_wb"], decomposed=[],
                            index_buffer="I_rf")
    # The tail leaves out the T.init(), which never runs there (vj starts at 24).
    check_schedule(f, sch, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        M[i] = T.float32("-inf")
        I[i] = -1
        with T.decl_buffer((8,), "float32") as M_rf:
            I_rf = T.alloc_buffer((8,), "int32")
            for j_1_init in T.serial(8):
                M_rf[j_1_init] = T.float32("-inf")
                I_rf[j_1_init] = 2147483647
            for j_0, j_1 in T.grid(3, 8):
                with T.block("argmax"):
                    vi = T.axis.remap("S", [i])
                    vj = T.axis.reduce(30, j_0 * 8 + j_1)
                    I_rf[j_1] = T.if_then_else(A[vi, vj] > M_rf[j_1], vj, I_rf[j_1])
                    M_rf[j_1] = T.max(M_rf[j_1], A[vi, vj])
            for j_1_wb in T.serial(1, 8):
                I_rf[0] = T.if_then_else(
                    M_rf[j_1_wb] > M_rf[0], I_rf[j_1_wb],
                    T.if_then_else(M_rf[j_1_wb] == M_rf[0], T.min(I_rf[j_1_wb], I_rf[0]),
                                   I_rf[0]))
                M_rf[0] = T.if_then_else(I_rf[0] == I_rf[j_1_wb], M_rf[j_1_wb], M_rf[0])
            I[i] = T.if_then_else(M_rf[0] > M[i], I_rf[0], I[i])
            M[i] = T.max(M[i], M_rf[0])
        for j_1_tail in T.serial(6):
            with T.block("argmax"):
                vi = T.axis.remap("S", [i])
                vj = T.axis.reduce(30, j_1_tail + 24)
                I[vi] = T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])
                M[vi] = T.max(M[vi], A[vi, vj])
''')
    assert_runs_the_same(f, sch.func, started=False)
    sch.vectorize(j_1)  # each lane its own partial winner
    sch.parallel("i")
    assert_runs_the_same(f, sch.func, started=False)


@pytest.mark.parametrize(("m", "i", "row"), [
    ('T.float32("-inf")', "-1", (-1, -np.inf)),        # no step beats -inf: -1 stays
    ('T.min_value("float32")', "-1", (-1, -FLT_MAX)),  # TVM's spelling: finite
    ("T.float32(0)", "-1", (-1, 0.0)),                 # an init no identity: 0 wins the row
    ('T.float32("-inf")', "0", (0, -np.inf)),
])
def test_rfactor_of_an_argmax_meets_the_init_as_the_original_does(m, i, row):
    f = parse(block(m=m, i=i))
    # What the original computes on a row of -inf (rows 0 and 2 of seed 0): the init.
    arrays = tied_inputs(f, seed=0)
    codegen.build(f, target="python")(*arrays)
    a, index, value = arrays
    assert np.all(a[0] == -np.inf) and (index[0], value[0]) == row
    for split in (False, True):
        sch = Schedule(f)
        loop = sch.split("j", [None, 8], tail="partition")[1] if split else "j"
        made = sch.rfactor(loop)
        assert made.decomposed == ([] if split else ["i_init"])
        assert_runs_the_same(f, sch.func, started=False)


def test_rfactor_of_an_argmin_with_t_init_and_rows_of_infinity():
    f = parse(block(m='T.max_value("float32")', **ARGMIN))
    arrays = tied_inputs(f, seed=0, fill=np.inf)
    codegen.build(f, target="python")(*arrays)
    assert (arrays[1][0], arrays[2][0]) == (-1, FLT_MAX)  # no step below FLT_MAX
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 8], tail="partition")
    sch.rfactor(j_1)
    sch.vectorize(j_1)
    assert_runs_the_same(f, sch.func, started=False, fill=np.inf)
    assert_runs_the_same(f, sch.func, started=False)


def test_decompose_reduction_checks_every_store_of_the_t_init():
    # The index's init reads the value of the row before, which that row's steps wrote:
    # the init may not run before them.  The value's init alone would be legal.
    f = parse(block(i="T.Cast(\"int32\", M[(vi + 3) % 4])"))
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError) as caught:
        sch.decompose_reduction("argmax", "i")
    cex = caught.value.evidence
    assert [(x.statement, x.indices) for x in cex.instances] == [
        ("argmax_3", {"i": 0, "j": 29}), ("argmax_1", {"i": 1, "j": 0})]
    assert (cex.element.buffer, cex.element.indices) == ("M", (0,))
    assert cex.description.startswith("flow dependence")
    assert len(sch.trace) == 0
    # Within a row nothing runs before the init: j is fine.
    sch.decompose_reduction("argmax", "j")
    assert_runs_the_same(f, sch.func, started=False)


def test_rfactor_refuses_an_init_that_does_not_start_the_steps():
    # Not a T.init(): a restart at j == 3, after three steps that the moved init
    # would come before.
    f = parse(block(init='''if vj == 3:
                M[vi] = T.float32("-inf")
                I[vi] = -1'''))
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError,
                       match=r"^rfactor: the reduction's T.init\(\) cannot move before the "
                             r"nest, as rfactor needs: decompose_reduction would break a "
                             r"dependence") as caught:
        sch.rfactor("j")
    cex = caught.value.evidence
    assert [(x.statement, x.indices) for x in cex.instances] == [
        ("argmax_2", {"i": 0, "j": 2}), ("argmax_1", {"i": 0, "j": 3})]
    assert (cex.element.buffer, cex.element.indices) == ("I", (0,))  # the index's init
    assert cex.description.startswith("output dependence")
    assert len(sch.trace) == 0


def test_rfactor_of_a_t_init_argmax_refuses_an_index_that_does_not_increase():
    f = parse(block(index="T.if_then_else(A[vi, vj] > M[vi], 29 - vj, I[vi])",
                    value=ARGMAX["value"]))
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="does not increase from step to step") \
            as caught:
        sch.rfactor("j")
    steps = caught.value.evidence
    assert steps["i"] == steps["i'"] and steps["j"] < steps["j'"]
    assert len(sch.trace) == 0


def test_rfactor_of_a_t_init_last_index_argmax_is_refused_as_no_reduction():
    f = parse(block(index="T.if_then_else(A[vi, vj] >= M[vi], vj, I[vi])",
                    value=ARGMAX["value"]))
    with pytest.raises(PolypadError, match="it holds 4 statements .* an argmax, its index "
                                           "store then its value store"):
        Schedule(f).rfactor("j")


def test_a_t_init_of_the_index_alone_is_the_init_too():
    # The values start where the caller left them; the T.init() starts the index only.
    f = parse(block(init='''with T.init():
                I[vi] = -1'''))
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 8], tail="partition")
    assert sch.rfactor(j_1).decomposed == []
    assert_runs_the_same(f, sch.func, started=False)
    whole = Schedule(f)
    assert whole.decompose_reduction("argmax", "i") == ["i_init"]
    check_schedule(f, whole, '''
@T.prim_func
def argmax(A: T.Buffer((4, 30), "float32"), I: T.Buffer((4,), "int32"),
           M: T.Buffer((4,), "float32")):
    for i_init in T.serial(4):
        I[i_init] = -1
    for i, j in T.grid(4, 30):
        with T.block("argmax"):
            vi, vj = T.axis.remap("SR", [i, j])
            I[vi] = T.if_then_else(A[vi, vj] > M[vi], vj, I[vi])
            M[vi] = T.max(M[vi], A[vi, vj])
''')


def test_a_split_without_tail_factors_the_whole_grid_row_by_row():
    # 30 = 5 x 6: no tail, so the nest is the grid and the init moves before i.
    f = parse(block(m='T.min_value("float32")'))
    sch = Schedule(f)
    _, j_1 = sch.split("j", [None, 6])
    made = sch.rfactor(j_1, factor_axis=1)  # a row's lanes side by side
    assert made == Factored("M_rf", ["i_init_1", "j_1_init"], ["i", "j_0", "j_1"],
                            ["i_wb", "j_1_wb", "i_wb_1"], decomposed=["i_init"],
                            index_buffer="I_rf")
    shapes = {x.buffer.name: x.buffer.shape for x in walk(sch.func.body)
              if isinstance(x, n.Allocate)}
    assert shapes == {"M_rf": (4, 6), "I_rf": (4, 6)}
    sch.vectorize(j_1)
    sch.parallel("i")
    assert_runs_the_same(f, sch.func, started=False)
