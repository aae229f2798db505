"""Overcompute that stays in bounds by wrapping indices (analyses/wrap_indices.py): RFC 0077's
"implicitly write default value" step 10 -> step 11, where ``if ii < 2`` goes by rewriting
B's row index as ``(io + (ii + fi) // 8) % 3``.

The overcomputed instances (io=2, ii >= 6) would store to B[3, .]; wrapped they store to
B[0, .] and add ``F[fi] * A[2, ii]``, which is 0 by the ``T.assume`` on A's padding: rule 3.
Where a wrap is refused, a run of the rewrite the pass refused to make shows the refusal right.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from inputs_support import make_inputs
from walk_support import EXAMPLES, assert_runs_like, assert_same_form, ifs, rfc, run

import polypad as pp
from analyses import (
    Element,
    Instance,
    Proved,
    Refuted,
    Unknown,
    can_remove_conditional,
    check_bounds,
)
from analyses.conditional import Removable
from analyses.wrap_indices import Wrapped, wrap_leaving_indices
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.ir.locate import replace
from polypad.ir.show import show
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
)

NUMBA = pytest.param("numba", marks=pytest.mark.numba)


def entry(report, condition: str):
    found = [e for e in report.entries if e.condition == condition]
    assert len(found) == 1, [e.condition for e in report.entries]
    return found[0]


def conditional(f, condition: str):
    found = [s for s in ifs(f) if show(s.condition) == condition]
    assert len(found) == 1, condition
    return found[0]


def forced(f, condition: str):
    """``f`` with ``if condition`` replaced by its wrapped then branch, proof or not: the
    rewrite a refusal stands in the way of."""
    stmt = conditional(f, condition)
    attempt = wrap_leaving_indices(f, stmt)
    assert isinstance(attempt, Wrapped), attempt
    return replace(f, stmt, attempt.then_case)


# ---------------------------------------------------------------- the RFC's step 11

STEP10_IF = "ii < 2"
WRAP = ("B's row index wrapped modulo 3: io + (ii + fi) // 8 -> "
        "(io + (ii + fi) // 8) % 3")


@functools.cache
def step_10_report():
    return explain_branching_through_overcompute(rfc("implicit_default_step10"), sweeps=1)


def test_step_11_is_one_sweep_from_step_10():
    report = step_10_report()
    assert_same_form(report.func, rfc("implicit_default_step11"))
    assert [(e.condition, e.removed) for e in report.entries] == [
        ("io == 0", False), ("ii >= 2", True), ("io == 2", False), ("ii < 2", True)]
    decision = entry(report, STEP10_IF).decision
    assert isinstance(decision, Removable) and decision.keep == "then"
    assert decision.detail.startswith(WRAP)
    assert "where not (ii < 2), the body is a no-op: rule 3" in decision.detail
    # The other guard needs no wrap: its detail says nothing of one.
    assert "wrapped" not in entry(report, "ii >= 2").decision.detail


def test_the_decision_on_its_own_carries_the_wrapped_branch():
    f = rfc("implicit_default_step10")
    stmt = conditional(f, STEP10_IF)
    decision = can_remove_conditional(f, stmt)
    assert isinstance(decision, Removable) and decision.replacement is not None
    text = pp.script(replace(f, stmt, decision.replacement))
    assert text.count("B[(io + (ii + fi) // 8) % 3, (ii + fi) % 8]") == 2  # store and load
    assert "A[io, ii]" in text  # A's index stays: it never leaves A


def test_sweeps_must_be_a_positive_int():
    f = rfc("implicit_default_step10")
    with pytest.raises(ArgumentValueError, match="sweeps must be at least 1, not 0"):
        remove_branching_through_overcompute(f, sweeps=0)
    with pytest.raises(ArgumentTypeError, match="explain_branching_through_overcompute: "
                                                "parameter sweeps"):
        explain_branching_through_overcompute(f, sweeps="1")
    # Two sweeps: step 11, then `io == 2` goes (`io == 0` needs a third).
    two = explain_branching_through_overcompute(f, sweeps=2)
    assert [(e.condition, e.removed) for e in two.entries] == [
        ("io == 0", False), ("ii >= 2", True), ("io == 2", True), ("ii < 2", True)]


def test_the_full_pass_goes_on_to_the_fast_loop():
    # Sweeping again removes `io == 2` and then `io == 0` (as from step 11).
    got = remove_branching_through_overcompute(rfc("implicit_default_step10"))
    assert_same_form(got, rfc("implicit_default_step12"))
    assert not ifs(got)


@pytest.mark.parametrize("target", ["python", NUMBA])
def test_step_11_and_12_run_like_step_10(target):
    step10 = rfc("implicit_default_step10")
    for got in (step_10_report().func, remove_branching_through_overcompute(step10)):
        assert_runs_like(got, step10, seeds=(0, 1, 2), targets=(target,))


def test_without_the_wrap_the_body_leaves_b():
    # What the wrap repairs: run unguarded as it stands, the body stores to B[3, 0].
    f = rfc("implicit_default_step10")
    stmt = conditional(f, STEP10_IF)
    decided = check_bounds(replace(f, stmt, stmt.then_case))
    assert isinstance(decided, Refuted)
    assert decided.counterexample.element == Element("B", (3, 0))


# ---------------------------------------------------------------- strict IEEE

def test_strict_ieee_keeps_the_guard_with_the_original_counterexample():
    f = rfc("implicit_default_step10")
    report = explain_branching_through_overcompute(f, strict_ieee=True)
    kept = entry(report, STEP10_IF)
    assert not kept.removed
    decision = kept.decision
    assert isinstance(decision, Refuted)
    cex = decision.counterexample
    assert "leaves a buffer" in cex.description
    assert cex.instances == (Instance("S3", {"io": 2, "ii": 6, "fi": 2}),)
    assert cex.element == Element("B", (3, 0))
    assert WRAP in cex.description and "still not removable" in cex.description
    # The wrapped candidate on its own is not proved either.
    stmt = conditional(f, STEP10_IF)
    attempt = wrap_leaving_indices(f, stmt)
    assert not isinstance(can_remove_conditional(attempt.func, attempt.conditional,
                                                 strict_ieee=True), Proved)


def test_strict_ieee_is_right_inf_times_padding_is_nan():
    # The rewrite strict IEEE refuses: with F[2] = inf, the wrapped B[0, 0] += inf * 0.0
    # is NaN, where step 10 leaves B[0, 0] alone.
    f = rfc("implicit_default_step10")
    args = make_inputs(f, np.random.default_rng(0))
    args[1][2] = np.inf
    want = run(f, args)[2]
    got = run(forced(f, STEP10_IF), args)[2]
    assert not np.isnan(want[0, 0]) and np.isnan(got[0, 0])


# ---------------------------------------------------------------- other sizes

STEP10 = '''
@T.prim_func
def func(A: T.Buffer((3, {L}), "float32"), F: T.Buffer(({K},), "float32"),
         B: T.Buffer((3, {L}), "float32")):
{assume}    for io, ii in T.grid(3, {L}):
        B[io, ii] = 0.0
    for io in T.serial(3):
        if io == 0:
            for ii in T.serial({L}):
                if ii >= 2:
                    for fi in T.serial({K}):
                        B[io + (ii + fi) // {L}, (ii + fi) % {L}] = (
                            B[io + (ii + fi) // {L}, (ii + fi) % {L}] + F[fi] * A[io, ii])
        elif io == 2:
            for ii in T.serial({L}):
                if ii < {h}:
                    for fi in T.serial({K}):
                        B[io + (ii + fi) // {L}, (ii + fi) % {L}] = (
                            B[io + (ii + fi) // {L}, (ii + fi) % {L}] + F[fi] * A[io, ii])
        else:
            for ii in T.serial({L}):
                for fi in T.serial({K}):
                    B[io + (ii + fi) // {L}, (ii + fi) % {L}] = (
                        B[io + (ii + fi) // {L}, (ii + fi) % {L}] + F[fi] * A[io, ii])
'''

STEP11 = '''
@T.prim_func
def func(A: T.Buffer((3, {L}), "float32"), F: T.Buffer(({K},), "float32"),
         B: T.Buffer((3, {L}), "float32")):
{assume}    for io, ii in T.grid(3, {L}):
        B[io, ii] = 0.0
    for io in T.serial(3):
        if io == 0:
            for ii, fi in T.grid({L}, {K}):
                B[io + (ii + fi) // {L}, (ii + fi) % {L}] = (
                    B[io + (ii + fi) // {L}, (ii + fi) % {L}] + F[fi] * A[io, ii])
        elif io == 2:
            for ii, fi in T.grid({L}, {K}):
                B[(io + (ii + fi) // {L}) % 3, (ii + fi) % {L}] = (
                    B[(io + (ii + fi) // {L}) % 3, (ii + fi) % {L}] + F[fi] * A[io, ii])
        else:
            for ii, fi in T.grid({L}, {K}):
                B[io + (ii + fi) // {L}, (ii + fi) % {L}] = (
                    B[io + (ii + fi) // {L}, (ii + fi) % {L}] + F[fi] * A[io, ii])
'''

ASSUME = '''    for io, ii in T.grid(3, {L}):
        T.assume((io == 0 and ii >= 2) or (io > 0 and io < 2) or (io == 2 and ii < {h})
                 or A[io, ii] == {pad})
'''


def text(template: str, L: int, K: int, h: int, pad: float | None) -> str:
    """``template`` for rows of ``L``, a filter of ``K``, ``h`` elements of A in its last
    row; A's padding assumed ``pad`` (``None``: no assumption)."""
    assert h + K - 1 <= L  # the guarded code stays inside B
    assume = ASSUME.format(L=L, h=h, pad=pad) if pad is not None else ""
    return template.format(L=L, K=K, h=h, assume=assume)


# (row length, filter length, A's elements in the last row); the first is the RFC's.
SIZES = [(8, 3, 2), (6, 3, 2), (10, 3, 2), (16, 3, 2), (8, 2, 2), (8, 4, 2), (10, 4, 5),
         (16, 4, 9), (6, 2, 5)]


@functools.cache
def sized(L: int, K: int, h: int, pad: float | None):
    f = pp.parse(text(STEP10, L, K, h, pad))
    return f, explain_branching_through_overcompute(f, sweeps=1)


@pytest.mark.parametrize(("L", "K", "h"), SIZES)
def test_zero_padding_is_wrapped_at_every_size(L, K, h):
    f, report = sized(L, K, h, 0.0)
    assert_same_form(report.func, pp.parse(text(STEP11, L, K, h, 0.0)))
    decision = entry(report, f"ii < {h}").decision
    assert decision.detail.startswith(
        f"B's row index wrapped modulo 3: io + (ii + fi) // {L} -> "
        f"(io + (ii + fi) // {L}) % 3")
    assert_runs_like(report.func, f, seeds=(0, 1))
    assert_runs_like(remove_branching_through_overcompute(f), f, seeds=(0,))


@pytest.mark.parametrize(("L", "K", "h"), [(8, 3, 2), (6, 2, 5), (16, 4, 9)])
def test_zero_padding_runs_alike_in_numba(L, K, h):
    f, report = sized(L, K, h, 0.0)
    assert_runs_like(report.func, f, seeds=(0,), targets=("numba",))


@pytest.mark.parametrize("pad", [1.0, None])
@pytest.mark.parametrize(("L", "K", "h"), [(8, 3, 2), (6, 3, 2), (10, 4, 2), (16, 2, 9)])
def test_padding_that_is_not_zero_is_refused(L, K, h, pad):
    # A's padding is 1.0, or anything: the wrapped writes add F[fi] * A[2, ii] to B[0, .].
    f, report = sized(L, K, h, pad)
    kept = entry(report, f"ii < {h}")
    assert not kept.removed
    decision = kept.decision
    assert isinstance(decision, (Refuted, Unknown))
    assert "still not removable" in str(decision)
    if isinstance(decision, Refuted):  # today's bounds counterexample, kept
        cex = decision.counterexample
        assert cex.element == Element("B", (3, 0))
        (instance,) = cex.instances
        assert instance.indices["io"] == 2 and instance.indices["ii"] >= h
        assert instance.indices["ii"] + instance.indices["fi"] == L
    # The wrapped candidate's own counterexample is on the row the writes wrap into.
    stmt = conditional(f, f"ii < {h}")
    attempt = wrap_leaving_indices(f, stmt)
    wrapped = can_remove_conditional(attempt.func, attempt.conditional)
    assert isinstance(wrapped, Refuted)
    element = wrapped.counterexample.element
    assert element.buffer == "B" and element.indices[0] in (0, 2)
    # And the refusal is right: the rewrite changes B on inputs that honour the assumes.
    changed = False
    for seed in range(3):
        args = make_inputs(f, np.random.default_rng(seed))
        want, got = run(f, args)[2], run(forced(f, f"ii < {h}"), args)[2]
        changed |= not np.allclose(got[0, :K - 1], want[0, :K - 1])
    assert changed


# ---------------------------------------------------------------- aliasing real data

ALIAS = '''
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), B: T.Buffer((3, 8), "float32")):
    for io, ii in T.grid(3, 8):
        B[io, ii] = T.if_then_else(8 * io + ii < {front}, 0.0, A[io, ii] + 1.0)
    for ii in T.serial(8):
        if ii < 6:
            B[2 + (ii + 2) // 8, (ii + 2) % 8] = 0.0
'''


def test_wrapped_writes_onto_zero_padding_go():
    # B[0, 0..1] hold 0.0 (front padding): the wrapped stores of 0.0 there are rule 3.
    f = pp.parse(ALIAS.format(front=2))
    report = explain_branching_through_overcompute(f)
    decision = entry(report, "ii < 6").decision
    assert isinstance(decision, Removable)
    assert decision.detail.startswith(
        "B's row index wrapped modulo 3: 2 + (ii + 2) // 8 -> (2 + (ii + 2) // 8) % 3")
    assert "B[(2 + (ii + 2) // 8) % 3, (ii + 2) % 8] = 0.0" in pp.script(report.func)
    assert_runs_like(report.func, f, seeds=(0, 1, 2), targets=("python", "numba"))


def test_wrapped_writes_onto_computed_results_are_refused():
    # B[0, 1] holds A[0, 1] + 1.0: the wrapped store of 0.0 at ii = 7 would clobber it.
    f = pp.parse(ALIAS.format(front=1))
    report = explain_branching_through_overcompute(f)
    kept = entry(report, "ii < 6")
    assert not kept.removed and isinstance(kept.decision, Refuted)
    assert kept.decision.counterexample.element == Element("B", (3, 0))
    attempt = wrap_leaving_indices(f, conditional(f, "ii < 6"))
    wrapped = can_remove_conditional(attempt.func, attempt.conditional)
    assert isinstance(wrapped, Refuted)
    cex = wrapped.counterexample
    assert cex.element == Element("B", (0, 1))
    assert cex.instances[0].indices == {"ii": 7}
    args = make_inputs(f, np.random.default_rng(0))
    args[0][0, 1] = 2.0
    assert run(f, args)[1][0, 1] == 3.0
    assert run(forced(f, "ii < 6"), args)[1][0, 1] == 0.0


# ---------------------------------------------------------------- when there is no wrap

def test_no_wrap_when_it_would_change_the_guarded_branch():
    # At ii = 6 the guarded store itself goes to B[3, 0]: e % 3 would move a store that
    # runs, so nothing is wrapped (the function is out of bounds as it stands).
    f = pp.parse(ALIAS.format(front=2).replace("ii < 6", "ii < 7"))
    stmt = conditional(f, "ii < 7")
    attempt = wrap_leaving_indices(f, stmt)
    assert isinstance(attempt, Unknown) and "could change the branch" in attempt.reason
    decision = can_remove_conditional(f, stmt)
    assert not decision and "wrapped" not in str(decision)


def test_reads_past_a_buffer_the_body_only_reads_are_not_wrapped():
    f = pp.parse('''
@T.prim_func
def func(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
    for io, ii in T.grid(2, 4):
        if 4 * io + ii < 7:
            B[io, ii] = A[io + (ii + 1) // 4, (ii + 1) % 4]
''')
    stmt = ifs(f)[0]
    attempt = wrap_leaving_indices(f, stmt)
    assert isinstance(attempt, Unknown) and "nothing to wrap" in attempt.reason
    decision = can_remove_conditional(f, stmt)
    assert isinstance(decision, Refuted)
    assert decision.counterexample.element == Element("A", (2, 0))


def test_symbolic_extents_are_not_wrapped():
    f = pp.parse('''
@T.prim_func
def func(n: T.int32, B: T.Buffer((n, 4), "float32")):
    T.assume(n >= 1)
    for io, ii in T.grid(n, 4):
        if 4 * io + ii < 4 * n - 1:
            B[io + (ii + 1) // 4, (ii + 1) % 4] = 0.0
''')
    attempt = wrap_leaving_indices(f, ifs(f)[0])
    assert isinstance(attempt, Unknown) and "nothing to wrap" in attempt.reason


def test_a_nested_conditional_keeps_its_report_entry():
    # Wrapping rebuilds the nested `if fi < 2`: the report still has one entry per
    # conditional of the input, and the nested guard (fi = 2 adds F[2] * A[2, ii]) stays.
    f = pp.parse('''
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((3, 8), "float32")):
    for ii in T.serial(8):
        T.assume(ii < 6 or A[2, ii] == 0.0)
    for ii in T.serial(8):
        if ii < 6:
            for fi in T.serial(3):
                if fi < 2:
                    B[2 + (ii + fi) // 8, (ii + fi) % 8] = (
                        B[2 + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[2, ii])
''')
    report = explain_branching_through_overcompute(f)
    assert [(e.condition, e.removed) for e in report.entries] == [
        ("ii < 6", True), ("fi < 2", False)]
    assert "wrapped modulo 3" in report.entries[0].decision.detail
    assert "B[(2 + (ii + fi) // 8) % 3, (ii + fi) % 8]" in pp.script(report.func)
    assert_runs_like(report.func, f, seeds=(0, 1))


# ---------------------------------------------------------------- every RFC example

def _wrapped_removals():
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, pp.ir.nodes.IRModule) else [parsed]:
            for k, stmt in enumerate(ifs(f)):
                try:
                    decision = can_remove_conditional(f, stmt)
                except pp.PolypadError:
                    continue
                if isinstance(decision, Removable) and decision.replacement is not None:
                    out.append((f"{path.stem}.{f.name}#{k}", f, stmt, decision))
    return out


@functools.cache
def wrapped_removals():
    return {name: (f, stmt, decision) for name, f, stmt, decision in _wrapped_removals()}


def test_the_examples_wrapped_are_the_offset_conv_steps():
    names = sorted(wrapped_removals())
    assert names and all(name.startswith("implicit_default_step") for name in names), names
    assert "implicit_default_step10.func#3" in names


def test_every_wrapped_removal_in_the_examples_runs_like_the_guarded_form():
    for name, (f, stmt, decision) in wrapped_removals().items():
        assert "wrapped modulo" in decision.detail, name
        assert_runs_like(replace(f, stmt, decision.replacement), f, seeds=(0, 1, 2))


def test_a_wrap_that_fails_seeks_no_counterexample_of_its_own(monkeypatch):
    # conv1d option 2 stores to B[-1, 3] unguarded; wrapped, its updates add real data
    # to B[3, .].  Only a proof would change the answer, so the wrapped question runs
    # nothing and searches no counterexample: the refusal is the bounds one.
    import analyses.conditional as decisions
    from analyses import refutation

    calls = []
    monkeypatch.setattr(decisions, "refute_by_execution",
                        lambda *args: calls.append("run"))
    original = refutation.CounterexampleSearch.refutation
    monkeypatch.setattr(refutation.CounterexampleSearch, "refutation",
                        lambda self, model: calls.append("search") or original(self, model))
    f = rfc("conv1d_option2")
    decided = can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert "leaves a buffer" in cex.description and "still not removable" in cex.description
    assert cex.element == Element("B", (-1, 3))
    assert calls == []
