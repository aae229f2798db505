"""RFC 0077, "New Primitive - Remove Overcompute Through Branching": the RFC's four steps
derived one by one from its overcomputed conv1d (the pass's own ``STEPS``), the schedule
primitive ``sch.reduce_overcompute_through_branching``, and the round trip with
``sch.remove_branching_through_overcompute`` where the overcompute fits in A.

polypad's step 3 removes the pad-value stores and folds ``if c: pass else: body`` into
``if not c: body`` at once, which is the RFC's step 4 with its condition spelled as the
negation (the same set, checked with ISL); step 4 then has nothing left to do.
"""

from __future__ import annotations

import functools
import importlib

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
from analyses import Element, Instance
from polypad.errors import IllegalTransformError
from polypad.ir.show import show

steps_module = importlib.import_module("polypad.transform.remove_overcompute_through_branching")

IF_PASS_ELSE = {"if io == 3 and ii >= 2:\n            pass\n\n        else:":
                "if not (io == 3 and ii >= 2):"}
KEPT = {"if io < 3 or (io == 3 and ii < 2):": "if not (io == 3 and ii >= 2):"}


def test_spellings_are_the_same_sets():
    assert_same_set("io < 3 or (io == 3 and ii < 2)", "not (io == 3 and ii >= 2)",
                    {"io": 4, "ii": 4})


@functools.cache
def steps() -> dict:
    f = rfc("branching_conv1d_before")
    out = {}
    for k, step in enumerate(steps_module.STEPS, start=1):
        f = step(f, block="compute")
        out[k] = f
    return out


def test_steps_are_derived():
    got = steps()
    assert_same_form(got[1], rfc("branching_conv1d_step1"))
    assert_same_form(got[2], rfc("branching_conv1d_step2"))
    assert_same_form(got[3], rfc("branching_conv1d_step3", respell=IF_PASS_ELSE))
    assert_same_form(got[4], rfc("branching_conv1d_step4", respell=KEPT))
    assert got[4] is got[3]


def test_schedule_primitive_is_the_four_steps():
    sch = pp.Schedule(rfc("branching_conv1d_before"))
    sch.reduce_overcompute_through_branching("compute")
    pp.assert_structural_equal(sch.func, steps()[4])
    assert str(sch.trace) == "sch.reduce_overcompute_through_branching(block='compute')"


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_steps_run_like_the_rfc_and_the_guarded_loop(target):
    # The RFC's "before" reads A[4, 0] (codegen refuses it); every step after it is in
    # bounds and computes what the guarded loop of overcompute_conv1d_sequential does.
    got = steps()
    for k in (1, 2, 4):
        assert_runs_like(got[k], rfc(f"branching_conv1d_step{k}"), targets=(target,))
        assert_runs_like(got[k], rfc("overcompute_conv1d_sequential"), targets=(target,))


def test_overcompute_cannot_come_back_the_rfcs_a_is_too_short():
    sch = pp.Schedule(rfc("branching_conv1d_before"))
    sch.reduce_overcompute_through_branching("compute")
    with pytest.raises(IllegalTransformError, match="leaves a buffer") as info:
        sch.remove_branching_through_overcompute("compute")
    assert info.value.evidence.instances == (Instance("compute", {"io": 3, "ii": 2, "f": 2}),)
    assert info.value.evidence.element == Element("A", (4, 0))


# ---------------------------------------------------------------- there and back

CONV = '''
@T.prim_func
def func(A: T.Buffer(({m},), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({n},), "float32")):
    with T.block("compute"):
        for i in T.serial({n}):
            B[i] = 0.0
            for f in T.serial(3):
                B[i] = B[i] + F[f] * A[i + f]
'''


@functools.cache
def there_and_back(n: int, c: int, pad: float):
    sch = pp.Schedule(pp.parse(CONV.format(n=n, m=n + 2)))
    sch.transform_layout("compute", "A", lambda i: [i // c, i % c], pad_value=0.0)
    sch.transform_layout("compute", "B", lambda i: [i // c, i % c], pad_value=pad)
    sch.sequential_buffer_access("compute", "B")
    guarded = sch.func
    sch.remove_branching_through_overcompute("compute")
    overcomputed = sch.func
    sch.reduce_overcompute_through_branching("compute")
    return guarded, overcomputed, sch


@pytest.mark.parametrize(("n", "c", "pad"), [(15, 4, 0.0), (23, 8, -2.0), (11, 6, 0.5)])
def test_round_trip_restores_the_guard(n, c, pad):
    guarded, overcomputed, sch = there_and_back(n, c, pad)
    assert len(ifs(overcomputed)) == 1  # only the pad stage's
    back = sch.func
    assert len(ifs(back)) == 2
    # The guard comes back as the negated padding predicate, as ISL spells it (with one
    # padding element, `not (ii == 5 and io == 1)`): the set of the original guard.
    assert_same_set(show(ifs(back)[0].condition), show(ifs(guarded)[0].condition),
                    {"io": -(-n // c), "ii": c})
    assert [s.primitive for s in sch.trace][-2:] == [
        "remove_branching_through_overcompute", "reduce_overcompute_through_branching"]
    replayed = sch.trace.apply_to(pp.parse(CONV.format(n=n, m=n + 2)))
    pp.assert_structural_equal(replayed.func, back)


@pytest.mark.parametrize(("n", "c", "pad"), [(15, 4, 0.0), (23, 8, -2.0)])
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_round_trip_computes_the_convolution(n, c, pad, target):
    guarded, overcomputed, sch = there_and_back(n, c, pad)
    layouts = {"A": Layout(lambda i: [i // c, i % c], 0.0),
               "B": Layout(lambda i: [i // c, i % c], pad)}
    for f in (overcomputed, sch.func):
        assert_matches_original(pp.parse(CONV.format(n=n, m=n + 2)), f, layouts,
                                targets=(target,))
