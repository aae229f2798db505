"""RFC 0077's 1-d convolution, "New Primitive - Remove Branching Through Overcompute",
derived step by step from the RFC's "before" text with ``Schedule.transform_layout``,
``sequential_buffer_access`` and ``remove_branching_through_overcompute``.

The RFC's last step reads ``A[4, 0]`` past A's (4, 4) shape (its argument covers B's
padding writes, not A's reads), so polypad refuses it with that element as evidence.
With A long enough for the overcompute -- ``n % c == c - 1`` outputs, A padded with a pad
value -- the same schedule reaches the RFC's unguarded loop, for several sizes, factors
and pad values.
"""

from __future__ import annotations

import functools

import pytest
from walk_support import (
    UNDEF,
    Layout,
    assert_matches_original,
    assert_runs_like,
    assert_same_form,
    assert_same_set,
    block_names,
    ifs,
    rfc,
)

import analyses
import polypad as pp
from analyses import Element, Instance, Refuted
from analyses.conditional import Removable
from polypad import T
from polypad.errors import IllegalTransformError
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
)

# polypad writes the padding predicate from the index map, 4 * io + ii >= 14; the RFC
# spells it io == 3 and ii >= 2 (and the guard 0 <= 4 * io + ii < 14).
PAD_SPELLING = {"io == 3 and ii >= 2": "4 * io + ii >= 14"}
GUARD_SPELLING = {"0 <= 4 * io + ii < 14": "4 * io + ii < 14"}


def test_spellings_are_the_same_sets():
    assert_same_set("io == 3 and ii >= 2", "4 * io + ii >= 14", {"io": 4, "ii": 4})
    assert_same_set("0 <= 4 * io + ii < 14", "4 * io + ii < 14", {"io": 4, "ii": 4})


@functools.cache
def rfc_walk() -> dict[str, pp.ir.nodes.PrimFunc]:
    sch = pp.Schedule(rfc("overcompute_conv1d_before"))
    steps = {}
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4])
    steps["transform_a"] = sch.func
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=0.0)
    steps["transform_b"] = sch.func
    sch.sequential_buffer_access("compute", "B")
    steps["sequential"] = sch.func
    return steps


def test_rfc_steps_are_derived():
    steps = rfc_walk()
    assert_same_form(steps["transform_a"], rfc("overcompute_conv1d_transform_a"))
    assert_same_form(steps["transform_b"],
                     rfc("overcompute_conv1d_transform_b", respell=PAD_SPELLING))
    assert_same_form(steps["sequential"], rfc("overcompute_conv1d_sequential",
                                              respell={**PAD_SPELLING, **GUARD_SPELLING}))
    assert block_names(steps["sequential"]) == ["compute", "B_padding"]


@pytest.mark.parametrize("step", ["transform_b", "sequential"])
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_rfc_steps_run_like_the_rfc(step, target):
    assert_runs_like(rfc_walk()[step], rfc(f"overcompute_conv1d_{step}"), targets=(target,))
    layouts = {"A": Layout(lambda i: [i // 4, i % 4]),  # 16 elements: no padding
               "B": Layout(lambda i: [i // 4, i % 4], 0.0)}
    assert_matches_original(rfc("overcompute_conv1d_before"), rfc_walk()[step], layouts,
                            targets=(target,))


def test_rfc_overcompute_is_refused_because_it_reads_past_a():
    f = rfc_walk()["sequential"]
    decided = analyses.can_remove_conditional(f, "compute")
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    # The first overcomputed instance that leaves A: B[3, 2] needs A[4 * 3 + 2 + 2] = A[4, 0].
    assert cex.instances == (Instance("compute", {"io": 3, "ii": 2, "f": 2}),)
    assert cex.element == Element("A", (4, 0))
    assert "leaves a buffer" in cex.description
    assert remove_branching_through_overcompute(f, block="compute") is f
    sch = pp.Schedule(f)
    with pytest.raises(IllegalTransformError, match="no conditional of block 'compute'"):
        sch.remove_branching_through_overcompute("compute")
    assert sch.func is f and not sch.trace.steps


# ---------------------------------------------------------------- sizes where it fits

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

# The fast loop, as the RFC writes it (with F, which the RFC's text drops), at any size.
FAST = '''
@T.prim_func
def func(A: T.Buffer(({ao}, {c}), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({bo}, {c}), "float32")):
    for io, ii in T.grid({ao}, {c}):
        T.assume({c} * io + ii < {m} or A[io, ii] == 0.0)
    with T.block("compute"):
        for io, ii in T.grid({bo}, {c}):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // {c}, (ii + f) % {c}]
    for io, ii in T.grid({bo}, {c}):
        with T.block("B_padding"):
            if {c} * io + ii >= {n}:
                B[io, ii] = {pad}
'''

# n outputs, split by c, pad value of B.  n % c == c - 1: the last tile's overcompute
# reads A[n + 1], inside A's padded tile (A has n + 2 elements).
SIZES = [(15, 4, 0.0), (11, 6, -1.0), (23, 8, 2.5), (7, 4, UNDEF), (31, 16, 0.0)]


def _pad(pad):
    return T.undef() if pad == UNDEF else pad


@functools.cache
def fitting_walk(n: int, c: int, pad) -> tuple[pp.ir.nodes.PrimFunc, pp.ir.nodes.PrimFunc]:
    """(sequential step, after remove_branching_through_overcompute)."""
    sch = pp.Schedule(pp.parse(CONV.format(n=n, m=n + 2)))
    sch.transform_layout("compute", "A", lambda i: [i // c, i % c], pad_value=0.0)
    sch.transform_layout("compute", "B", lambda i: [i // c, i % c], pad_value=_pad(pad))
    sch.sequential_buffer_access("compute", "B")
    before = sch.func
    sch.remove_branching_through_overcompute("compute")
    return before, sch.func


@pytest.mark.parametrize(("n", "c", "pad"), SIZES)
def test_fast_loop_is_derived_where_the_overcompute_stays_inside_a(n, c, pad):
    before, after = fitting_walk(n, c, pad)
    decided = analyses.can_remove_conditional(before, "compute")
    assert isinstance(decided, Removable) and decided.keep == "then"
    assert "rule 1" in decided.detail and "B_padding" in decided.detail
    fast = pp.parse(FAST.format(n=n, m=n + 2, c=c, ao=(n + 2 + c - 1) // c, bo=(n + c - 1) // c,
                                pad="T.undef()" if pad == UNDEF else pad))
    assert_same_form(after, fast)


@pytest.mark.parametrize(("n", "c", "pad"), SIZES)
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_fast_loop_computes_the_convolution(n, c, pad, target):
    before, after = fitting_walk(n, c, pad)
    layouts = {"A": Layout(lambda i: [i // c, i % c], 0.0),
               "B": Layout(lambda i: [i // c, i % c], pad)}
    original = pp.parse(CONV.format(n=n, m=n + 2))
    for f in (before, after):
        assert_matches_original(original, f, layouts, targets=(target,))


def test_without_a_pad_value_on_b_the_guard_stays():
    # B's padding belongs to the caller: the overcompute would change it.
    sch = pp.Schedule(pp.parse(CONV.format(n=15, m=17)))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4])
    sch.sequential_buffer_access("compute", "B")
    decided = analyses.can_remove_conditional(sch.func, "compute")
    # The rules leave it Unknown (the caller's B[3, 3] may already hold what the
    # overcompute stores); a run finds inputs where it does not.
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.element.buffer == "B" and 4 * cex.element.indices[0] + cex.element.indices[1] >= 15
    assert cex.values[f"B{list(cex.element.indices)} before"] != \
        cex.values[f"B{list(cex.element.indices)} after"]
    report = explain_branching_through_overcompute(sch.func, block="compute")
    assert report.func is sch.func and [e.removed for e in report.entries] == [False]


@pytest.mark.parametrize("n", [7, 11, 15, 23])
def test_overcompute_may_not_read_padding_without_a_pad_value(n):
    # RFC 0077 review: without a pad_value no later transformation may introduce a read of
    # the padding (Points of Communication: it may hold uninitialised values).  B's pad
    # stage would overwrite what the read computes; the read itself is refused.
    sch = pp.Schedule(pp.parse(CONV.format(n=n, m=n + 2)))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4])
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.sequential_buffer_access("compute", "B")
    decided = analyses.can_remove_conditional(sch.func, "compute")
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    # The first overcomputed output, B[n], reads A[n + 2]: the first element of A's padding.
    assert cex.instances == (Instance("compute_1", {"io": n // 4, "ii": n % 4, "f": 2}),)
    assert cex.element == Element("A", ((n + 2) // 4, (n + 2) % 4))
    assert "padding of A that holds no known value" in cex.description
    report = explain_branching_through_overcompute(sch.func, block="compute")
    assert report.func is sch.func and [e.removed for e in report.entries] == [False]


def test_guarded_and_fast_loops_differ_only_in_the_guard():
    before, after = fitting_walk(15, 4, 0.0)
    assert len(ifs(before)) == 2 and len(ifs(after)) == 1  # the pad stage's guard stays
    assert ifs(after)[0] is ifs(before)[1]
