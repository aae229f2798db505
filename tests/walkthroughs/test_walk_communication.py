"""RFC 0077, "Points of Communication": which of the RFC's rewrites of a two-stage
computation are valid, decided by polypad and checked against the RFC's verdicts.

Two kinds of rewrite appear.  Writing the pad value into the padding (the RFC adds
``else: B[io, ii] = 0``) is valid exactly when that store is a no-op in the rewritten
function -- :func:`analyses.is_no_op`: B is internal and unread there, or a later
``T.undef()`` store overwrites it -- and invalid when the caller reads B.  Removing the
consumer's guard is :func:`remove_branching_through_overcompute`: valid where B's padding
is known (written in the same function, or ``T.assume``d), invalid where it is merely
readable (``T.assume(... == T.undef())``) or not even that.
"""

from __future__ import annotations

import numpy as np
import pytest
from walk_support import assert_runs_like, assert_same_form, ifs, rfc

import analyses
from analyses import Element, Instance, Proved, Refuted
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
)


def added_pad_store(f):
    """The ``else: B[io, ii] = 0`` the RFC adds to the producer."""
    (branch,) = [s for s in ifs(f) if s.else_case is not None]
    return branch.else_case


# ---------------------------------------------------------------- the producer side


def test_writing_zero_into_an_internal_buffers_padding_is_valid():
    f = rfc("single_func_step1")
    decided = analyses.is_no_op(f, added_pad_store(f))
    assert isinstance(decided, Proved) and "rule 2" in decided.detail


def test_writing_zero_into_an_output_buffers_padding_is_not_valid():
    f = rfc("split_module_invalid", "transform_A")
    decided = analyses.is_no_op(f, added_pad_store(f))
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.instances == (Instance("S1", {"io": 3, "ii": 2}), Instance("END"))
    assert cex.element == Element("B", (3, 2))
    assert cex.values["stored 0"] == 0 and cex.values["B[3, 2]"] != 0


def test_writing_zero_before_an_undef_store_is_valid():
    f = rfc("split_module_undef_after", "transform_A")
    decided = analyses.is_no_op(f, added_pad_store(f))
    assert isinstance(decided, Proved) and "rule 1" in decided.detail


# ---------------------------------------------------------------- the consumer side


def test_single_function_consumer_guard_goes():
    # The pad value is written in the same function: the analysis reads it off "transform".
    report = explain_branching_through_overcompute(rfc("single_func_step1"), block="compute")
    assert [e.removed for e in report.entries] == [True]
    assert "rule 3" in report.entries[0].decision.detail
    assert_same_form(report.func, rfc("single_func_step2"))


def test_single_function_producer_guard_stays():
    # Running the copy everywhere would read A[14]: A has 14 elements.
    report = explain_branching_through_overcompute(rfc("single_func_step1"), block="transform")
    (entry,) = report.entries
    assert not entry.removed and isinstance(entry.decision, Refuted)
    assert entry.decision.counterexample.element == Element("A", (14,))


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_single_function_steps_agree(target):
    derived = remove_branching_through_overcompute(rfc("single_func_step1"), block="compute")
    for before in ("single_func_step0", "single_func_step1"):
        assert_runs_like(derived, rfc(before), targets=(target,))


def test_split_module_consumer_with_a_known_pad_value_loses_its_guard():
    report = explain_branching_through_overcompute(rfc("split_module_known_before", "compute_C"))
    assert [e.removed for e in report.entries] == [True]
    assert_same_form(report.func, rfc("split_module_known_after", "compute_C"))


@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_split_module_consumer_with_a_known_pad_value_agrees(target):
    before = rfc("split_module_known_before", "compute_C")
    assert_runs_like(remove_branching_through_overcompute(before), before, targets=(target,))


@pytest.mark.parametrize("stem", ["split_module_before", "split_module_undef_before"])
def test_split_module_consumer_keeps_its_guard(stem):
    # Without a pad value (or with only T.undef() for it) C[0] + B[3, 2] is not C[0].
    f = rfc(stem, "compute_C")
    report = explain_branching_through_overcompute(f)
    assert [e.removed for e in report.entries] == [False]
    assert report.func is f
    decided = report.entries[0].decision
    assert isinstance(decided, Refuted) and decided.counterexample.element.buffer == "C"


@pytest.mark.parametrize("stem", ["split_module_before", "split_module_undef_before"])
def test_split_module_consumer_refusal_has_a_counterexample(stem):
    # The two overcomputed additions (B[3, 2], B[3, 3]) change C[0] together: found by
    # a run on inputs that honour the assumptions (T.undef() in an assumption pins
    # nothing, so the undef variant is refuted the same way).
    f = rfc(stem, "compute_C")
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.element == analyses.Element("C", (0,))
    b = np.array(cex.values["input B"])
    assert cex.values["C[0] after"] - cex.values["C[0] before"] == b[3, 2] + b[3, 3]
