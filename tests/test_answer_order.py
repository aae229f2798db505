"""An answer must not depend on what was asked before: every conditional of every RFC 0077
example, in both float modes, answers the same -- status and evidence text -- asked in a
fresh process, all in one process in file order, and in reverse order (strict before
reals for each conditional, on the same function objects, so that every cache warmed by
one mode is met by the other).

Z3's global context once carried the terms of earlier questions into later ones: after
``remove_branching_through_overcompute`` a strict question about the function below
answered Unknown, where a fresh process refuted it with ``F[0] = inf``.
"""

from __future__ import annotations

import pytest
import rfc_questions as rq

import analyses
import polypad as pp
from analyses import Refuted

SCALED = """
@T.prim_func
def f(A: T.Buffer((3, 8), "float32"), F: T.Buffer((1,), "float32"),
      B: T.Buffer((3, 8), "float32")):
    for io, ii in T.grid(3, 8):
        T.assume(8 * io + ii < 21 or A[io, ii] == T.float32(0))
    for io, ii in T.grid(3, 8):
        T.assume(8 * io + ii < 21 or B[io, ii] == T.float32(0))
    for io, ii in T.grid(3, 8):
        if 8 * io + ii < 21:
            B[io, ii] = A[io, ii] * F[0]
"""


def test_a_strict_question_after_a_pass_in_reals_still_finds_the_infinity():
    f1, f2 = pp.parse(SCALED), pp.parse(SCALED)
    pp.transform.remove_branching_through_overcompute(f1)
    decided = analyses.can_remove_conditional(f2, rq.conditionals(f2)[0], strict_ieee=True)
    assert isinstance(decided, Refuted), decided
    values = decided.counterexample.values
    assert values["F[0]"] == float("inf") and str(values["stored A[io, ii] * F[0]"]) == "nan"


def test_the_rfc_implicit_default_step2_strict_answer_is_the_fresh_one():
    want = rq.fresh([("implicit_default_step2", "func", 0, True)])
    got = rq.in_order()[("implicit_default_step2", "func", 0, True)]
    assert want[("implicit_default_step2", "func", 0, True)] == got
    assert got[0] == "Refuted"


@pytest.fixture(scope="module")
def shared():
    """The questions (parsed once) and their answers in file order, in this process."""
    return rq.shared_questions(), rq.in_order()


def test_reverse_order_with_strict_first_answers_the_same(shared):
    qs, in_order = shared
    reverse = rq.ask_all(qs, reversed(range(len(qs))))
    assert rq.differences(reverse, in_order) == []


def test_each_question_in_a_fresh_process_answers_the_same(shared):
    qs, in_order = shared
    fresh = rq.fresh([key for key, _, _ in qs])
    assert rq.differences(fresh, in_order) == []
