"""Every pass, decider and schedule primitive on a 10,000-term sum and on a 64-deep
loop nest (issue 21, section 4): each works, or refuses with a ``PolypadError``
(``TooDeepError`` past some 40,000 levels) -- never ``RecursionError``, never a
crash.  Their front doors move a deep function onto a big stack
(:mod:`polypad.ir.deep`).

What each test checks besides "no exception" (programs: ``deep_support``):

* every result is verified and prints;
* a 10,000-term result, printed with each run ``X + X + ... + X`` collapsed,
  is the 3-term program's result printed the same way: the pass did to the
  long sum exactly what it does to a short one, whose result parses back to
  itself and runs like its original in the reference executor; a pass's
  long result parses back to itself too;
* a 64-deep result parses back to itself and runs like its original;
* a primitive's trace replays: the nest's on the nest, the long sum's on the
  short sum (the same steps), and one schedule's on the long sum itself;
* a decider gives the verdict the table says (the short sum's, except where
  the long sum's facts are past the prover's size limit: then ``Unknown``).

10,000-term trees are hundreds of thousands of objects, which each of
Python's full garbage collections walks; nothing here makes reference cycles,
so the module runs with the collector off (it collects once at the end).
"""

from __future__ import annotations

import functools
import gc

import islpy as isl
import numpy as np
import pytest
from deep_support import SHORT, TERMS, collapsed, parsed
from inputs_support import make_inputs

import analyses
import codegen
import polypad as pp
from analyses import Proved, Refuted, Unknown
from analyses.conditional import Removable
from polypad import budget
from polypad.errors import IllegalTransformError, PolypadError, TooDeepError
from polypad.ir import deep_worker
from polypad.ir import nodes as n
from polypad.ir.verify import verify
from polypad.ir.visitor import walk

SHAPES = ["sum", "nest"]


#: The default budget while this module runs: it checks answers, not speed.  Its
#: 64-deep questions take one or two CPU seconds each; on a loaded machine (at load 6,
#: or with another process busy on each core at nice 19) that is past the 10 s
#: default in wall time, and the answer became Unknown or a refusal.
GENEROUS = 600.0


@pytest.fixture(scope="module", autouse=True)
def _generous_default_budget():
    before = budget.default_budget()
    budget.set_default_budget(GENEROUS)
    try:
        yield
    finally:
        budget.set_default_budget(before)


@pytest.fixture(scope="module", autouse=True)
def _no_garbage_collection():
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def stores(f: n.PrimFunc, buffer: str) -> list[n.BufferStore]:
    return [s for s in walk(f.body) if isinstance(s, n.BufferStore) and s.buffer.name == buffer]


def first_if(f: n.PrimFunc) -> n.IfThenElse:
    return next(s for s in walk(f.body) if isinstance(s, n.IfThenElse))


def same_runs(before: n.PrimFunc, after: n.PrimFunc, seeds=range(2)) -> None:
    """``after`` leaves every buffer as ``before`` does (reference executor), on inputs
    that satisfy the assumptions."""
    run_before = codegen.build(before, target="python")
    run_after = codegen.build(after, target="python")
    for seed in seeds:
        args = make_inputs(before, np.random.default_rng(seed))
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        run_before(*want)
        run_after(*got)
        for k, (w, g) in enumerate(zip(want, got, strict=True)):
            if isinstance(w, np.ndarray):
                np.testing.assert_allclose(g, w, rtol=1e-5, err_msg=f"argument {k}")


def round_trip(f: n.PrimFunc) -> str:
    """``f`` printed, after checking that the text parses back to ``f``."""
    text = pp.script(f)
    pp.assert_structural_equal(pp.parse(text), f)
    return text


def check_result(shape: str, program: str, make, *, parse_long: bool = True,
                 may_stop: bool = False):
    """``make(f)`` of ``program`` in ``shape`` and of its short sum (``None`` for the
    nest), checked as the module docstring says.  With ``may_stop``, ``f`` itself
    back with a time limit counted is the pass stopped by its budget: nothing to
    compare."""
    f = parsed(program, shape)
    with budget.counting_time_limits() as limits:
        got = make(f)
    verify(got)
    if may_stop and got is f and limits[0]:
        return got, None
    if shape == "nest":
        round_trip(got)
        same_runs(f, got)
        return got, None
    text = round_trip(got) if parse_long else pp.script(got)
    short = parsed(program, shape, SHORT)
    short_got = make(short)
    assert collapsed(text) == collapsed(round_trip(short_got))
    assert text.count(" + ") >= TERMS - 1  # the long sum is there
    same_runs(short, short_got)
    return got, short_got


# ---------------------------------------------------------------- passes

T = pp.transform
PASSES = {
    "simplify": ("conditional", T.simplify),
    "remove_no_op": ("undef", T.remove_no_op),
    "hoist_expression": ("conditional", T.hoist_expression),
    "reduce_loop_extents": ("overcompute", T.reduce_loop_extents),
    "remove_assume": ("padded", T.remove_assume),
    "remove_store_undef": ("undef", T.remove_store_undef),
    "remove_branching_through_overcompute": ("padded", T.remove_branching_through_overcompute),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", PASSES)
def test_pass(name, shape):
    program, pass_ = PASSES[name]
    if name == "remove_no_op":  # the one pass here allowed to stop: at the usual 10 s
        pass_ = functools.partial(pass_, budget=budget.DEFAULT_BUDGET)
    with budget.counting_time_limits() as limits:
        got, _ = check_result(shape, program, pass_, may_stop=name == "remove_no_op")
    # each changes its program, unless its budget stopped it (remove_no_op's dataflow
    # over the 64-deep nest's 64-level time space takes some 4 CPU seconds: past its
    # 10 s on a busy machine, when the pass leaves the function as it was; so may the
    # 10,000-term sum)
    assert got is not parsed(program, shape) or limits[0]
    if got is parsed(program, shape):
        assert name == "remove_no_op"


@pytest.mark.parametrize("shape", SHAPES)
def test_the_steps_of_remove_overcompute_through_branching(shape):
    # Each step on the previous one's result; all four are the whole pass (in PASSES).
    steps = [T.introduce_padding_conditionals, T.hoist_padding_conditionals,
             T.remove_padding_no_ops, T.simplify_padding_conditionals]
    f, short = parsed("overcompute", shape), parsed("overcompute", shape, SHORT)
    changed = []
    for step in steps:
        got = step(f)
        verify(got)
        changed.append(got is not f)
        if shape == "sum":
            short_got = step(short)
            assert collapsed(pp.script(got)) == collapsed(round_trip(short_got))
            same_runs(short, short_got)
            short = short_got
        else:
            round_trip(got)
            same_runs(parsed("overcompute", shape), got)
        f = got
    assert changed == [True, False, True, False]  # steps 2 and 4 find nothing to do here
    pp.assert_structural_equal(f, T.remove_overcompute_through_branching(
        parsed("overcompute", shape)))


@pytest.mark.parametrize("shape", SHAPES)
def test_explain_branching_through_overcompute(shape):
    report = T.explain_branching_through_overcompute(parsed("padded", shape))
    (entry,) = report.entries
    assert entry.removed and isinstance(entry.decision, Proved)
    pp.assert_structural_equal(report.func, T.remove_branching_through_overcompute(
        parsed("padded", shape)))


# ---------------------------------------------------------------- deciders


def _value_question(f):
    store = stores(f, "B")[0]
    return analyses.prove(store.value.equal(store.value), analyses.context_at(f, store))


def _index_question(f):
    store = stores(f, "C")[0]
    return analyses.prove(n.Ge(store.indices[0], n.IntImm(0)), analyses.context_at(f, store))


def _known_value(f):
    store = stores(f, "C")[0]
    return analyses.known_value(store.value.a, analyses.context_at(f, store))


#: name -> (program, question, {shape: expected class}).  The long sum's stored value
#: is past the size the prover instantiates facts of: no counterexample can be
#: trusted (Unknown), and its value is not known.
DECIDERS = {
    "check_bounds": ("main", analyses.check_bounds, {"sum": Proved, "nest": Proved}),
    "is_no_op": ("main", lambda f: analyses.is_no_op(f, stores(f, "C")[0]),
                 {"sum": Unknown, "nest": Refuted}),
    "is_no_op(undef)": ("undef", lambda f: analyses.is_no_op(f, stores(f, "B")[0]),
                        {"sum": Proved, "nest": Proved}),
    "can_remove_conditional": ("padded", lambda f: analyses.can_remove_conditional(
        f, first_if(f)), {"sum": Removable, "nest": Removable}),
    "can_merge_loops": ("main", lambda f: analyses.can_merge_loops(f, "i", "j"),
                        {"sum": Proved, "nest": Proved}),
    "prove(index)": ("main", _index_question, {"sum": Proved, "nest": Proved}),
    "prove(value)": ("main", _value_question, {"sum": Proved, "nest": Proved}),
    "known_value": ("main", _known_value, {"sum": type(None), "nest": n.Add}),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", DECIDERS)
def test_decider(name, shape):
    program, question, expected = DECIDERS[name]
    got = question(parsed(program, shape))
    assert type(got) is expected[shape], got
    if shape == "sum" and expected["sum"] is Unknown:
        assert "size limit" in got.reason
    if shape == "sum":
        short = question(parsed(program, shape, SHORT))
        assert type(short) is (Refuted if expected["sum"] is Unknown else
                               n.Add if expected["sum"] is type(None) else expected["sum"])


@pytest.mark.parametrize("shape", SHAPES)
def test_regions_and_dependences(shape):
    f = parsed("main", shape)
    touched = analyses.domain_touched(f, "A")
    assert touched.exact and touched.set.is_equal(
        analyses.domain_touched(parsed("main", "sum", SHORT), "A").set)
    deps = analyses.dependences(f)
    # B flows from the producer to both consumer statements, and C from the first to
    # the second, which overwrites it; in the nest, the next round of the outer loops
    # of extent 2 overwrites B after the consumer read it.
    flow = deps.flow.get_map_list()
    pairs = {(flow.get_at(k).get_tuple_name(isl.dim_type.in_),
              flow.get_at(k).get_tuple_name(isl.dim_type.out)) for k in range(flow.n_map())}
    assert pairs == {("S0", "S1"), ("S0", "S2"), ("S1", "S2")}
    assert deps.anti.is_empty() == (shape == "sum") and not deps.output.is_empty()


# ---------------------------------------------------------------- primitives

#: name -> (program: {shape: program}, the steps, expected refusal or None).
PRIMITIVES = {
    "split": ("main", [("split", ("i", [None, 4]), {})]),
    "split(partition)": ("main", [("split", ("i", [None, 3]), {"tail": "partition"})]),
    "fuse": ("grid", [("fuse", ("i", "j"), {})]),
    "reorder": ("grid", [("reorder", ("j", "i"), {})]),
    "tile": ("grid", [("tile", (("i", "j"), [2, 4]), {})]),
    "compute_at": ({"sum": "main", "nest": "consumer_deep"}, [("compute_at", ("B", "j"), {})]),
    "store_at": ({"sum": "main", "nest": "consumer_deep"},
                 [("compute_at", ("B", "j"), {}), ("store_at", ("B", "j"), {})]),
    "reverse_compute_at": ({"sum": "main", "nest": "producer_deep"},
                           [("reverse_compute_at", ("C", "i"), {})]),
    "cache_read": ("main", [("cache_read", ("B", "A", "local"), {})]),
    "cache_read(at)": ("main", [("cache_read", ("C", "B", "local"), {"at": "j"})]),
    "cache_write": ({"sum": "main", "nest": "producer_deep"},
                    [("cache_write", ("B", "B", "local"), {})]),
    "rfactor": ("reduction", [("rfactor", ("k",), {})]),
    "decompose_reduction": ("reduction", [("decompose_reduction", ("sum", "i"), {})]),
    "vectorize": ("main", [("vectorize", ("i",), {})]),
    "parallel": ("main", [("parallel", ("i",), {})]),
    "unroll": ("main", [("unroll", ("i",), {})]),
    # The function's interface stays: B is its own buffer.
    "transform_layout": ("main", [("transform_layout", ("B", "B", lambda i: [i // 4, i % 4]),
                                   {"pad_value": 0.0})]),
    "sequential_buffer_access": ("main", [
        ("transform_layout", ("B", "B", lambda i: [i // 4, i % 4]), {}),
        ("sequential_buffer_access", ("B", "B"), {})]),
    "distribute": ("main", [("distribute", ("C", [0], "C0"), {})]),
    "reorder_by_map": ("main", [("reorder_by_map", ("B", "{band}", ("o", "q")), {})]),
    "merge_adjacent_loops": ("main", [("merge_adjacent_loops", ("i", "j"), {})]),
    "remove_branching_through_overcompute": ("padded", [
        ("remove_branching_through_overcompute", ("compute",), {})]),
    "reduce_overcompute_through_branching": ("overcompute", [
        ("reduce_overcompute_through_branching", ("compute",), {})]),
}


def _band(shape: str) -> str:
    """``B``'s loops in ``main`` (the nest's counters first), its i split by 4."""
    outer = "" if shape == "sum" else ", ".join(f"o{k}" for k in range(62)) + ", "
    return f"{{ B[{outer}i] -> [floor(i/4), i mod 4] }}"


def scheduled(shape: str, name: str, f: n.PrimFunc) -> pp.Schedule:
    _, steps = PRIMITIVES[name]
    sch = pp.Schedule(f)
    for method, args, kwargs in steps:
        args = tuple(_band(shape) if a == "{band}" else a for a in args)
        getattr(sch, method)(*args, **kwargs)
    return sch


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", PRIMITIVES)
def test_primitive(name, shape):
    programs, _ = PRIMITIVES[name]
    program = programs if isinstance(programs, str) else programs[shape]
    made: list[pp.Schedule] = []

    def apply(f):
        sch = scheduled(shape, name, f)
        made.append(sch)
        return sch.func

    got, short_got = check_result(shape, program, apply, parse_long=False)
    trace = made[0].trace
    if shape == "nest":
        pp.assert_structural_equal(trace.apply_to(parsed(program, shape)).func, got)
    else:
        assert str(trace) == str(made[1].trace)
        pp.assert_structural_equal(trace.apply_to(parsed(program, shape, SHORT)).func,
                                   short_got)


def test_a_schedule_of_the_long_sum_replays_on_it():
    f = parsed("grid", "sum")
    sch = pp.Schedule(f)
    io, ii = sch.split("i", [None, 4])
    sch.reorder(ii, "j")
    sch.parallel(io)
    sch.vectorize("j")
    again = sch.trace.apply_to(f).func
    pp.assert_structural_equal(again, sch.func)
    assert collapsed(round_trip(again)) == collapsed(pp.script(
        sch.trace.apply_to(parsed("grid", "sum", SHORT)).func))


def test_a_refusal_on_a_deep_nest_is_a_polypad_error_with_evidence():
    # compute_at moves a block whose loops are at the top level only; in the nest
    # both blocks sit 62 loops down.
    f = parsed("main", "nest")
    with pytest.raises(PolypadError, match="sits inside a loop"):
        pp.Schedule(f).compute_at("B", "j")
    # Running the long sum's updates backwards reverses their flow: the evidence names
    # two of them.
    with pytest.raises(IllegalTransformError) as err:
        pp.Schedule(parsed("reduction", "sum")).reorder_by_map(
            "sum", "{ sum_0[i] -> [i, 0]; sum_1[i, k] -> [i, 4 - k] }", ("p", "q"))
    assert [x.statement for x in err.value.evidence.instances] == ["sum_1", "sum_1"]


@pytest.mark.parametrize("call", [
    lambda f: T.simplify(f),
    lambda f: analyses.check_bounds(f),
    lambda f: pp.Schedule(f).split("i", [None, 4]),
], ids=["pass", "decider", "primitive"])
def test_what_is_too_deep_even_for_the_worker_is_a_too_deep_error(call, monkeypatch):
    f = parsed("main", "sum")
    monkeypatch.setattr(deep_worker, "DEEP_RECURSION_LIMIT", 3000)  # some 1,000 levels
    with pytest.raises(TooDeepError, match="nested too deeply"):
        call(f)
