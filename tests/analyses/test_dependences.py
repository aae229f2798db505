"""Dependences: RFC examples against hand-written relations, and random nests
against the accesses a run really makes."""

from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from structural_brute import brute_dependences, pairs, random_args, random_program, trace

import analyses
from analyses import Counterexample, Element, Instance
from polypad.errors import PolypadError
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name):
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


def same(got, text):
    want = isl.UnionMap(text)
    assert got.is_equal(want), f"{got}\n  !=\n{want}"


def test_stencil_flow_anti_output():
    d = analyses.dependences(load("merge_loops_stencil_before"))
    same(d.flow, "{ S0[i] -> S1[i] : 1 <= i <= 14; S0[i] -> S1[i - 1] : 2 <= i <= 15; "
                 "S0[0] -> S1[1]; S1[i] -> S1[i + 1] : 1 <= i <= 13 }")
    assert d.flow_must.is_equal(d.flow) and d.flow_may.is_equal(d.flow)
    same(d.anti, "{ S1[i] -> S1[i + 1] : 1 <= i <= 13 }")
    same(d.output, "{ S0[i] -> S1[i] : 1 <= i <= 14 }")
    same(d.live_in, "{ }")
    same(d.live_out, "{ S0[0] -> A[0]; S0[15] -> A[15]; S1[i] -> A[i] : 1 <= i <= 14 }")
    assert d.all().is_equal(d.flow.union(d.anti).union(d.output))


def test_tagged_dependences_name_the_element():
    d = analyses.dependences(load("merge_loops_shifted_before"))
    same(d.tagged("flow"), "{ [S0[0] -> A[0]] -> [S1[1] -> A[0]]; "
                           "[S1[i] -> A[i]] -> [S1[i + 1] -> A[i]] : 1 <= i <= 14 }")
    same(d.tagged("output"), "{ [S0[i] -> A[i]] -> [S1[i] -> A[i]] : 1 <= i <= 15 }")
    with pytest.raises(PolypadError, match="no dependence kind 'sideways'"):
        d.tagged("sideways")


def test_reduction_live_in_and_live_out():
    d = analyses.dependences(load("internal_buffer_cache_read"))
    same(d.flow, "{ S0[i] -> S2[i] : 0 <= i <= 13; S1[] -> S2[0]; "
                 "S2[i] -> S2[i + 1] : 0 <= i <= 12 }")
    same(d.live_in, "{ S0[i] -> A[i] : 0 <= i <= 13 }")
    # A_local is freed at the end: only B's final value reaches the caller.
    same(d.live_out, "{ S2[13] -> B[0] }")


def test_assume_reads_what_its_condition_loads():
    # T.assume(B[0] == 0.0) is a fact about B[0] at its point: the store after it
    # must stay after it (anti), and it sees B's input value (live in).
    d = analyses.dependences(load("remove_noop_sum_before"))
    same(d.anti, "{ S0[] -> S1[]; S2[i] -> S2[i + 1] : 0 <= i <= 14 }")
    same(d.flow, "{ S1[] -> S2[0]; S2[i] -> S2[i + 1] : 0 <= i <= 14 }")
    same(d.live_in, "{ S0[] -> B[0]; S2[i] -> A[i] : 0 <= i <= 15 }")


LOCAL_IN_LOOP = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        X = T.alloc_buffer((1,), "float32")
        if i > 0:
            B[i] = X[0]
        X[0] = A[i]
        if A[i] > 0.0:
            B[i] = X[0]
"""


def test_allocation_end_kills_and_data_dependent_guard_gives_may():
    d = analyses.dependences(parse(LOCAL_IN_LOOP))
    # X is freed at the end of each iteration: S0 never sees S1's value.
    same(d.flow, "{ S1[i] -> S2[i] : 0 <= i <= 7 }")
    same(d.flow_must, "{ }")  # S2 runs only where A[i] > 0
    same(d.anti, "{ S0[i] -> S1[i] : 1 <= i <= 7 }")
    same(d.output, "{ S0[i] -> S2[i] : 1 <= i <= 7 }")
    same(d.live_in, "{ S1[i] -> A[i] : 0 <= i <= 7; S2[i] -> A[i] : 0 <= i <= 7 }")
    same(d.live_out, "{ S0[i] -> B[i] : 1 <= i <= 7; S2[i] -> B[i] : 0 <= i <= 7 }")


def test_violation_names_iterations_and_element():
    d = analyses.dependences(load("merge_loops_stencil_before"))
    merged = isl.UnionMap("{ S0[i] -> [0, i, 0]; S1[i] -> [0, i, 2] }")
    cex = d.violations(merged)
    assert isinstance(cex, Counterexample)
    assert cex.instances == (Instance("S0", {"i": 2}), Instance("S1", {"i": 1}))
    assert cex.element == Element("A", (2,))
    assert cex.description.startswith("flow dependence: S1(i=1) reads A[2], which S0(i=2)")
    found = d.violation(merged)
    assert found.kind == "flow" and found.certain
    assert d.violations(isl.UnionMap("{ S0[i] -> [0, i, 0]; S1[i] -> [2, i, 0] }")) is None


def test_violation_in_a_reversed_loop():
    d = analyses.dependences(load("merge_loops_stencil_before"))
    # Keep the loops apart, but run the second one backwards.
    found = d.violation(isl.UnionMap("{ S0[i] -> [0, i, 0]; S1[i] -> [2, -i, 0] }"))
    assert found.kind == "flow" and found.certain
    assert found.counterexample.instances == (Instance("S1", {"i": 1}), Instance("S1", {"i": 2}))
    assert found.counterexample.element == Element("A", (1,))


def test_may_violation_is_flagged_uncertain():
    d = analyses.dependences(parse(LOCAL_IN_LOOP))
    found = d.violation(isl.UnionMap(
        "{ S0[i] -> [0, i, 0]; S1[i] -> [0, i, 4]; S2[i] -> [0, i, 2] }"))
    assert found.kind == "flow" and not found.certain
    assert "may-dependence" in found.counterexample.description


def test_schedule_must_place_every_instance():
    d = analyses.dependences(load("merge_loops_stencil_before"))
    with pytest.raises(PolypadError, match="does not place"):
        d.violations(isl.UnionMap("{ S0[i] -> [0, i, 0] }"))


def test_dependences_rejects_a_statement():
    with pytest.raises(TypeError, match="PrimFunc"):
        analyses.dependences(load("merge_loops_stencil_before").body)


@settings(max_examples=120, deadline=None)
@given(random_program(local=True))
def test_random_nests_match_the_accesses_of_a_run(text):
    f = parse(text)
    d = analyses.dependences(f)
    brute = brute_dependences(trace(f, random_args(f, 0)))
    for kind in ("flow", "anti", "output"):
        assert pairs(getattr(d, kind)) == brute[kind], kind
    assert d.flow_must.is_equal(d.flow)
    live = {(src, (elem[0], elem[1])) for src, elem in brute["live_out"] if elem[0] != "X"}
    got = {(s, (e[0], e[1])) for s, e in pairs(d.live_out)}
    assert got == live


def test_package_name_stays_the_function_after_a_submodule_import():
    import importlib

    importlib.import_module("analyses.dataflow")
    f = load("merge_loops_shifted_before")
    assert analyses.dependences is importlib.import_module("analyses.dataflow").dependences
    assert isinstance(analyses.dependences(f), analyses.Dependences)


def test_every_public_name_is_the_function_whatever_was_imported_first():
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(analyses.__path__):
        importlib.import_module(f"analyses.{info.name}")
    for name in ("prove", "dependences", "domain_touched", "can_merge_loops", "is_no_op",
                 "context_at"):
        assert callable(getattr(analyses, name)) and not isinstance(
            getattr(analyses, name), type(analyses)), name


GUARD_FIXED_COUNTER = """
@T.prim_func
def func(A: T.Buffer((8,), "float32")):
    for i in T.serial(3):
        if i == 2:
            A[0] = A[0] + 1.0
        A[i] = 1.0
        if i == 0:
            A[i] = -1.0
"""


def test_a_guard_that_fixes_the_counter_is_no_textual_position():
    # ISL's schedule-map dataflow took the guarded stores (i fixed at 2 and at 0)
    # for statements outside the loop over i: S1(i=0) seemed to reach S0(i=2).
    d = analyses.dependences(parse(GUARD_FIXED_COUNTER))
    same(d.flow, "{ S2[0] -> S0[2] }")
    same(d.output, "{ S1[0] -> S2[0]; S2[0] -> S0[2] }")


def test_no_op_of_a_store_read_two_iterations_later():
    # The whole function's flows (computed once a second question is asked) said
    # rule 1 held for `A[i] = -1.0`; remove_overcompute_through_branching removed it.
    from polypad.ir import nodes as n
    from polypad.ir.visitor import walk
    f = parse(GUARD_FIXED_COUNTER)
    stores = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    analyses.is_no_op(f, stores[1])  # the second question gets the whole flows
    assert isinstance(analyses.is_no_op(f, stores[2]), analyses.Refuted)


