"""RFC 0077, "Apply operator element-wise over the transformation padding" and "Multiple
Buffer Semantics", derived from the RFC's "before" texts: ``transform_layout`` with
``T.undef()`` (and 0) pad values, ``sequential_buffer_access``,
``remove_branching_through_overcompute``, then ``remove_assume`` and
``remove_store_undef`` for the RFC's lowered form.

Every step is the RFC's form up to the ``T.block`` polypad puts around a pad-value stage.
The element-wise walk is also run at other sizes and split factors.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from walk_support import (
    UNDEF,
    Layout,
    assert_matches_original,
    assert_runs_like,
    assert_same_form,
    block_names,
    ifs,
    rfc,
)

import polypad as pp
from analyses import Refuted
from analyses.conditional import Removable
from polypad import T
from polypad.ir import nodes as ir
from polypad.ir.visitor import walk
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_assume,
    remove_store_undef,
)


def lowered(f):
    return remove_store_undef(remove_assume(f))


def logical_mask(n: int, c: int) -> np.ndarray:
    return (np.arange(c * ((n + c - 1) // c)) < n).reshape(-1, c)


# ---------------------------------------------------------------- element-wise

EW_BEFORE = '''
@T.prim_func
def func(A: T.Buffer(({n},), "int32"), B: T.Buffer(({n},), "int32")):
    for i in T.serial({n}):
        B[i] = 2 * A[i]
'''


@functools.cache
def elementwise(n: int = 14, c: int = 4) -> dict:
    text = rfc("elementwise_before") if (n, c) == (14, 4) else pp.parse(
        EW_BEFORE.format(n=n))
    sch = pp.Schedule(text)
    steps = {}
    sch.transform_layout(None, "A", lambda i: [i // c, i % c], pad_value=T.undef())
    steps["transform_a"] = sch.func
    sch.transform_layout(None, "B", lambda i: [i // c, i % c], pad_value=T.undef())
    steps["transform_b"] = sch.func
    sch.sequential_buffer_access(None, "B")
    steps["sequential"] = sch.func
    steps["report"] = explain_branching_through_overcompute(sch.func)
    if n % c:
        sch.remove_branching_through_overcompute(None)
    steps["overcompute"] = sch.func
    steps["lowered"] = lowered(sch.func)
    steps["trace"] = sch.trace
    return steps


# The RFC omits A's T.assume in its sequential step, and only there.
RESTORE_ASSUME = {'"int32"]):\n': '"int32"]):\n'
                  "    for io, ii in T.grid(4, 4):\n"
                  "        T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())\n"}


def test_elementwise_steps_are_derived():
    steps = elementwise()
    for step in ("transform_a", "transform_b", "overcompute", "lowered"):
        assert_same_form(steps[step], rfc(f"elementwise_{step}"))
    assert_same_form(steps["sequential"], rfc("elementwise_sequential", respell=RESTORE_ASSUME))
    assert block_names(steps["sequential"]) == ["B_padding"]
    # The primitive does what the pass reports, and the trace replays the whole walk.
    pp.assert_structural_equal(steps["overcompute"], steps["report"].func)
    assert [s.primitive for s in steps["trace"]] == [
        "transform_layout", "transform_layout", "sequential_buffer_access",
        "remove_branching_through_overcompute"]
    replayed = steps["trace"].apply_to(rfc("elementwise_before")).func
    pp.assert_structural_equal(replayed, steps["overcompute"])


def test_elementwise_removal_is_rule_1_and_the_undef_stage_stays():
    report = elementwise()["report"]
    (guard, pad) = report.entries
    assert guard.removed and isinstance(guard.decision, Removable)
    assert "rule 1" in guard.decision.detail and "B_padding" in guard.decision.detail
    # The undef stage is not a no-op: it grants the permission the removal used.
    assert not pad.removed and isinstance(pad.decision, Refuted)
    cex = pad.decision.counterexample
    assert cex.element.buffer == "B" and 4 * cex.element.indices[0] + cex.element.indices[1] < 14


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_elementwise_steps_run_like_the_rfc(target):
    steps = elementwise()
    mask = {"B": logical_mask(14, 4)}  # a store of T.undef() leaves B's padding arbitrary
    for step in ("transform_b", "sequential", "overcompute", "lowered"):
        assert_runs_like(steps[step], rfc(f"elementwise_{step}"), targets=(target,),
                         logical=mask)


@pytest.mark.parametrize(("n", "c"), [(14, 4), (13, 4), (30, 8), (17, 5), (16, 4)])
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_elementwise_at_other_sizes(n, c, target):
    steps = elementwise(n, c)
    padded = n % c != 0
    assert [e.removed for e in steps["report"].entries] == ([True, False] if padded else [])
    facts = [x.args[0] for x in walk(steps["transform_b"].body)
             if isinstance(x, ir.Call) and x.op == "assume"]
    if padded:  # one fact, about the padding only: `logical index in range or A == undef`
        assert len(facts) == 1 and isinstance(facts[0], ir.Or)
    else:  # nothing to pad, nothing to assume or store
        assert not facts and not ifs(steps["transform_b"])
    assert not ifs(steps["lowered"])
    layouts = {"A": Layout(lambda i: [i // c, i % c], UNDEF),
               "B": Layout(lambda i: [i // c, i % c], UNDEF)}
    original = pp.parse(EW_BEFORE.format(n=n))
    for step in ("sequential", "lowered"):
        assert_matches_original(original, steps[step], layouts, targets=(target,))


# ---------------------------------------------------------------- multiple semantics


@functools.cache
def multi() -> dict:
    sch = pp.Schedule(rfc("multi_semantics_before"))
    steps = {}
    sch.transform_layout(None, "A", lambda i, j: [i // 4, i % 4, j], pad_value=T.undef())
    steps["transform_i"] = sch.func
    sch.transform_layout(None, "A", lambda io, ii, j: [io, ii, j // 8, j % 8], pad_value=0)
    steps["transform_j"] = sch.func
    sch.transform_layout(None, "B", lambda i: [i // 4, i % 4], pad_value=T.undef())
    steps["transform_b"] = sch.func
    sch.sequential_buffer_access(None, "A")
    steps["sequential"] = sch.func
    steps["report"] = explain_branching_through_overcompute(sch.func)
    sch.remove_branching_through_overcompute(None)
    steps["overcompute"] = sch.func
    steps["lowered"] = lowered(sch.func)
    return steps


def test_multiple_semantics_steps_are_derived():
    steps = multi()
    for step in ("transform_i", "transform_j", "transform_b", "sequential", "overcompute",
                 "lowered"):
        assert_same_form(steps[step], rfc(f"multi_semantics_{step}"))


def test_multiple_semantics_each_padding_by_its_own_rule():
    entries = multi()["report"].entries
    assert [(e.condition, e.removed) for e in entries] == [
        ("8 * jo + ji < 60", False),  # guards a T.assume: never removed
        ("4 * io + ii < 14", True),  # rows of B's padding: overwritten by T.undef()
        ("8 * jo + ji < 60", True),  # columns of A's padding hold 0: B + 0 stores B
        ("4 * io + ii >= 14", False),  # the undef stage itself
    ]
    assert "rule 1" in entries[1].decision.detail
    assert "rule 3" in entries[2].decision.detail


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_multiple_semantics_steps_compute_the_row_sums(target):
    steps = multi()
    original = rfc("multi_semantics_before")
    a = Layout(lambda i, j: [i // 4, i % 4, j // 8, j % 8], 0)
    b = Layout(lambda i: [i // 4, i % 4], UNDEF)
    # A's row padding is T.undef() and its column padding 0: pack with 0 everywhere, then
    # put junk in the padded rows, which any value satisfies.
    for step in ("sequential", "lowered"):
        assert_matches_original(original, steps[step], {"A": a, "B": b}, targets=(target,))
    for step in ("transform_b", "overcompute"):
        assert_runs_like(steps[step], rfc(f"multi_semantics_{step}"), targets=(target,),
                         logical={"B": logical_mask(14, 4)}, seeds=(0,))
