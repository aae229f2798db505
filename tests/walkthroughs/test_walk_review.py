"""Examples from the RFC 0077 review (reference/rfc-0077-review-notes.md), derived with
polypad's primitives:

* the 127-wide matmul split 4 x 32: padding B and C to 128 gives the clean loop with no
  guard, when the pad values (or the pad-value stores) make the overcompute a no-op;
* pad values change through computation (grow -> addone -> grow): ``x + 1`` maps a
  padding of 0 to 1, so a sum after it may not assume 0 while a product may; ``2 * x``
  keeps 0; writing the pad value again (the second grow) restores it;
* ``exp`` in the padding: ``exp(0) = 1``, so a padding written with 0 in the same loop
  forces a ``T.if_then_else`` (a select) rather than a removal.
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
    ifs,
    run,
)

import analyses
import polypad as pp
from analyses import Element, Instance, Refuted, padding_reads
from analyses.conditional import Removable
from polypad import T
from polypad.errors import IllegalTransformError
from polypad.ir.locate import replace
from polypad.model import extract
from polypad.transform import explain_branching_through_overcompute

# ---------------------------------------------------------------- matmul, 127 wide

# The width and the tile are the review's; M and K are kept small so that the reference
# executor runs the products quickly.

MATMUL = '''
@T.prim_func
def matmul(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, {w}), "float32"),
           C: T.Buffer((2, {w}), "float32")):
    for i, j in T.grid(2, {w}):
        C[i, j] = 0.0
        for k in T.serial(3):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''

CLEAN = '''
@T.prim_func
def matmul(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, {jo}, {t}), "float32"),
           C: T.Buffer((2, {jo}, {t}), "float32")):
    for k, jo, ji in T.grid(3, {jo}, {t}):
        T.assume({t} * jo + ji < {w} or B[k, jo, ji] == {b_pad})
    for i, jo, ji in T.grid(2, {jo}, {t}):
        C[i, jo, ji] = 0.0
        for k in T.serial(3):
            C[i, jo, ji] = C[i, jo, ji] + A[i, k] * B[k, jo, ji]
    for i, jo, ji in T.grid(2, {jo}, {t}):
        with T.block("C_padding"):
            if {t} * jo + ji >= {w}:
                C[i, jo, ji] = {c_pad}
'''


def _pad(value):
    return T.undef() if value == UNDEF else value


@functools.cache
def matmul(w: int, t: int, b_pad, c_pad):
    """(loops following C's tiles, the overcompute pass's report on them)."""
    sch = pp.Schedule(pp.parse(MATMUL.format(w=w)))
    sch.transform_layout(None, "B", lambda k, j: [k, j // t, j % t], pad_value=_pad(b_pad))
    sch.transform_layout(None, "C", lambda i, j: [i, j // t, j % t], pad_value=_pad(c_pad))
    sch.sequential_buffer_access(None, "C")
    before, report = sch.func, explain_branching_through_overcompute(sch.func)
    if any(e.removed for e in report.entries):
        sch.remove_branching_through_overcompute(None)
        pp.assert_structural_equal(sch.func, report.func)
    return before, report


PARTITIONED = '''
@T.prim_func
def matmul(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, {w}), "float32"),
           C: T.Buffer((2, {w}), "float32")):
    for i in T.serial(2):
        for j_0, j_1 in T.grid({whole}, {t}):
            C[i, j_0 * {t} + j_1] = 0.0
            for k in T.serial(3):
                C[i, j_0 * {t} + j_1] = C[i, j_0 * {t} + j_1] + A[i, k] * B[k, j_0 * {t} + j_1]
        for j_1_tail in T.serial({tail}):
            C[i, j_1_tail + {start}] = 0.0
            for k in T.serial(3):
                C[i, j_1_tail + {start}] = (C[i, j_1_tail + {start}]
                                            + A[i, k] * B[k, j_1_tail + {start}])
'''


@pytest.mark.parametrize(("w", "t"), [(127, 32), (61, 16), (100, 8)])
def test_matmul_partition(w, t):
    # The partition side of "partition vs pad": whole tiles without a guard,
    # then one tail loop over the last w % t columns.
    original = pp.parse(MATMUL.format(w=w))
    sch = pp.Schedule(original)
    assert sch.get_loops(None) == ["i", "j", "k"]
    assert sch.split("j", [None, t], tail="partition") == ["j_0", "j_1"]
    whole, tail = divmod(w, t)
    want = pp.parse(PARTITIONED.format(w=w, t=t, whole=whole, tail=tail, start=whole * t))
    assert_same_form(sch.func, want)
    assert_runs_like(sch.func, original)
    assert str(sch.trace) == f"sch.split(loop='j', factors=[None, {t}], tail='partition')"


# (width, tile, B's pad value, C's pad value): the guard goes whatever B's padding holds,
# since C's padding is overwritten after.
CLEAN_CASES = [(127, 32, 0.0, 0.0), (127, 32, 0.0, UNDEF), (127, 32, 1.0, -1.0),
               (61, 16, 0.0, 0.0), (100, 8, 2.0, UNDEF)]


@pytest.mark.parametrize(("w", "t", "b_pad", "c_pad"), CLEAN_CASES)
def test_matmul_padded_to_whole_tiles_loses_its_guard(w, t, b_pad, c_pad):
    _, report = matmul(w, t, b_pad, c_pad)
    guard, pad_stage = report.entries
    assert guard.removed and isinstance(guard.decision, Removable)
    assert "rule 1" in guard.decision.detail and "C_padding" in guard.decision.detail
    assert not pad_stage.removed
    clean = CLEAN.format(w=w, t=t, jo=-(-w // t), b_pad=b_pad,
                         c_pad="T.undef()" if c_pad == UNDEF else c_pad)
    assert_same_form(report.func, pp.parse(clean))


@pytest.mark.parametrize(("w", "t", "b_pad", "c_pad"), CLEAN_CASES[:3] + CLEAN_CASES[4:])
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_matmul_clean_loop_computes_the_product(w, t, b_pad, c_pad, target):
    before, report = matmul(w, t, b_pad, c_pad)
    layouts = {"B": Layout(lambda k, j: [k, j // t, j % t], b_pad),
               "C": Layout(lambda i, j: [i, j // t, j % t], c_pad)}
    for f in (before, report.func):
        assert_matches_original(pp.parse(MATMUL.format(w=w)), f, layouts, targets=(target,))


def test_matmul_without_a_pad_value_on_c_keeps_its_guard():
    # C's padding belongs to the caller, and the overcompute would store there.
    before, report = matmul(127, 32, 0.0, None)
    (guard,) = report.entries
    assert not guard.removed and report.func is before
    # Unknown to the rules (C[0, 3, 31] may already hold the product); a run on small
    # inputs finds a padding element of C the overcompute changes.
    cex = guard.decision.counterexample
    assert isinstance(guard.decision, Refuted) and cex.element.buffer == "C"
    _, jo, ji = cex.element.indices
    assert 32 * jo + ji >= 127


@pytest.mark.parametrize(("w", "t"), [(127, 32), (61, 16), (100, 8), (9, 4)])
@pytest.mark.parametrize("c_pad", [0.0, UNDEF, -3.0])
def test_matmul_may_not_read_bs_padding_without_a_pad_value(w, t, c_pad):
    # RFC 0077 review: without a pad_value no later transformation may introduce a read
    # of the padding -- even where C's pad stage overwrites what the read computed.
    before, report = matmul(w, t, None, c_pad)
    guard = report.entries[0]
    assert not guard.removed and report.func is before
    cex = guard.decision.counterexample
    jo, ji = w // t, w % t  # the first padding column
    assert cex.instances == (Instance("S1", {"i": 0, "jo": jo, "ji": ji, "k": 0}),)
    assert cex.element == Element("B", (0, jo, ji))
    assert f"read B[0, {jo}, {ji}], padding of B that holds no known value" in str(cex)
    # The overcompute does read it: B's padding, never touched before, is read after.
    overcomputed = replace(before, ifs(before)[0], ifs(before)[0].then_case)
    reads = padding_reads.unknown_padding_reads(extract(overcomputed))[0]
    assert not reads.is_empty()
    assert padding_reads.unknown_padding_reads(extract(before))[0].is_empty()


@pytest.mark.parametrize(("w", "t"), [(127, 32), (30, 8)])
def test_the_primitive_refuses_with_the_padding_read_as_evidence(w, t):
    before, _ = matmul(w, t, None, 0.0)
    sch = pp.Schedule(before)
    with pytest.raises(IllegalTransformError) as raised:
        sch.remove_branching_through_overcompute(None)
    assert raised.value.evidence.element == Element("B", (0, w // t, w % t))
    assert sch.func is before and not sch.trace.steps


@pytest.mark.parametrize(("w", "t"), [(127, 32), (61, 16)])
def test_matmul_may_read_bs_padding_it_may_hold_anything_in(w, t):
    # pad_value=T.undef(): the T.assume grants permission to read the padding.
    _, report = matmul(w, t, UNDEF, 0.0)
    assert report.entries[0].removed
    assert "rule 1" in report.entries[0].decision.detail


def test_a_second_layout_keeps_the_first_ones_padding():
    # B split twice with no pad value: the padding of the first split is still padding
    # (a read of it still refused), and the second split adds its own.
    sch = pp.Schedule(pp.parse(MATMUL.format(w=61)))
    sch.transform_layout(None, "B", lambda k, j: [k, j // 16, j % 16])
    sch.transform_layout(None, "B", lambda k, jo, ji: [k, jo, ji // 3, ji % 3])
    (b,) = [p for p in sch.func.params if p.name == "B"]
    assert b.shape == (3, 4, 6, 3)
    model = extract(sch.func)
    padding = padding_reads._padding_set(model, b)
    assert padding.count_val().to_python() == 3 * (4 * 6 * 3 - 61)
    report = explain_branching_through_overcompute(sch.func)
    assert not any(e.removed for e in report.entries)


# ---------------------------------------------------------------- grow -> op -> grow

CHAIN = '''
@T.prim_func
def chain(A: T.Buffer(({n},), "float32"), D: T.Buffer((1,), "float32")):
    B = T.alloc_buffer(({n},), "float32")
    with T.block("op"):
        for i in T.serial({n}):
            B[i] = {op}
    with T.block("reduce"):
        D[0] = {init}
        for i in T.serial({n}):
            D[0] = D[0] {red} B[i]
'''
REDUCTIONS = {"sum": ("+", "0.0"), "product": ("*", "1.0")}


def chain(op: str, reduction: str, n: int) -> pp.ir.nodes.PrimFunc:
    red, init = REDUCTIONS[reduction]
    return pp.parse(CHAIN.format(op=op, red=red, init=init, n=n))


# These tests need the answers, not the budget's: the default 10 s can run out on a busy
# shared machine (a niced run there gets a sliver of a core), and the answer is then
# Unknown for every conditional.  The budget's own behaviour is tests/test_budget.py's.
UNHURRIED = 600.0


@functools.cache
def grown(op: str, reduction: str, n: int, b_pad=None):
    """A grown with padding 0, ``op`` computed over the padding (the first guard goes:
    B is internal), then the reduction's guard offered to the same pass."""
    sch = pp.Schedule(chain(op, reduction, n), budget=UNHURRIED)
    sch.transform_layout(None, "A", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.transform_layout(None, "B", lambda i: [i // 4, i % 4], pad_value=_pad(b_pad))
    sch.sequential_buffer_access("op", "B")
    sch.sequential_buffer_access("reduce", "B")
    return sch.func, explain_branching_through_overcompute(sch.func, budget=UNHURRIED)


# (op, reduction, whether the reduction's guard may go): the padding holds op(0).
CHAINS = [
    ("A[i] + 1.0", "product", True),  # addone: padding 1, the product's identity
    ("A[i] + 1.0", "sum", False),  # ... not the sum's: a sum after it may not assume 0
    ("A[i] * 2.0", "sum", True),  # 2 * 0 is still 0
    ("A[i] * 2.0", "product", False),
    ("T.exp(A[i])", "sum", False),  # exp(0) = 1
]


@pytest.mark.parametrize("n", [14, 15])
@pytest.mark.parametrize(("op", "reduction", "goes"), CHAINS)
def test_pad_value_flows_through_the_op(op, reduction, goes, n):
    _, report = grown(op, reduction, n)
    first, second = report.entries
    assert first.removed and "rule 2" in first.decision.detail  # B's padding: unread
    assert second.removed is goes
    if goes:
        assert "rule 3" in second.decision.detail


@pytest.mark.parametrize(("op", "reduction", "goes"), CHAINS)
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_chains_compute_the_reduction(op, reduction, goes, target):
    _, report = grown(op, reduction, 15)
    layouts = {"A": Layout(lambda i: [i // 4, i % 4], 0.0)}
    assert_matches_original(chain(op, reduction, 15), report.func, layouts, targets=(target,))


def _overcompute_the_sum(f: pp.ir.nodes.PrimFunc, n: int, a: np.ndarray) -> tuple:
    """D after the guarded and after the overcomputed reduction of ``f``, run on ``a``."""
    (guard,) = [x for x in ifs(f) if "D[0]" in pp.script(x.then_case)]
    overcomputed = replace(f, guard, guard.then_case)
    d = np.zeros(1, "float32")
    return run(f, [a, d])[1], run(overcomputed, [a, d])[1]


@pytest.mark.parametrize("n", [7, 11, 15, 19])
def test_sum_after_addone_refusal_names_the_padding_value(n):
    # One padding element, read by the one overcomputed instance.  D[0] is a running sum
    # the prover does not track, but D + 1.0 != D whatever D holds: the refusal is a
    # counterexample naming the padding element read and the 1.0 it holds.
    _, report = grown("A[i] + 1.0", "sum", n)
    decided = report.entries[1].decision
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    pad = (n // 4, 3)
    assert cex.instances == (Instance("reduce_2", {"io": pad[0], "ii": 3}), Instance("END"))
    assert cex.element == Element("D", (0,))
    assert cex.values[f"B[{pad[0]}, 3]"] == 1.0 and cex.values["D[0]"] == "any"
    # Executed on inputs that hold the counterexample's values (A's padding is 0, as
    # assumed): the overcomputed sum is off by the 1.0 in B's padding.
    a = np.random.default_rng(n).uniform(-1, 1, (n // 4 + 1, 4)).astype("float32")
    a.reshape(-1)[n:] = 0.0
    want, got = _overcompute_the_sum(report.func, n, a)
    np.testing.assert_allclose(want, [a.reshape(-1)[:n].sum() + n], rtol=1e-5)
    np.testing.assert_allclose(got - want, [1.0], rtol=1e-5)


@pytest.mark.parametrize("n", [13, 14])
def test_sum_over_several_padding_elements_is_refuted_by_a_run(n):
    # Two or three overcomputed instances each add 1.0: no one of them alone decides what
    # D[0] ends with (the first one's sum is overwritten by the next), and the rules do
    # not sum them; running both programs on small inputs shows the sum off by 16 - n.
    _, report = grown("A[i] + 1.0", "sum", n)
    kept = report.entries[1]
    assert not kept.removed and isinstance(kept.decision, Refuted)
    cex = kept.decision.counterexample
    assert cex.element == Element("D", (0,))
    assert cex.values["D[0] after"] - cex.values["D[0] before"] == 16.0 - n
    a = np.random.default_rng(n).uniform(-1, 1, (4, 4)).astype("float32")
    a.reshape(-1)[n:] = 0.0
    want, got = _overcompute_the_sum(report.func, n, a)
    np.testing.assert_allclose(got - want, [16.0 - n], rtol=1e-5)


def test_product_after_exp_loses_its_guard():
    _, report = grown("T.exp(A[i])", "product", 15)
    assert report.entries[1].removed


@pytest.mark.parametrize("op", ["A[i] + 1.0", "T.exp(A[i])", "A[i] * 2.0"])
def test_growing_again_restores_the_pad_value(op):
    # B transformed with pad value 0: the pad stage overwrites op(0) before the sum.
    _, report = grown(op, "sum", 14, b_pad=0.0)
    assert [e.removed for e in report.entries] == [True, False, True]
    assert "rule 1" in report.entries[0].decision.detail
    assert "rule 3" in report.entries[2].decision.detail


def test_undef_padding_is_never_assumed_zero():
    # B transformed with pad value T.undef(): its padding may hold anything.
    _, report = grown("A[i] * 2.0", "sum", 15, b_pad=UNDEF)
    kept = report.entries[2]
    assert not kept.removed and isinstance(kept.decision, Refuted)
    cex = kept.decision.counterexample
    assert cex.instances == (Instance("reduce_2", {"io": 3, "ii": 3}), Instance("END"))
    assert cex.element == Element("D", (0,))
    assert cex.values["B[3, 3]"] != 0.0


# ---------------------------------------------------------------- exp: select, not removal

IN_LOOP = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == 0.0)
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = {value}
        else:
            B[io, ii] = 0.0
'''


def in_loop(value: str):
    f = pp.parse(IN_LOOP.format(value=value))
    return f, ifs(f)[0]


def test_scaling_padding_written_in_the_loop_loses_its_branch():
    f, branch = in_loop("A[io, ii] * 2.0")
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Removable) and decided.keep == "then"


@pytest.mark.parametrize("value", ["A[io, ii] + 1.0", "T.exp(A[io, ii])"])
def test_padding_written_in_the_loop_keeps_its_branch(value):
    f, branch = in_loop(value)
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.instances[0].indices == {"io": 3, "ii": 2}
    assert cex.values["A[3, 2]"] == 0.0


def test_addone_counterexample_names_one():
    f, branch = in_loop("A[io, ii] + 1.0")
    cex = analyses.can_remove_conditional(f, branch).counterexample
    assert cex.values["stored A[io, ii] + 1.0"] == 1.0


def test_exp_counterexample_names_exp_0_is_1():
    f, branch = in_loop("T.exp(A[io, ii])")
    cex = analyses.can_remove_conditional(f, branch).counterexample
    assert cex.values["stored T.exp(A[io, ii])"] == 1.0


def test_exp_minus_one_is_not_refuted():
    f, branch = in_loop("T.exp(A[io, ii]) - 1.0")
    assert not isinstance(analyses.can_remove_conditional(f, branch), Refuted)


def test_exp_padding_needs_a_select():
    # What the refusal leaves to the schedule: one store, the padding chosen by T.if_then_else.
    f, _ = in_loop("T.exp(A[io, ii])")
    select = pp.parse(IN_LOOP.format(value="0.0").replace(
        "if 4 * io + ii < 14:\n            B[io, ii] = 0.0\n        else:\n"
        "            B[io, ii] = 0.0",
        "B[io, ii] = T.if_then_else(4 * io + ii < 14, T.exp(A[io, ii]), 0.0)"))
    assert not ifs(select)
    assert_runs_like(select, f)
    args = [np.zeros((4, 4), "float32"), np.full((4, 4), 9.0, "float32")]
    (_, out) = run(select, args)
    np.testing.assert_array_equal(out.reshape(-1)[14:], 0.0)  # not exp(0) = 1
    np.testing.assert_array_equal(out.reshape(-1)[:14], 1.0)
