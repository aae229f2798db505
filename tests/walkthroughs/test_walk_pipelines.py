"""RFC 0077's sum pipelines, derived from their "before" texts:

* "Allocate internal buffer containing transformation padding": ``cache_read``,
  ``transform_layout`` of the cache with pad value 0, ``sequential_buffer_access``,
  ``remove_branching_through_overcompute``;
* "Explicitly write next operator's desired default": a producer and a consumer in one
  module, each transformed with pad value 0, then ``sequential_buffer_access``,
  ``merge_adjacent_loops``, ``simplify`` and the overcompute pass;
* the guide's ``row_summation`` ("Overcompute vs Branching"), at several sizes, split
  factors and pad values, including those that must keep the guard.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from walk_support import (
    Layout,
    assert_matches_original,
    assert_same_form,
    block_names,
    ifs,
    kernel,
    rfc,
)

import analyses
import polypad as pp
from analyses import Element, Refuted, Unknown
from analyses.conditional import Removable
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
    remove_no_op,
    simplify,
)

PAD_SPELLING = {"io == 3 and ii >= 2": "4 * io + ii >= 14"}  # same set: test_walk_conv1d

# ---------------------------------------------------------------- internal buffer


@functools.cache
def internal() -> dict:
    sch = pp.Schedule(rfc("internal_buffer_before"))
    steps = {}
    assert sch.cache_read(None, "A", "local") == "A_local"
    steps["cache_read"] = sch.func
    sch.transform_layout(None, "A_local", lambda i: [i // 4, i % 4], pad_value=0)
    steps["transformed"] = sch.func
    return steps


def test_internal_buffer_cache_and_layout_are_derived():
    steps = internal()
    assert_same_form(steps["cache_read"], rfc("internal_buffer_cache_read"))
    assert_same_form(steps["transformed"],
                     rfc("internal_buffer_transformed", respell=PAD_SPELLING))
    assert block_names(steps["transformed"]) == ["A_local", "A_local_padding"]


def test_internal_buffer_sequential_access_is_derived():
    sch = pp.Schedule(internal()["transformed"])
    sch.sequential_buffer_access(None, "A_local")
    assert_same_form(sch.func, rfc("internal_buffer_sequential", respell=PAD_SPELLING))


@functools.cache
def internal_from_rfc_transformed():
    """The rest of the walk, from the RFC's (block-free) transformed step."""
    sch = pp.Schedule(rfc("internal_buffer_transformed"))
    sch.sequential_buffer_access(None, "A_local")
    sequential, report = sch.func, explain_branching_through_overcompute(sch.func)
    sch.remove_branching_through_overcompute(None)
    pp.assert_structural_equal(sch.func, report.func)
    return sequential, report


def test_internal_buffer_later_steps_are_derived():
    sequential, report = internal_from_rfc_transformed()
    assert_same_form(sequential, rfc("internal_buffer_sequential"))
    assert_same_form(report.func, rfc("internal_buffer_overcompute"))
    copy, pad, consumer = report.entries
    # The copy would read A[14]: the caller's A has 14 elements.
    assert isinstance(copy.decision, Refuted)
    assert copy.decision.counterexample.element == Element("A", (14,))
    # The pad stage would overwrite a logical element of A_local, which the sum then
    # reads (which one is Z3's choice: A_local[1, 0] and A_local[2, 0] are both seen).
    assert isinstance(pad.decision, Refuted)
    cex = pad.decision.counterexample
    io, ii = cex.element.indices
    assert cex.element.buffer == "A_local" and 4 * io + ii < 14
    assert cex.instances[0].indices == {"io": io, "ii": ii}
    assert cex.values["stored 0"] == 0 and cex.values[f"A_local[{io}, {ii}]"] != 0
    # The consumer's guard goes: A_local's padding holds the 0 the pad stage stored.
    assert consumer.removed and "rule 3" in consumer.decision.detail


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_internal_buffer_steps_compute_the_sum(target):
    original = rfc("internal_buffer_before")
    sequential, report = internal_from_rfc_transformed()
    for f in (*internal().values(), sequential, report.func):
        assert_matches_original(original, f, {}, seeds=(0, 1), targets=(target,))


# ---------------------------------------------------------------- explicit default

# polypad rebuilds `1000 + i` from the inverse map as 1000 + (4 * io + ii); the RFC's
# (corrected) text adds left to right.  The same integer, by associativity.
VALUE_SPELLING = {"1000 + 4 * io + ii": "1000 + (4 * io + ii)"}


@functools.cache
def explicit() -> dict:
    sch = pp.Schedule(rfc("explicit_default_step0"))
    steps = {}
    for name in ("producer", "consumer"):
        sch.work_on(name)
        sch.transform_layout(None, "A", lambda i: [i // 4, i % 4], pad_value=0)
    steps[1] = sch.mod
    for name in ("producer", "consumer"):
        sch.work_on(name)
        sch.sequential_buffer_access(None, "A")
    steps[2] = sch.mod
    sch.work_on("producer")
    outer = sch.func.body.stmts
    sch.merge_adjacent_loops(outer[0], outer[1])
    inner = sch.func.body.body.stmts
    sch.merge_adjacent_loops(inner[0], inner[1])
    steps[3] = sch.mod
    return steps


def test_explicit_default_steps_1_to_3_are_derived():
    steps = explicit()
    for k in (1, 2, 3):
        respell = VALUE_SPELLING if k > 1 else None
        for name in ("producer", "consumer"):
            assert_same_form(steps[k][name], rfc(f"explicit_default_step{k}", name, respell))


def test_explicit_default_step_4_is_derived():
    # transform_layout put the pad store in block 'A_padding'; simplify merges the
    # complementary guards through it and the block moves into the else branch
    # (the RFC leaves blocks out, so its form is this one unblocked).
    got = simplify(explicit()[3]["producer"])
    assert_same_form(got, rfc("explicit_default_step4", "producer", VALUE_SPELLING))
    (guard,) = ifs(got)
    assert isinstance(guard.else_case, pp.ir.nodes.Block)
    assert block_names(got) == ["A_padding"]


def test_explicit_default_steps_4_and_5_from_the_rfc_text():
    producer = simplify(rfc("explicit_default_step3", "producer"))
    assert_same_form(producer, rfc("explicit_default_step4", "producer"))
    # The if/else stays: where 4 * io + ii >= 14 the then branch would store 1014, not 0.
    decided = analyses.can_remove_conditional(producer, ifs(producer)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.instances[0].indices == {"io": 3, "ii": 2}
    assert cex.values["stored 1000 + 4 * io + ii"] == 1014
    # The consumer's guard goes, on the strength of the assumption on A's padding.
    consumer = explicit()[2]["consumer"]
    report = explain_branching_through_overcompute(consumer)
    assert [e.removed for e in report.entries] == [True]
    assert "rule 3" in report.entries[0].decision.detail
    assert_same_form(report.func, rfc("explicit_default_step5", "consumer"))


def _pipeline(mod, target: str, a: np.ndarray) -> int:
    producer, consumer = mod["producer"], mod["consumer"]
    (a,) = [a.copy()]
    kernel(producer, target)(a)
    b = np.zeros(1, "int32")
    kernel(consumer, target)(a, b)
    return int(b[0])


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_explicit_default_pipelines_compute_the_sum(target):
    expected = sum(1000 + i for i in range(14))
    junk = np.full((4, 4), -77, "int32")  # what the producer's caller passes in
    assert _pipeline(rfc("explicit_default_step0"), target, junk.reshape(-1)[:14]) == expected
    for mod in explicit().values():
        assert _pipeline(mod, target, junk) == expected
    step4 = simplify(explicit()[3]["producer"])
    mod = pp.ir.nodes.IRModule("m", (step4, explicit()[3]["consumer"]))
    assert _pipeline(mod, target, junk) == expected
    overcomputed = remove_branching_through_overcompute(explicit()[2]["consumer"])
    mod = pp.ir.nodes.IRModule("m", (explicit()[3]["producer"], overcomputed))
    assert _pipeline(mod, target, junk) == expected


# ---------------------------------------------------------------- row summation

ROWS = '''
@T.prim_func
def row_summation(A: T.Buffer(({r}, {c}), "float32"), B: T.Buffer(({r},), "float32")):
    for i in T.serial({r}):
        B[i] = 0.0
        for j in T.serial({c}):
            B[i] = B[i] + A[i, j]
'''

WITH_ASSUME = {'B = T.match_buffer(b, (16,), "float32")\n':
               'B = T.match_buffer(b, (16,), "float32")\n'
               "    for i, jo, ji in T.grid(16, 4, 4):\n"
               "        T.assume(4 * jo + ji < 14 or A[i, jo, ji] == 0.0)\n"}


@functools.cache
def rows(r: int, c: int, split: int, pad, strict: bool = False):
    text = rfc("row_summation_before") if (r, c) == (16, 14) else pp.parse(ROWS.format(r=r, c=c))
    sch = pp.Schedule(text)
    sch.transform_layout(None, "A", lambda i, j: [i, j // split, j % split], pad_value=pad)
    sch.sequential_buffer_access(None, "A")
    return sch.func, explain_branching_through_overcompute(sch.func, strict_ieee=strict)


def test_row_summation_split_is_the_rfcs():
    split, report = rows(16, 14, 4, None)
    assert_same_form(split, rfc("row_summation_split"))
    assert report.func is split  # nothing pins the padding: the guard stays


def test_row_summation_overcompute_is_the_rfcs_with_the_pad_value():
    # The RFC annotates the layout with the pad value but does not show the T.assume
    # it becomes; otherwise the forms are the RFC's.
    split, report = rows(16, 14, 4, 0.0)
    assert_same_form(split, rfc("row_summation_split", respell=WITH_ASSUME))
    sch = pp.Schedule(split)
    sch.remove_branching_through_overcompute(None)
    assert_same_form(sch.func, rfc("row_summation_overcompute", respell=WITH_ASSUME))
    pp.assert_structural_equal(report.func, sch.func)
    (entry,) = report.entries
    assert isinstance(entry.decision, Removable) and "rule 3" in entry.decision.detail


# (rows, columns, split factor, pad value); -0.0 is as good as 0.0 over the reals.
REMOVABLE = [(16, 14, 4, 0.0), (8, 13, 4, 0.0), (5, 30, 8, -0.0), (3, 17, 6, 0.0)]


@pytest.mark.parametrize(("r", "c", "split", "pad"), REMOVABLE)
def test_row_summation_guard_goes_when_the_padding_is_zero(r, c, split, pad):
    _, report = rows(r, c, split, pad)
    assert [e.removed for e in report.entries] == [True]
    assert not ifs(report.func)


@pytest.mark.parametrize(("r", "c", "split", "pad"), REMOVABLE)
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_row_summation_steps_compute_the_sums(r, c, split, pad, target):
    before, report = rows(r, c, split, pad)
    layout = {"A": Layout(lambda i, j: [i, j // split, j % split], pad)}
    original = pp.parse(ROWS.format(r=r, c=c))
    for f in (before, report.func):
        assert_matches_original(original, f, layout, targets=(target,))


@pytest.mark.parametrize(("c", "split", "pad"), [(15, 4, 1.0), (29, 6, 2.5), (15, 8, -1.0)])
def test_row_summation_guard_stays_with_one_padding_element(c, split, pad):
    # One padding element per row: the counterexample is that element, added to B[0]
    # (a running sum: any value, and B[0] + pad is not B[0] whatever it is).
    _, report = rows(4, c, split, pad)
    (entry,) = report.entries
    assert not entry.removed and isinstance(entry.decision, Refuted)
    cex = entry.decision.counterexample
    last = (c // split, c % split)
    assert cex.instances[0].indices == {"i": 0, "jo": last[0], "ji": last[1]}
    assert cex.element == Element("B", (0,))
    assert cex.values == {"B[0]": "any", f"A[0, {last[0]}, {last[1]}]": pad,
                          "stored B[i] + A[i, jo, ji]": "any"}


@pytest.mark.parametrize(("c", "split"), [(15, 4), (29, 6), (15, 8), (14, 4)])
def test_row_summation_may_not_read_padding_without_a_pad_value(c, split):
    # No pad value: A's padding holds whatever the caller's memory held, and no
    # transformation may introduce a read of it (RFC 0077 review).
    _, report = rows(4, c, split, None)
    (entry,) = report.entries
    assert not entry.removed and isinstance(entry.decision, Refuted)
    cex = entry.decision.counterexample
    last = (c // split, c % split)
    assert cex.instances[0].indices == {"i": 0, "jo": last[0], "ji": last[1]}
    assert cex.element == Element("A", (0, *last))
    assert "padding of A that holds no known value" in cex.description


def test_row_summation_guard_stays_with_more_padding():
    _, report = rows(16, 14, 4, 1.0)
    (entry,) = report.entries
    assert not entry.removed and not isinstance(entry.decision, Removable)


def test_row_summation_guard_stays_with_more_padding_refuted():
    # Two padding elements of 1.0 per row change B[i] only together (0 + 1 + 1): no
    # single instance is refuted, a run on inputs that honour the assumptions is.
    _, report = rows(16, 14, 4, 1.0)
    decision = report.entries[0].decision
    assert isinstance(decision, Refuted)
    cex = decision.counterexample
    row = cex.element.indices[0]
    assert cex.element.buffer == "B"
    assert cex.values[f"B[{row}] after"] == cex.values[f"B[{row}] before"] + 2.0


def test_row_summation_strict_ieee_keeps_the_guard():
    # IEEE: -0.0 + 0.0 is +0.0, so adding the padding is not a no-op bit for bit unless
    # B[i] is known not to be -0.0.  Refused (as Unknown), never removed.
    _, report = rows(16, 14, 4, 0.0, strict=True)
    (entry,) = report.entries
    assert not entry.removed and isinstance(entry.decision, Unknown)


def test_row_summation_without_padding_still_sums():
    """Once a wrong proof: a pad value on a layout with no padding assumed every element
    equal to it, and simplify and remove_no_op deleted the sum."""
    sch = pp.Schedule(pp.parse(ROWS.format(r=4, c=16)))
    sch.transform_layout(None, "A", lambda i, j: [i, j // 4, j % 4], pad_value=0.0)
    derived = remove_no_op(simplify(sch.func))
    layout = {"A": Layout(lambda i, j: [i, j // 4, j % 4], 0.0)}
    assert_matches_original(pp.parse(ROWS.format(r=4, c=16)), derived, layout)
