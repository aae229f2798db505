"""RFC 0077, "Implicitly write default value of next operator": the 1-d convolution with
padding 2 whose layouts ``i -> [(i + 2) // 8, (i + 2) % 8]`` put padding at both ends, down
to the fast loop.  Each step polypad can take is derived from the step before; each it
cannot is an xfail naming what is missing.

The RFC's own steps from 3 on write B two elements off (see implicit_default_step3.py) and
step 8 applies De Morgan wrongly (see implicit_default_step8.py), so from step 3 on they are
compared with each other, not with steps 0-2.

* Steps 1 and 2 (``transform_layout`` of A and B, pad value 0) are derived; polypad spells
  the padding predicates from the index map (checked with ISL) and writes B's padding
  ``(2, 4) .. (2, 7)`` where the RFC's text says ``ii >= 6`` (a typo, its own diagram
  agrees with polypad).
* Step 3, ``sequential_buffer_access(A)``, reorders the float sum into each ``B[Bi]``
  (``fi`` runs backwards); polypad keeps every reduction in order and refuses with the two
  iterations as evidence, unless asked to reassociate (``reassociate=True``), as the RFC
  does silently: then it derives the step (with B's index as the step before implies),
  and the result agrees with the original to rounding, at every size tried.
* Following B's layout instead is legal, and overcompute then removes both guards on B;
  the one guard left keeps the reads of A in bounds -- the reason the RFC rewrites
  indices ``% 3`` in step 11.
* From the RFC's step 6, ``hoist_expression`` does parts 1 and 3 of the RFC's hoisting in
  one pass; one sweep of ``remove_branching_through_overcompute`` takes step 10 to step 11,
  wrapping B's row index ``% 3`` under ``io == 2`` (analyses/wrap_indices.py; more in
  test_walk_wrap_indices.py), and the pass run to its fixpoint goes on to the RFC's fast
  loop, step 12, as it does from step 11.
"""

from __future__ import annotations

import functools

import pytest
from walk_support import (
    Layout,
    assert_matches_original,
    assert_runs_like,
    assert_same_form,
    assert_same_set,
    ifs,
    rfc,
)

import polypad as pp
from analyses import Element, Instance, Refuted
from analyses.conditional import Removable
from polypad.errors import IllegalTransformError
from polypad.transform import (
    explain_branching_through_overcompute,
    hoist_expression,
    remove_branching_through_overcompute,
)

A_PAD_RFC = """(io == 0 and ii >= 2)
            or (io > 0 and io < 2)
            or (io == 2 and ii < 2)"""
A_PAD_OURS = "8 * io + ii >= 2 and 8 * io + ii < 18"
B_PAD_RFC = "(io == 0 and ii < 2) or (io == 2 and ii >= 4)"
B_PAD_OURS = "8 * io + ii < 2 or 8 * io + ii >= 20"
BOX = {"io": 3, "ii": 8}


def offset(i):
    return [(i + 2) // 8, (i + 2) % 8]


@functools.cache
def front_steps() -> dict:
    sch = pp.Schedule(rfc("implicit_default_step0"))
    steps = {}
    sch.transform_layout(None, "A", offset, pad_value=0.0)
    steps[1] = sch.func
    sch.transform_layout(None, "B", offset, pad_value=0.0)
    steps[2] = sch.func
    return steps


def test_spellings_are_the_same_sets():
    assert_same_set(A_PAD_RFC.replace("\n", " "), A_PAD_OURS, BOX)
    assert_same_set(B_PAD_RFC, B_PAD_OURS, BOX)
    # The RFC's text for B's padding, `ii >= 6`, is not B's padding: (2, 4) is padding.
    with pytest.raises(AssertionError, match="differ"):
        assert_same_set("(io == 0 and ii < 2) or (io == 2 and ii >= 6)", B_PAD_OURS, BOX)


def test_steps_1_and_2_are_derived():
    steps = front_steps()
    assert_same_form(steps[1], rfc("implicit_default_step1", respell={A_PAD_RFC: A_PAD_OURS}))
    assert_same_form(steps[2], rfc("implicit_default_step2",
                                   respell={A_PAD_RFC: A_PAD_OURS, B_PAD_RFC: B_PAD_OURS}))


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_steps_1_and_2_compute_the_convolution(target):
    original = rfc("implicit_default_step0")
    a = Layout(offset, 0.0)
    assert_matches_original(original, front_steps()[1], {"A": a}, targets=(target,))
    assert_matches_original(original, front_steps()[2], {"A": a, "B": Layout(offset, 0.0)},
                            targets=(target,))


def test_step_3_following_a_is_refused_it_would_reorder_the_sum():
    sch = pp.Schedule(front_steps()[2])
    with pytest.raises(IllegalTransformError, match="would break a dependence") as info:
        sch.sequential_buffer_access(None, "A")
    cex = info.value.evidence
    # B[0] (physical B[0, 2]) gets fi = 0 (A[2]) before fi = 1 (A[1]); A's order reverses it.
    assert cex.instances == (Instance("S2", {"Bi": 0, "fi": 0}), Instance("S2", {"Bi": 0, "fi": 1}))
    assert cex.element == Element("B", (0, 2))
    assert sch.func is front_steps()[2]  # all or nothing


FOLLOW_A = '''
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((3, 8), "float32")):
    for io, ii in T.grid(3, 8):
        T.assume(8 * io + ii >= 2 and 8 * io + ii < 18 or A[io, ii] == 0.0)
    for Bi in T.serial(18):
        B[(Bi + 2) // 8, (Bi + 2) % 8] = 0.0
    for Bio, Bii in T.grid(3, 8):
        if 8 * Bio + Bii >= 2 and 8 * Bio + Bii < 18:
            for fi in T.serial(3):
                if 8 * Bio + Bii + fi >= 4:
                    B[Bio + (Bii + fi - 2) // 8, (Bii + fi - 2) % 8] = (
                        B[Bio + (Bii + fi - 2) // 8, (Bii + fi - 2) % 8]
                        + F[fi] * A[Bio, Bii])
    for io, ii in T.grid(3, 8):
        if 8 * io + ii < 2 or 8 * io + ii >= 20:
            B[io, ii] = 0.0
'''


@functools.cache
def step_3() -> pp.Schedule:
    sch = pp.Schedule(front_steps()[2])
    sch.sequential_buffer_access(None, "A", reassociate=True)
    return sch


def test_step_3_is_derived_when_the_sum_may_reassociate():
    sch = step_3()
    # The RFC's loops over A (its step 3 writes B two elements off; see the docstring).
    assert_same_form(sch.func, pp.parse(FOLLOW_A))
    assert str(sch.trace) == ("sch.sequential_buffer_access(block=None, buffer='A', "
                              "reassociate=True)")
    pp.assert_structural_equal(sch.trace.apply_to(front_steps()[2]).func, sch.func)


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_step_3_computes_the_convolution_to_rounding(target):
    assert_matches_original(rfc("implicit_default_step0"), step_3().func,
                            {"A": Layout(offset, 0.0), "B": Layout(offset, 0.0)},
                            seeds=(0, 1, 2), targets=(target,))


# ---------------------------------------------------------------- following B instead

FOLLOW_B = '''
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((3, 8), "float32")):
    for io, ii in T.grid(3, 8):
        T.assume(8 * io + ii >= 2 and 8 * io + ii < 18 or A[io, ii] == 0.0)
    for Bio, Bii in T.grid(3, 8):
        B[Bio, Bii] = 0.0
        for fi in T.serial(3):
            if fi >= 8 * Bio + Bii - 15:
                B[Bio, Bii] = B[Bio, Bii] + F[fi] * A[Bio + (Bii - fi + 2) // 8, (Bii - fi + 2) % 8]
    for io, ii in T.grid(3, 8):
        if 8 * io + ii < 2 or 8 * io + ii >= 20:
            B[io, ii] = 0.0
'''

TEMPLATE = '''
@T.prim_func
def func(A: T.Buffer(({n},), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({nb},), "float32")):
    for Bi in T.serial({nb}):
        B[Bi] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + {p}
            if 0 <= Ai < {n}:
                B[Bi] = B[Bi] + F[fi] * A[Ai]
'''

# (A's length, padding on each side = the layouts' offset, split factor); the first is
# the RFC's.
CONFIGS = [(16, 2, 8), (13, 1, 4), (20, 2, 8), (16, 2, 6)]


def conv(n: int, p: int) -> pp.ir.nodes.PrimFunc:
    return pp.parse(TEMPLATE.format(n=n, p=p, nb=n + 2 * p - 2))


@functools.cache
def follow_b(n: int, p: int, c: int):
    """(the loops following B's layout, the report of the overcompute pass on them)."""
    sch = pp.Schedule(conv(n, p))
    for buffer in ("A", "B"):
        sch.transform_layout(None, buffer, lambda i: [(i + p) // c, (i + p) % c],
                             pad_value=0.0)
    sch.sequential_buffer_access(None, "B")
    return sch.func, explain_branching_through_overcompute(sch.func)


def test_following_b_reaches_one_guard_at_the_rfc_sizes():
    _, report = follow_b(16, 2, 8)
    assert_same_form(report.func, pp.parse(FOLLOW_B))
    assert [(e.condition, e.removed) for e in report.entries] == [
        ("8 * Bio + Bii >= 2 and 8 * Bio + Bii < 20", True),  # B's padding: overwritten
        ("8 * Bio + Bii < 18", True),  # the fi loop never stores there
        ("fi >= 8 * Bio + Bii - 15", False),  # A's bounds
        ("8 * io + ii < 2 or 8 * io + ii >= 20", False),  # the pad stage itself
    ]
    assert "rule 1" in report.entries[0].decision.detail
    kept = report.entries[2].decision
    assert isinstance(kept, Refuted)
    assert kept.counterexample.instances == (Instance("S2", {"Bio": 2, "Bii": 6, "fi": 0}),)
    assert kept.counterexample.element == Element("A", (3, 0))


@pytest.mark.parametrize(("n", "p", "c"), CONFIGS)
def test_following_b_only_bounds_keep_a_guard(n, p, c):
    _, report = follow_b(n, p, c)
    compute = [e for e in report.entries if e.removed or "leaves a buffer" in str(e.decision)]
    assert len(compute) == len(report.entries) - 1  # all but the pad stage's guard
    assert report.entries[0].removed and isinstance(report.entries[0].decision, Removable)


@pytest.mark.parametrize(("n", "p", "c"), CONFIGS)
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_following_b_computes_the_convolution(n, p, c, target):
    before, report = follow_b(n, p, c)
    layout = Layout(lambda i: [(i + p) // c, (i + p) % c], 0.0)
    for f in (before, report.func):
        assert_matches_original(conv(n, p), f, {"A": layout, "B": layout}, targets=(target,))


@pytest.mark.parametrize(("n", "p", "c"), CONFIGS)
def test_following_a_reassociates_at_every_size(n, p, c):
    layout = Layout(lambda i: [(i + p) // c, (i + p) % c], 0.0)
    sch = pp.Schedule(conv(n, p))
    for buffer in ("A", "B"):
        sch.transform_layout(None, buffer, layout.index_map, pad_value=0.0)
    before = sch.func
    with pytest.raises(IllegalTransformError, match="would break a dependence"):
        sch.sequential_buffer_access(None, "A")
    assert sch.func is before
    sch.sequential_buffer_access(None, "A", reassociate=True)
    pp.verify(sch.func)
    assert_matches_original(conv(n, p), sch.func, {"A": layout, "B": layout}, seeds=(0, 1))


# ---------------------------------------------------------------- the RFC's later steps

HOISTED = '''
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((3, 8), "float32")):
    for io, ii in T.grid(3, 8):
        T.assume(io == 0 and ii >= 2 or io > 0 and io < 2 or io == 2 and ii < 2
                 or A[io, ii] == 0.0)
    for io, ii in T.grid(3, 8):
        B[io, ii] = 0.0
    for io in T.serial(3):
        if io == 0:
            for ii in T.serial(8):
                if not ii < 2:
                    for fi in T.serial(3):
                        if not ii + fi < 2:
                            B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                                B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii])
        elif io == 2:
            for ii in T.serial(8):
                if not ii >= 2:
                    for fi in T.serial(3):
                        if not ii + fi >= 4:
                            B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                                B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii])
        else:
            for ii, fi in T.grid(8, 3):
                B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                    B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii])
'''


def test_hoisting_step_6_does_parts_1_and_3_at_once():
    # The RFC's part 3 (step 9) with its part-2 `or` corrected to `and`: the ii condition
    # leaves the fi loop with no else branch.
    assert_same_form(hoist_expression(rfc("implicit_default_step6")), pp.parse(HOISTED))


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_hoisted_step_runs_like_the_rfc_steps(target):
    hoisted = hoist_expression(rfc("implicit_default_step6"))
    for k in (7, 10):
        assert_runs_like(hoisted, rfc(f"implicit_default_step{k}"), targets=(target,))


@functools.cache
def step_11_once():
    return remove_branching_through_overcompute(rfc("implicit_default_step11"))


@functools.cache
def fast_loop():
    return remove_branching_through_overcompute(step_11_once())


def test_step_10_overcompute_goes_as_far_as_bounds_allow():
    report = explain_branching_through_overcompute(rfc("implicit_default_step10"), sweeps=1)
    assert [(e.condition, e.removed) for e in report.entries] == [
        ("io == 0", False), ("ii >= 2", True), ("io == 2", False), ("ii < 2", True)]
    # Under io == 0 the skipped A[0, ii < 2] is padding, assumed 0: rule 3.
    assert "rule 3" in report.entries[1].decision.detail
    # Under io == 2 the same argument holds for the values, but B[2 + 1, 0] is outside B:
    # the row index is wrapped modulo 3 (the overcompute lands on B[0, 0..1]).
    assert report.entries[3].decision.detail.startswith(
        "B's row index wrapped modulo 3: io + (ii + fi) // 8 -> (io + (ii + fi) // 8) % 3")
    assert "rule 3" in report.entries[3].decision.detail
    # Bit for bit (F may be inf, and inf * 0 is NaN) the wrap does not help: the refusal
    # is the bounds one, with its counterexample.
    strict = explain_branching_through_overcompute(rfc("implicit_default_step10"),
                                                   strict_ieee=True)
    kept = strict.entries[3].decision
    assert not strict.entries[3].removed
    assert isinstance(kept, Refuted) and "leaves a buffer" in kept.counterexample.description
    assert kept.counterexample.instances == (Instance("S3", {"io": 2, "ii": 6, "fi": 2}),)
    assert kept.counterexample.element == Element("B", (3, 0))


def test_step_11_is_derived():
    # One sweep: each conditional asked once, as the RFC's "part 1" does.
    got = remove_branching_through_overcompute(rfc("implicit_default_step10"), sweeps=1)
    assert_same_form(got, rfc("implicit_default_step11"))


def test_step_12_is_derived_from_step_10_in_one_run():
    assert_same_form(remove_branching_through_overcompute(rfc("implicit_default_step10")),
                     rfc("implicit_default_step12"))


def test_step_12_is_derived_from_step_11_in_two_runs():
    assert_same_form(fast_loop(), rfc("implicit_default_step12"))
    assert not ifs(fast_loop())


def test_step_12_is_derived_from_step_11_in_one_run():
    # `if io == 0` is refused (its then branch leaves B) until the nested `if io == 2`
    # has gone; the pass sweeps again after a removal, so one run gets there.
    assert_same_form(step_11_once(), rfc("implicit_default_step12"))
    assert [(e.condition, e.removed) for e in
            explain_branching_through_overcompute(rfc("implicit_default_step11")).entries] == [
        ("io == 0", True), ("io == 2", True)]


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_fast_loop_runs_like_the_rfc_steps(target):
    for k in (10, 11):
        assert_runs_like(fast_loop(), rfc(f"implicit_default_step{k}"), targets=(target,))
