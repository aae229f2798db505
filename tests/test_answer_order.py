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
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

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


def unhurried(decider, *args, **kwargs):
    """``decider(*args, **kwargs)`` with the time these tests need: they compare answers,
    and must not race the clock of a busy machine (see :func:`rfc_questions.ask`)."""
    return rq.settled(lambda: decider(*args, budget=rq.UNHURRIED, **kwargs))


def test_a_strict_question_after_a_pass_in_reals_still_finds_the_infinity():
    f1, f2 = pp.parse(SCALED), pp.parse(SCALED)
    rq.settled(lambda: pp.transform.remove_branching_through_overcompute(
        f1, budget=rq.UNHURRIED))
    decided = unhurried(analyses.can_remove_conditional, f2, rq.conditionals(f2)[0],
                        strict_ieee=True)
    assert isinstance(decided, Refuted), decided
    values = decided.counterexample.values
    assert values["F[0]"] == float("inf") and str(values["stored A[io, ii] * F[0]"]) == "nan"


@pytest.fixture(scope="module")
def shared():
    """The questions (parsed once) and their answers in file order, in this process."""
    return rq.shared_questions(), rq.in_order()


@pytest.fixture(scope="module")
def fresh(shared):
    """Every question's answer in a process of its own (:func:`rfc_questions.fresh`
    forks one child per question from a process that asked nothing: one question
    alone is asked exactly as fresh as among all of them, and one start of that
    process serves both tests that read it)."""
    qs, _ = shared
    return rq.fresh([key for key, _, _ in qs])


def test_the_rfc_implicit_default_step2_strict_answer_is_the_fresh_one(fresh):
    want = fresh[("implicit_default_step2", "func", 0, True)]
    got = rq.in_order()[("implicit_default_step2", "func", 0, True)]
    assert want == got
    assert got[0] == "Refuted"


def test_reverse_order_with_strict_first_answers_the_same(shared):
    qs, in_order = shared
    reverse = rq.ask_all(qs, reversed(range(len(qs))))
    assert rq.differences(reverse, in_order) == []


def test_each_question_in_a_fresh_process_answers_the_same(shared, fresh):
    _, in_order = shared
    assert rq.differences(fresh, in_order) == []


FUZZ_665 = """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for l in T.serial(4):
        for m in T.serial(3):
            A[(l + 2) % 8] = T.float32(l) - (1.0 + A[7])
            if l % 3 < 2:
                A[(2 * l - m) % 4 // 2] = T.float32(l) - (1.0 + A[(4 - 2 * l) % 8])
            else:
                A[2] = A[4] + 1.0
        A[(3 * l - 2) % 8 // 2] = A[2]
"""


def _if_of(f):
    (found,) = [s for s in walk(f.body) if isinstance(s, n.IfThenElse)]
    return found


def test_a_no_op_question_first_leaves_the_counterexample_alone():
    # The fuzz (seed 0, case 665): is_no_op on the loop detected `l = 2` in the memoized
    # domain of the else branch (`l % 3 >= 2`), in place, as ISL does; the order
    # computed from it afterwards had another form, and can_remove_conditional chose
    # m = 0 asked first, m = 2 asked after.
    fresh = pp.parse(FUZZ_665)
    want = unhurried(analyses.can_remove_conditional, fresh, _if_of(fresh))
    f = pp.parse(FUZZ_665)
    (loop,) = [s for s in walk(f.body) if isinstance(s, n.For) and s.var.name == "l"]
    # The loop's last stores reach the caller: never a no-op (Unknown here, for rule 3).
    assert not isinstance(unhurried(analyses.is_no_op, f, loop), analyses.Proved)
    got = unhurried(analyses.can_remove_conditional, f, _if_of(f))
    assert str(got) == str(want)
    assert isinstance(got, Refuted)
    (at,) = got.counterexample.instances
    # Keeping the then branch at l = 2 stores A[(4 - m) % 4 // 2], not A[2]: any m shows it.
    assert at.indices["l"] == 2 and at.indices["m"] in (0, 1, 2)


FUZZ_1267 = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((8,), "float32"), n: T.int32):
    for i0 in T.serial(6):
        if i0 < n:
            C[i0 + 2] = A[i0 + 2] + B[0] + 3.0
    for i2 in T.serial(2):
        if i2 % 2 == 0:
            C[1 - i2] = B[i2 + 3] + 1.0
        if i2 < n:
            C[i2 + 2] = 1.0
"""


def test_a_no_op_counterexample_names_the_same_parameters_in_any_order():
    # The fuzz (seed 0, case 1267): asked first, is_no_op reads the flows of the elements
    # the statement writes (no `n` in them); after a question about the loop it reads
    # the whole function's, where `n` is a parameter, and the answer said "params: n=0".
    def question(f):
        (loop,) = [s for s in walk(f.body) if isinstance(s, n.For) and s.var.name == "i2"]
        return loop, loop.body.stmts[0]

    fresh = pp.parse(FUZZ_1267)
    want = unhurried(analyses.is_no_op, fresh, question(fresh)[1])
    f = pp.parse(FUZZ_1267)
    loop, stmt = question(f)
    # It writes C[1..3]:
    assert not isinstance(unhurried(analyses.is_no_op, f, loop), analyses.Proved)
    got = unhurried(analyses.is_no_op, f, stmt)
    assert str(got) == str(want)
    assert isinstance(got, Refuted)
    cex = got.counterexample
    assert [i.statement for i in cex.instances] == ["S1", "END"]
    assert cex.element.buffer == "C" and cex.element.indices == (1,) and cex.params == {}
