"""TVM's own argmax and argmin, as its rfactor tests write them (``T.Select`` bound by
lets, ``>=`` keeping the old pair on a tie), through ``rfactor`` and
``decompose_reduction``.

``ARGMAX_SPLIT`` and ``ARGMIN_SPLIT`` are apache/tvm's
tests/python/tir-schedule/test_tir_schedule_rfactor.py (v0.22.0) ``argmax_split``
and ``argmin_split_init_update_reordered``, verbatim but for ``-> None``; TVM 0.27
prints the same functions with ``T.sblock`` and ``T.let[T.int32]``
(``ARGMAX_SPLIT_027``), which read as the same.  Their index is read from data,
``idx[i, k]``: refused, with two tied steps whose ``idx`` values are out of order.
TVM factors them by rule, and its fold (the earlier lane's pair on a tie) is not the
nest's first best step either (polypad/schedule/rfactor_arg_data.py).  The same
functions indexed by the loop (``k`` for ``idx[i, k]``, as the refusal suggests) are
factored, and run bit for bit as the nest on inputs full of ties and rows of one
infinity, reference executor and Numba.
"""

from __future__ import annotations

import numpy as np
import pytest
from argmax_support import assert_runs_the_same
from kind_support import check_schedule

import codegen
from polypad.errors import IllegalTransformError, NotAffineError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.model.extract import extract
from polypad.schedule import Schedule
from polypad.schedule.rfactor import Factored
from polypad.script import parse

ARGMAX_SPLIT = '''
@T.prim_func
def argmax_split(
    idx: T.Buffer((128, 128), "int32"),
    val: T.Buffer((128, 128), "float32"),
    argmax_v0: T.Buffer((128,), "int32"),
    argmax_v1: T.Buffer((128,), "float32"),
):
    for i0, i1_0, i1_1 in T.grid(128, 4, 32):
        with T.block("argmax"):
            i = T.axis.spatial(128, i0)
            k = T.axis.reduce(128, i1_0 * 32 + i1_1)
            T.reads(idx[i, k], val[i, k])
            T.writes(argmax_v0[i], argmax_v1[i])
            with T.init():
                argmax_v0[i] = -1
                argmax_v1[i] = T.min_value("float32")
            v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])
            v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])
            argmax_v0[i] = v_argmax_v0
            argmax_v1[i] = v_argmax_v1
'''
ARGMAX_SPLIT_027 = '''
@T.prim_func(s_tir=True)
def argmax_split(
    idx: T.Buffer((128, 128), "int32"),
    val: T.Buffer((128, 128), "float32"),
    argmax_v0: T.Buffer((128,), "int32"),
    argmax_v1: T.Buffer((128,), "float32"),
) -> None:
    for i0, i1_0, i1_1 in T.grid(128, 4, 32):
        with T.sblock("argmax"):
            i = T.axis.spatial(128, i0)
            k = T.axis.reduce(128, i1_0 * 32 + i1_1)
            T.reads(idx[i, k], val[i, k])
            T.writes(argmax_v0[i], argmax_v1[i])
            with T.init():
                argmax_v0[i] = -1
                argmax_v1[i] = T.min_value("float32")
            v_argmax_v0: T.let[T.int32] = T.Select(
                argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k]
            )
            v_argmax_v1: T.let[T.float32] = T.Select(
                argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k]
            )
            argmax_v0[i] = v_argmax_v0
            argmax_v1[i] = v_argmax_v1
'''
ARGMIN_SPLIT = '''
@T.prim_func
def argmin_split_init_update_reordered(
    idx: T.Buffer((128, 128), "int32"),
    val: T.Buffer((128, 128), "float32"),
    argmin_v0: T.Buffer((128,), "int32"),
    argmin_v1: T.Buffer((128,), "float32"),
):
    for i0, i1_0, i1_1 in T.grid(128, 4, 32):
        with T.block("argmin"):
            i = T.axis.spatial(128, i0)
            k = T.axis.reduce(128, i1_0 * 32 + i1_1)
            T.reads(idx[i, k], val[i, k])
            T.writes(argmin_v0[i], argmin_v1[i])
            with T.init():
                argmin_v1[i] = T.max_value("float32")
                argmin_v0[i] = -1
            v_argmin_v0: T.int32 = T.Select(argmin_v1[i] <= val[i, k], argmin_v0[i], idx[i, k])
            v_argmin_v1: T.float32 = T.Select(argmin_v1[i] <= val[i, k], argmin_v1[i], val[i, k])
            argmin_v1[i] = v_argmin_v1
            argmin_v0[i] = v_argmin_v0
'''


def by_loop(text: str, rows: int = 4) -> str:
    """TVM's function indexed by the loop, ``k`` for ``idx[i, k]``, without ``idx``
    and on ``rows`` x 16 (split 4 x 4): small enough for the reference executor."""
    text = text.replace("T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])",
                        "T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], k)")
    text = text.replace("T.Select(argmin_v1[i] <= val[i, k], argmin_v0[i], idx[i, k])",
                        "T.Select(argmin_v1[i] <= val[i, k], argmin_v0[i], k)")
    text = text.replace('    idx: T.Buffer((128, 128), "int32"),\n', "")
    text = text.replace("T.reads(idx[i, k], val[i, k])", "T.reads(val[i, k])")
    text = text.replace("(128, 128)", f"({rows}, 16)").replace("(128,)", f"({rows},)")
    text = text.replace("T.grid(128, 4, 32)", f"T.grid({rows}, 4, 4)")
    text = text.replace("T.axis.spatial(128, i0)", f"T.axis.spatial({rows}, i0)")
    return text.replace("T.axis.reduce(128, i1_0 * 32 + i1_1)",
                        "T.axis.reduce(16, i1_0 * 4 + i1_1)")


def test_tvm_0_27_spelling_reads_as_the_0_22_one():
    assert_structural_equal(parse(ARGMAX_SPLIT_027), parse(ARGMAX_SPLIT))


@pytest.mark.parametrize(("text", "lane", "evidence"), [
    (ARGMAX_SPLIT, 2, {"i0": 0, "i1_0": 0, "i1_1": 0, "i0'": 0, "i1_0'": 0, "i1_1'": 1,
                       "idx[0, 0]": 1, "idx[0, 1]": 0, "val[0, 0]": 0.0, "val[0, 1]": 0.0}),
    (ARGMAX_SPLIT, 1, {"i0": 0, "i1_0": 0, "i1_1": 0, "i0'": 0, "i1_0'": 1, "i1_1'": 0,
                       "idx[0, 0]": 1, "idx[0, 32]": 0, "val[0, 0]": 0.0, "val[0, 32]": 0.0}),
    (ARGMIN_SPLIT, 2, {"i0": 0, "i1_0": 0, "i1_1": 0, "i0'": 0, "i1_0'": 0, "i1_1'": 1,
                       "idx[0, 0]": 1, "idx[0, 1]": 0, "val[0, 0]": 0.0, "val[0, 1]": 0.0}),
])
def test_rfactor_refuses_an_index_read_from_data(text, lane, evidence):
    f = parse(text)
    sch = Schedule(f)
    loop = sch.get_loops(f.body.body.body.body.name)[lane]
    with pytest.raises(IllegalTransformError) as info:
        sch.rfactor(loop, factor_axis=1)
    message = str(info.value)
    assert f"rfactor: the loop over {loop}: the index stored into" in message
    assert "is read from a buffer (idx)" in message
    assert "the nest stores 1, the factored fold 0" in message
    assert "Store the reduction's index instead" in message
    assert info.value.evidence == evidence
    # The counterexample, run: the nest keeps the first tied step's idx, 1; a fold
    # by the smaller index would keep 0.
    best = 0.0
    worse = 1.0 if "argmin" in f.name else -1.0
    val = np.full((128, 128), worse, np.float32)
    idx = np.zeros((128, 128), np.int32)
    (a, b) = [k for k in evidence if k.startswith("val")]
    for name, number in evidence.items():
        if name.startswith(("val", "idx")):
            row, col = (int(x) for x in name[4:-1].split(", "))
            (val if name.startswith("val") else idx)[row, col] = number
    assert val[0, int(a[7:-1])] == val[0, int(b[7:-1])] == best
    out0, out1 = np.zeros(128, np.int32), np.zeros(128, np.float32)
    codegen.build(f)(idx, val, out0, out1)
    assert out0[0] == 1 and min(idx[0, int(a[7:-1])], idx[0, int(b[7:-1])]) == 0


def test_rfactor_of_tvm_argmax_indexed_by_the_loop():
    f = parse(by_loop(ARGMAX_SPLIT))
    sch = Schedule(f)
    _, _, ki = sch.get_loops("argmax")
    made = sch.rfactor(ki, factor_axis=1)
    assert made == Factored("argmax_v1_rf", ["i0_init_1", "i1_1_init"], ["i0", "i1_0", "i1_1"],
                            ["i0_wb", "i1_1_wb", "i0_wb_1"], decomposed=["i0_init"],
                            index_buffer="argmax_v0_rf")
    # The lets inlined, each store as TVM wrote it; the fold takes the value of the
    # lane whose index won (bit for bit: -0.0 and 0.0 tie).
    check_schedule(f, sch, '''
@T.prim_func
def argmax_split(val: T.Buffer((4, 16), "float32"), argmax_v0: T.Buffer((4,), "int32"),
                 argmax_v1: T.Buffer((4,), "float32")):
    for i0_init in T.serial(4):
        argmax_v0[i0_init] = -1
        argmax_v1[i0_init] = T.min_value("float32")
    argmax_v1_rf = T.alloc_buffer((4, 4), "float32")
    argmax_v0_rf = T.alloc_buffer((4, 4), "int32")
    for i0_init_1, i1_1_init in T.grid(4, 4):
        argmax_v1_rf[i0_init_1, i1_1_init] = T.float32("-inf")
        argmax_v0_rf[i0_init_1, i1_1_init] = 2147483647
    for i0, i1_0, i1_1 in T.grid(4, 4, 4):
        with T.block("argmax"):
            i = T.axis.spatial(4, i0)
            k = T.axis.reduce(16, i1_0 * 4 + i1_1)
            T.reads(val[i, k])
            argmax_v0_rf[i0, i1_1] = T.if_then_else(argmax_v1_rf[i0, i1_1] >= val[i, k],
                                                    argmax_v0_rf[i0, i1_1], k)
            argmax_v1_rf[i0, i1_1] = T.if_then_else(argmax_v1_rf[i0, i1_1] >= val[i, k],
                                                    argmax_v1_rf[i0, i1_1], val[i, k])
    for i0_wb in T.serial(4):
        for i1_1_wb in T.serial(1, 4):
            argmax_v0_rf[i0_wb, 0] = T.if_then_else(
                argmax_v1_rf[i0_wb, i1_1_wb] > argmax_v1_rf[i0_wb, 0],
                argmax_v0_rf[i0_wb, i1_1_wb],
                T.if_then_else(argmax_v1_rf[i0_wb, i1_1_wb] == argmax_v1_rf[i0_wb, 0],
                               T.min(argmax_v0_rf[i0_wb, i1_1_wb], argmax_v0_rf[i0_wb, 0]),
                               argmax_v0_rf[i0_wb, 0]))
            argmax_v1_rf[i0_wb, 0] = T.if_then_else(
                argmax_v0_rf[i0_wb, 0] == argmax_v0_rf[i0_wb, i1_1_wb],
                argmax_v1_rf[i0_wb, i1_1_wb], argmax_v1_rf[i0_wb, 0])
    for i0_wb_1 in T.serial(4):
        argmax_v0[i0_wb_1] = T.if_then_else(argmax_v1_rf[i0_wb_1, 0] > argmax_v1[i0_wb_1],
                                            argmax_v0_rf[i0_wb_1, 0], argmax_v0[i0_wb_1])
        argmax_v1[i0_wb_1] = T.if_then_else(argmax_v1[i0_wb_1] >= argmax_v1_rf[i0_wb_1, 0],
                                            argmax_v1[i0_wb_1], argmax_v1_rf[i0_wb_1, 0])
''')
    assert_runs_the_same(f, sch.func, started=False)
    # Rows of T.min_value: no step beats the init, which keeps -1 (the lanes took them).
    assert_runs_the_same(f, sch.func, started=False, fill=-float(np.finfo(np.float32).max))
    sch.vectorize(ki)  # each lane its own partial winner
    sch.parallel("i0")
    assert_runs_the_same(f, sch.func, started=False)


def test_rfactor_of_tvm_argmin_stored_value_first():
    # TVM stores the value first; the stores are put index first, which reads the
    # same: both lets read the buffers before either store.
    f = parse(by_loop(ARGMIN_SPLIT))
    sch = Schedule(f)
    _, i1_0, _ = sch.get_loops("argmin")
    made = sch.rfactor(i1_0)  # chunks of k, each a partial winner
    assert made == Factored("argmin_v1_rf", ["i0_init_1", "i1_0_init"], ["i0", "i1_0", "i1_1"],
                            ["i0_wb", "i1_0_wb", "i0_wb_1"], decomposed=["i0_init"],
                            index_buffer="argmin_v0_rf")
    check_schedule(f, sch, '''
@T.prim_func
def argmin_split_init_update_reordered(val: T.Buffer((4, 16), "float32"),
                                       argmin_v0: T.Buffer((4,), "int32"),
                                       argmin_v1: T.Buffer((4,), "float32")):
    for i0_init in T.serial(4):
        argmin_v1[i0_init] = T.max_value("float32")
        argmin_v0[i0_init] = -1
    argmin_v1_rf = T.alloc_buffer((4, 4), "float32")
    argmin_v0_rf = T.alloc_buffer((4, 4), "int32")
    for i0_init_1, i1_0_init in T.grid(4, 4):
        argmin_v1_rf[i1_0_init, i0_init_1] = T.float32("inf")
        argmin_v0_rf[i1_0_init, i0_init_1] = 2147483647
    for i0, i1_0, i1_1 in T.grid(4, 4, 4):
        with T.block("argmin"):
            i = T.axis.spatial(4, i0)
            k = T.axis.reduce(16, i1_0 * 4 + i1_1)
            T.reads(val[i, k])
            argmin_v0_rf[i1_0, i0] = T.if_then_else(argmin_v1_rf[i1_0, i0] <= val[i, k],
                                                    argmin_v0_rf[i1_0, i0], k)
            argmin_v1_rf[i1_0, i0] = T.if_then_else(argmin_v1_rf[i1_0, i0] <= val[i, k],
                                                    argmin_v1_rf[i1_0, i0], val[i, k])
    for i0_wb in T.serial(4):
        for i1_0_wb in T.serial(1, 4):
            argmin_v0_rf[0, i0_wb] = T.if_then_else(
                argmin_v1_rf[i1_0_wb, i0_wb] < argmin_v1_rf[0, i0_wb],
                argmin_v0_rf[i1_0_wb, i0_wb],
                T.if_then_else(argmin_v1_rf[i1_0_wb, i0_wb] == argmin_v1_rf[0, i0_wb],
                               T.min(argmin_v0_rf[i1_0_wb, i0_wb], argmin_v0_rf[0, i0_wb]),
                               argmin_v0_rf[0, i0_wb]))
            argmin_v1_rf[0, i0_wb] = T.if_then_else(
                argmin_v0_rf[0, i0_wb] == argmin_v0_rf[i1_0_wb, i0_wb],
                argmin_v1_rf[i1_0_wb, i0_wb], argmin_v1_rf[0, i0_wb])
    for i0_wb_1 in T.serial(4):
        argmin_v0[i0_wb_1] = T.if_then_else(argmin_v1_rf[0, i0_wb_1] < argmin_v1[i0_wb_1],
                                            argmin_v0_rf[0, i0_wb_1], argmin_v0[i0_wb_1])
        argmin_v1[i0_wb_1] = T.if_then_else(argmin_v1[i0_wb_1] <= argmin_v1_rf[0, i0_wb_1],
                                            argmin_v1[i0_wb_1], argmin_v1_rf[0, i0_wb_1])
''')
    assert_runs_the_same(f, sch.func, started=False, fill=np.inf)


@pytest.mark.parametrize(("index", "legal"), [
    ("k * 2 + 1", True),          # affine, increasing: isl proves it
    ("15 - k", False),            # decreasing: the fold's smaller index is the last
])
def test_rfactor_checks_an_index_computed_from_the_loop(index, legal):
    f = parse(by_loop(ARGMAX_SPLIT).replace("argmax_v0[i], k)", f"argmax_v0[i], {index})"))
    sch = Schedule(f)
    _, _, ki = sch.get_loops("argmax")
    if legal:
        sch.rfactor(ki, factor_axis=1)
        assert_runs_the_same(f, sch.func, started=False)
        return
    with pytest.raises(IllegalTransformError, match="does not increase from step to step"):
        sch.rfactor(ki, factor_axis=1)


def test_rfactor_keeps_the_bits_of_the_first_tied_zero():
    # -0.0 at j = 1 (lane 1), 0.0 at j = 4 (lane 0): the nest keeps -0.0 and index 1;
    # the fold must take the value from the lane whose index won.
    for update in ("T.max(M[i], A[i, j])", "T.if_then_else(M[i] >= A[i, j], M[i], A[i, j])"):
        f = parse(f'''
@T.prim_func
def argmax(A: T.Buffer((1, 8), "float32"), I: T.Buffer((1,), "int32"),
           M: T.Buffer((1,), "float32")):
    for i, j in T.grid(1, 8):
        I[i] = T.if_then_else(A[i, j] > M[i], j, I[i])
        M[i] = {update}
''')
        sch = Schedule(f)
        _, j_1 = sch.split("j", [None, 4])
        sch.rfactor(j_1)
        for target in ("python", "numba"):
            for func in (f, sch.func):
                a = np.full((1, 8), -1, np.float32)
                a[0, 1], a[0, 4] = -0.0, 0.0
                index, value = np.full(1, -1, np.int32), np.full(1, -np.inf, np.float32)
                codegen.build(func, target=target)(a, index, value)
                assert index[0] == 1 and np.signbit(value[0]), (update, target)


def test_decompose_reduction_of_tvm_argmax():
    f = parse(by_loop(ARGMAX_SPLIT))
    sch = Schedule(f)
    assert sch.decompose_reduction("argmax", "i1_0") == []
    check_schedule(f, sch, '''
@T.prim_func
def argmax_split(val: T.Buffer((4, 16), "float32"), argmax_v0: T.Buffer((4,), "int32"),
                 argmax_v1: T.Buffer((4,), "float32")):
    for i0 in T.serial(4):
        argmax_v0[i0] = -1
        argmax_v1[i0] = T.min_value("float32")
        for i1_0, i1_1 in T.grid(4, 4):
            with T.block("argmax"):
                i = T.axis.spatial(4, i0)
                k = T.axis.reduce(16, i1_0 * 4 + i1_1)
                T.reads(val[i, k])
                T.writes(argmax_v0[i], argmax_v1[i])
                argmax_v0[i] = T.if_then_else(argmax_v1[i] >= val[i, k], argmax_v0[i], k)
                argmax_v1[i] = T.if_then_else(argmax_v1[i] >= val[i, k], argmax_v1[i],
                                              val[i, k])
''')
    assert_runs_the_same(f, sch.func, started=False)


def test_vectorize_the_rows_of_tvm_argmax():
    # The let form as written: the model reads each let at the one store that uses it.
    f = parse(by_loop(ARGMAX_SPLIT, rows=16))
    sch = Schedule(f)
    i0, i1_0, i1_1 = sch.get_loops("argmax")
    sch.reorder(i1_0, i1_1, i0)
    sch.vectorize(i0)
    assert_runs_the_same(f, sch.func, started=False)


def test_the_model_refuses_a_let_read_after_its_buffer_changed():
    # TVM's argmin stores the value first, then the index, whose let read the value
    # before that store: a model reading the let at the index's store would be wrong.
    extract(parse(by_loop(ARGMAX_SPLIT)))
    with pytest.raises(NotAffineError, match="v_argmin_v0's value"):
        extract(parse(by_loop(ARGMIN_SPLIT)))


def test_a_let_stored_twice_is_no_argmax():
    # TVM's argmax_split_one_let_var_used_multi_times, our spelling: refused as in TVM.
    text = by_loop(ARGMAX_SPLIT).replace("argmax_v1[i] = v_argmax_v1",
                                         "argmax_v1[i] = v_argmax_v0")
    sch = Schedule(parse(text.replace('"float32"', '"int32"').replace("T.float32", "T.int32")))
    _, _, ki = sch.get_loops("argmax")
    with pytest.raises(PolypadError, match="must hold one store, a reduction"):
        sch.rfactor(ki, factor_axis=1)


@pytest.mark.parametrize(("index", "value"), [
    ("T.Select(M[i] >= A[i, k], I[i], k)", "T.Select(M[i] >= A[i, k], M[i], A[i, k])"),
    ("T.Select(A[i, k] > M[i], k, I[i])", "T.Select(A[i, k] > M[i], A[i, k], M[i])"),
    ("T.Select(M[i] < A[i, k], k, I[i])", "T.max(M[i], A[i, k])"),
])
def test_rfactor_of_the_let_form_without_init(index, value):
    # Each spelling that moves the index on a strict win, value stored first.
    f = parse(f'''
@T.prim_func
def argmax(A: T.Buffer((4, 16), "float32"), M: T.Buffer((4,), "float32"),
           I: T.Buffer((4,), "int32")):
    for i0, k0 in T.grid(4, 16):
        with T.block("argmax"):
            i, k = T.axis.remap("SR", [i0, k0])
            v0: T.int32 = {index}
            v1: T.float32 = {value}
            M[i] = v1
            I[i] = v0
''')
    sch = Schedule(f)
    _, k_1 = sch.split("k0", [None, 4])
    made = sch.rfactor(k_1)
    assert (made.buffer, made.index_buffer) == ("M_rf", "I_rf")
    assert_runs_the_same(f, sch.func)  # M, I start at A[i, 0], 0
