"""TVM's lowered cross-thread reduction: ``T.tvm_thread_allreduce`` under ``T.comm_reducer``.

The functions are TVM 0.27's own (``tests/tvm_corpus_wide.py``: a min over 10
threads, a sum over 4 threads after a serial part, a max over 32, argmax's
two-value reducer over 16), lowered by its ``LowerCrossThreadReduction``.
polypad reads each into a :class:`~polypad.ir.nodes.ThreadAllReduce`, prints it
back as TVM wrote it, and lowers it to a shared-buffer tree between two thread
loops (:mod:`polypad.semantics.lower_allreduce`) that the reference executor
and Numba run serially (the corpus test checks the reference executor against
TVM's llvm build; the cuda tests run the same on the simulator).  What the
lowering cannot keep is refused: a combiner that is not commutative or not
associative (Z3's counterexample), a thread's private memory across the
reduction, a reduction over another thread axis than the loop around it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import polypad as pp
from polypad.errors import BuildError, ParseError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.semantics.lower_allreduce import lower_allreduce

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

tvm = pytest.importorskip("tvm")

from allreduce_programs import TWO_IN_ONE_LOOP  # noqa: E402
from bench_tvm_wide import _compare, _tvm_run, inputs  # noqa: E402
from tvm_corpus_wide import ALLREDUCE, wide_corpus  # noqa: E402

import codegen  # noqa: E402
from analyses.evidence import Proved, Refuted  # noqa: E402
from analyses.reducer_laws import reducer_laws  # noqa: E402


def _text(name: str) -> str:
    return next(text for n_, _, text in wide_corpus() if n_ == name)


def _func(text: str, name: str = "f") -> n.PrimFunc:
    (func,) = pp.parse(text, filename=name).funcs
    return func


def _allreduce(func: n.PrimFunc) -> n.ThreadAllReduce:
    (found,) = [x for x in walk(func.body) if isinstance(x, n.ThreadAllReduce)]
    return found


def test_the_min_reduction_reads_into_one_statement_with_its_reducer():
    func = _func(_text("min_cross_thread_lowered"))
    found = _allreduce(func)
    (x,), (y,) = found.reducer.lhs, found.reducer.rhs
    assert found.reducer.results == (n.Min(x, y),)
    assert found.reducer.identities == (n.FloatImm(3.4028234663852886e38, "float32"),)
    assert found.condition == n.BoolImm(True)
    assert [t.buffer.name for t in found.targets] == ["cross_thread_x_red"]
    assert [v.name for v in found.threads] == ["k1"]


def test_argmax_reads_its_two_value_reducer():
    found = _allreduce(_func(_text("argmax_cross_thread_lowered")))
    assert [v.dtype for v in found.reducer.lhs] == ["int32", "float32"]
    assert len(found.values) == 2 and len(found.targets) == 2


#: ``min_cross_thread_lowered`` after lower_allreduce, written by hand in polypad's
#: syntax: 10 threads offer, the tree folds 16 -> 1 (its first step the 2 above 8),
#: every thread then reads the result.
EXPECTED_MIN = '''
@T.prim_func
def main(x: T.Buffer((4, 10), "float32"), x_red: T.Buffer((4,), "float32")):
    FUNC_ATTR
    x_1 = T.decl_buffer((40,), "float32", data=x.data)
    x_red_1 = T.decl_buffer((4,), "float32", data=x_red.data)
    with T.launch_thread("blockIdx.x", 4) as ax0:
        cross_thread_x_red = T.alloc_buffer((1,), "float32", scope="local", annotations=HINTS)
        red_buf0 = T.alloc_buffer((10,), "float32", scope="shared")
        with T.launch_thread("threadIdx.x", 10) as k1:
            red_buf0[k1] = x_1[ax0 * 10 + k1]
        with T.launch_thread("threadIdx.x", 2) as s0:
            red_buf0[s0] = T.min(red_buf0[s0], red_buf0[s0 + 8])
        with T.launch_thread("threadIdx.x", 4) as s1:
            red_buf0[s1] = T.min(red_buf0[s1], red_buf0[s1 + 4])
        with T.launch_thread("threadIdx.x", 2) as s2:
            red_buf0[s2] = T.min(red_buf0[s2], red_buf0[s2 + 2])
        with T.launch_thread("threadIdx.x", 1) as s3:
            red_buf0[s3] = T.min(red_buf0[s3], red_buf0[s3 + 1])
        with T.launch_thread("threadIdx.x", 10) as k1:
            cross_thread_x_red[0] = red_buf0[0]
            if k1 == 0:
                x_red_1[ax0] = cross_thread_x_red[0]
'''


def test_the_lowering_is_a_tree_between_two_thread_loops():
    text = _text("min_cross_thread_lowered")
    lowered = lower_allreduce(_func(text))
    func_attr = next(line.strip() for line in text.splitlines() if "T.func_attr(" in line)
    hints = '{"buffer_allocated_addr": [], "buffer_data_alignment": 64}'
    expected = EXPECTED_MIN.replace("FUNC_ATTR", func_attr).replace("HINTS", hints)
    assert_structural_equal(lowered, pp.parse(expected))


def test_the_serial_part_before_the_reduction_stays_in_the_first_loop():
    """The sum over 4 threads: each thread's serial sum into its local in_thread_x_red is
    offered from the same loop; the allocation between the loops is in both."""
    lowered = lower_allreduce(_func(_text("sum_split_cross_thread_lowered")))
    loops = [x for x in walk(lowered.body) if isinstance(x, n.For)
             and x.kind is n.ForKind.THREAD_IDX_X]
    assert [x.extent.value for x in loops] == [4, 2, 1, 4]
    first, *_, last = loops
    assert any(isinstance(x, n.For) and x.kind is n.ForKind.SERIAL for x in walk(first))
    assert not any(isinstance(x, n.For) for x in walk(last.body))


@pytest.mark.parametrize("name", ALLREDUCE)
def test_numba_and_the_reference_agree_with_tvm(name):
    func = _func(_text(name), name)
    args = inputs(func, name)
    want = _tvm_run(name, args)
    for target in ("python", "numba"):
        got = [a.copy() for a in args]
        codegen.build(func, target=target)(*got)
        assert _compare(got, want) is None, (name, target)


@pytest.mark.parametrize("name", ALLREDUCE)
def test_it_prints_back_as_tvm_wrote_it(name):
    text = _text(name)
    made = pp.parse(text, filename=name)
    printed = pp.script(made)
    assert_structural_equal(pp.parse(printed), made)
    # The call word for word (TVM's structural equality of the whole, the reducer's
    # literals included, is the wide corpus test's).
    calls = [line.strip() for line in text.splitlines() if "T.tvm_thread_allreduce(" in line]
    assert calls and all(line in printed for line in calls), calls


# ---------------------------------------------------------------- refusals


def _changed(name: str, old: str, new: str) -> str:
    text = _text(name)
    assert old in text
    return text.replace(old, new)


def test_a_combiner_that_is_not_commutative_is_refused_with_values():
    func = _func(_changed("min_cross_thread_lowered", "T.min(x0, y0)", "x0 - y0"))
    with pytest.raises(BuildError, match=r"^cannot build 'main': the cross-thread reduction "
                                         r"at f:\d+:\d+ has a combiner that is not "
                                         r"commutative: .* \(the combiner is not commutative; "
                                         r"values: x0_a=.*, x0_b="):
        codegen.build(func, target="python")
    decision = reducer_laws(_allreduce(func).reducer)
    assert isinstance(decision, Refuted)
    values = decision.counterexample.values
    a, b = (float(values[k].as_fraction()) for k in ("x0_a", "x0_b"))
    assert a - b != b - a


@pytest.mark.parametrize("name", ALLREDUCE)
def test_tvms_reducers_are_proved_commutative_and_associative(name):
    func = _func(_text(name))
    for found in (x for x in walk(func.body) if isinstance(x, n.ThreadAllReduce)):
        assert reducer_laws(found.reducer) == Proved("z3")


def test_a_combiner_that_is_not_associative_is_refused():
    func = _func(_changed("min_cross_thread_lowered", "T.min(x0, y0)",
                          "(x0 + y0) * T.float32(0.5)"))
    with pytest.raises(BuildError, match="combiner that is not associative"):
        codegen.build(func, target="numba")


def test_private_memory_read_across_the_reduction_is_refused():
    func = _func(_changed("sum_split_cross_thread_lowered",
                          "x_red_1[ax0] = cross_thread_x_red[0]",
                          "x_red_1[ax0] = cross_thread_x_red[0] + in_thread_x_red[0]"))
    with pytest.raises(BuildError, match="in_thread_x_red \\(local\\) is written before it "
                                         "and read after it"):
        codegen.build(func, target="python")


def test_a_reduction_over_another_thread_axis_is_refused():
    func = _func(_changed("min_cross_thread_lowered", "cross_thread_x_red[0], k1)",
                          "cross_thread_x_red[0], ax0)"))
    with pytest.raises(BuildError, match=r"reduces over \(ax0\), which is not the one thread "
                                         "loop around it"):
        codegen.build(func, target="python")


def test_a_value_count_unlike_the_reducer_is_a_parse_error_at_its_place():
    text = _changed("min_cross_thread_lowered", "T.tvm_thread_allreduce(T.uint32(1)",
                    "T.tvm_thread_allreduce(T.uint32(2)")
    with pytest.raises(ParseError, match="combines 1 value") as info:
        pp.parse(text, filename="f")
    line = text.splitlines()[info.value.lineno - 1]
    assert line[info.value.col - 1:].startswith("T.uint32(2)")


def test_a_reducer_outside_reduce_scope_is_still_refused_by_name():
    text = _changed("min_cross_thread_lowered", '"reduce_scope"', '"other"')
    with pytest.raises(ParseError, match='T.comm_reducer is the node of a "reduce_scope"'):
        pp.parse(text, filename="f")


def test_the_tree_combines_every_thread_once_on_random_inputs():
    """Independent of TVM: the lowered max over 32 threads is numpy's max."""
    func = _func(_text("max_cross_thread_lowered"))
    x = np.random.default_rng(1).uniform(-1, 1, (2, 32)).astype("float32")
    out = np.zeros(2, "float32")
    codegen.build(func, target="python")(x, out)
    np.testing.assert_array_equal(out, x.max(axis=1))


def test_two_reductions_in_one_thread_loop_split_it_twice():
    f = pp.parse(TWO_IN_ONE_LOOP)
    lowered = lower_allreduce(f)
    loops = [x.extent.value for x in walk(lowered.body) if isinstance(x, n.For)
             and x.kind is n.ForKind.THREAD_IDX_X]
    assert loops == [8, 4, 2, 1, 8, 4, 2, 1, 8]
    a = np.random.default_rng(2).uniform(-1, 1, (2, 8)).astype("float32")
    for target in ("python", "numba"):
        m, s = np.zeros(2, "float32"), np.zeros(2, "float32")
        codegen.build(f, target=target)(a, m, s)
        np.testing.assert_array_equal(m, a.max(axis=1), target)
        want = np.exp(a[:, :6] - a.max(axis=1, keepdims=True)).sum(axis=1)
        np.testing.assert_allclose(s, want, rtol=1e-6, err_msg=target)
    assert pp.structural_equal(pp.parse(pp.script(f)), f)


def test_the_analyses_answer_unknown_by_name_until_it_is_lowered():
    """The model does not hold the reduction: an analysis of the function as read names
    it (rather than answering on the other statements alone); of its lowering, it answers."""
    import analyses

    func = _func(_text("min_cross_thread_lowered"))
    found = analyses.check_bounds(func)
    assert isinstance(found, analyses.Unknown)
    assert "T.tvm_thread_allreduce at line 15 is a cross-thread reduction" in found.reason
    lowered = analyses.check_bounds(lower_allreduce(func))
    assert isinstance(lowered, analyses.Proved)
