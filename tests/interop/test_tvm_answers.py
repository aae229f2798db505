"""Issue 22, section 6: answers on TVM's kernels, not only its syntax.

Every ``if`` of every function TVM 0.27 prints in the corpus
(``tests/tvm_corpus.py``: TE operators, scheduled, lowered, packed) is asked
``analyses.can_remove_conditional`` within a small budget.  None may raise,
at most a fifth may stay ``Unknown``, and those that do are listed here
with their reason.  Every ``Refuted`` is seen by running: the function with
the conditional's body run everywhere computes something else, or reads
another value where the function reads one (the reference executor, on
random inputs), or leaves a buffer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyses"))

from overcompute_brute import (  # noqa: E402
    inputs,
    reads_differ,
    results_differ,
    same_results,
)

import analyses  # noqa: E402
import polypad as pp  # noqa: E402
from analyses.canonical import canonical_form  # noqa: E402
from polypad.errors import OutOfBoundsError  # noqa: E402
from polypad.ir import nodes as n  # noqa: E402
from polypad.ir.opaque import OpaqueSite  # noqa: E402
from polypad.ir.visitor import walk  # noqa: E402

#: Seconds per question: the slowest answers take about a second (a 6-deep conv).
BUDGET = 5.0

#: What stays Unknown, and why (a fragment of the reason), by function.
UNKNOWN = {
    # Flattened with a symbolic row length, the index i * m + j is not quasi-affine,
    # so whether the tail overcompute stays inside A is not decided.
    "scale_symbolic_vectorize_lowered": ["may leave a buffer"],
    # The stride checks of MakePackedAPI: `if not T.isnullptr(strides): assert ...`.
    "relu_sigmoid_packed": ["T.isnullptr at line"] * 2,
    "matmul_packed": ["T.isnullptr at line"] * 3,
}


@pytest.fixture(scope="module")
def answers():
    from tvm_corpus import corpus

    out = []
    for name, family, text in (entry[:3] for entry in corpus()):
        made = pp.parse(text)
        for g in (made,) if isinstance(made, n.PrimFunc) else made.funcs:
            for stmt in (x for x in walk(g.body) if isinstance(x, n.IfThenElse)):
                decided = analyses.can_remove_conditional(g, stmt, budget=BUDGET)
                out.append((name, family, g, stmt, decided))
    return out


def test_every_conditional_is_answered_and_at_most_a_fifth_stay_unknown(answers):
    assert len(answers) == 59
    unknown = [(name, d.reason) for name, _, _, _, d in answers
               if isinstance(d, analyses.Unknown)]
    print("\nUnknown:\n" + "\n".join(f"  {name}: {reason}" for name, reason in unknown))
    assert len(unknown) <= 0.2 * len(answers)
    by_name: dict[str, list[str]] = {}
    for name, reason in unknown:
        by_name.setdefault(name, []).append(reason)
    assert sorted(by_name) == sorted(UNKNOWN)
    for name, reasons in by_name.items():
        assert len(reasons) == len(UNKNOWN[name]), (name, reasons)
        for reason, fragment in zip(reasons, UNKNOWN[name]):
            assert fragment in reason, (name, reason)
    # No answer ran out of time: each is what the question gets, not the budget.
    assert not any(isinstance(d, analyses.Unknown) and d.timed_out
                   for *_, d in answers)


def test_every_refutation_is_seen_by_running(answers):
    refuted = [(name, g, stmt, d) for name, family, g, stmt, d in answers
               if isinstance(d, analyses.Refuted)]
    assert len(refuted) >= 53
    for name, g, stmt, decided in refuted:
        if "where the function leaves" in decided.counterexample.description:
            continue  # found by running the two already (analyses/execution_refutation.py)
        form = canonical_form(g)
        if form is not None:  # views, vectors, a packed function's computation
            g, stmt = form.func, form.stmt(stmt)
        if "leaves a buffer" in decided.counterexample.description:
            with pytest.raises(OutOfBoundsError):
                results_differ(g, stmt, seeds=range(1))
            continue
        assert results_differ(g, stmt, seeds=range(1)) or reads_differ(g, stmt), name


def test_the_canonical_form_of_each_lowered_function_computes_what_it_computes():
    from tvm_corpus import corpus

    checked = 0
    for name, family, text in (entry[:3] for entry in corpus()):
        if family != "lowered":
            continue
        made = pp.parse(text)
        for g in (made,) if isinstance(made, n.PrimFunc) else made.funcs:
            form = canonical_form(g)
            assert form is not None and not isinstance(form, OpaqueSite), name
            # Inputs drawn for the canonical form, whose assumptions name the memory's
            # owner, so that padding an assumption pins is set (it holds for both).
            assert same_results(g, form.func, seeds=range(2),
                                args_of=lambda seed, h=form.func: inputs(h, seed)), name
            checked += 1
    assert checked == 16
