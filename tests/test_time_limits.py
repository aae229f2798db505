"""Answers a time limit shaped: marked, never remembered, and isl's operation limit shared
fairly between threads."""

from __future__ import annotations

import threading
import time

import islpy as isl
import numpy as np

import analyses
import codegen
import polypad as pp
from analyses import Refuted, Unknown
from analyses.budgeted import decider
from analyses.program import program_of
from polypad import budget
from polypad.ir import nodes as n

ROW_SUM = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(A[i, 3] == 0.0)
    for i in T.serial(4):
        B[i] = 0.0
        for j in T.serial(4):
            B[i] = B[i] + A[i, j]
'''


def test_an_answer_that_ran_out_of_budget_says_so():
    f = pp.parse(ROW_SUM)
    decided = analyses.is_no_op(f, f.body.stmts[1], budget=1e-6)
    assert isinstance(decided, Unknown) and decided.timed_out
    assert "budget" in decided.reason


X, Y, Z = n.Var("x", "float32"), n.Var("y", "float32"), n.Var("z", "float32")
# Not in IEEE (NaN, rounding). Z3 needs about half a second to see it, in a warm process
# too: x * y == y * x, used before, it could refute within a 1 ms limit in a process
# that had asked many float questions (seen once in CI).
DISTRIBUTES = (X * (Y + Z)).equal(X * Y + X * Z)


def test_a_z3_timeout_marks_the_answer():
    decided = analyses.prove(DISTRIBUTES, strict_ieee=True, timeout_ms=1)
    assert isinstance(decided, Unknown) and decided.timed_out
    assert isinstance(analyses.prove(DISTRIBUTES, strict_ieee=True, timeout_ms=60_000),
                      Refuted)


@decider
def _composed(timeout_ms: int) -> Unknown:
    inner = analyses.prove(DISTRIBUTES, strict_ieee=True, timeout_ms=timeout_ms)
    return Unknown(f"the outer question needed: {inner}")


def test_an_unknown_built_from_a_timed_out_one_is_marked_too():
    assert _composed(1).timed_out
    assert not _composed(60_000).timed_out  # Refuted inside: no time limit reached


def test_nothing_made_after_the_deadline_is_remembered():
    program = program_of(pp.parse(ROW_SUM))
    with budget.within(0.001):
        time.sleep(0.01)
        assert program.memo("probe", lambda: "late") == "late"
    assert program.memo("probe", lambda: "in time") == "in time"
    assert program.memo("probe", lambda: "again") == "in time"

    def timed_out_inside():
        budget.note_time_limit()  # as a Z3 timeout inside a proof does
        return "x"

    assert program.memo("probe2", timed_out_inside) == "x"
    assert program.memo("probe2", lambda: "y") == "y"


def test_isl_operation_grants_add_up_while_calls_overlap_and_restore_after():
    ctx = isl.DEFAULT_CONTEXT
    before = ctx.get_max_operations()
    grants = budget._isl_allowances
    first = grants.grant(1.0)
    assert ctx.get_max_operations() == budget.ISL_OPERATIONS_PER_SECOND
    done = []

    def second_call():
        token = grants.grant(2.0)
        done.append(ctx.get_max_operations())
        grants.release(token)
        done.append(ctx.get_max_operations())

    thread = threading.Thread(target=second_call)
    thread.start()
    thread.join()
    assert done == [3 * budget.ISL_OPERATIONS_PER_SECOND, budget.ISL_OPERATIONS_PER_SECOND]
    grants.release(first)
    assert ctx.get_max_operations() == before


def test_a_kept_constant_proved_over_the_reals_does_not_serve_strict_questions():
    # B[i] stays 0 through B[i] + cast(A[i] * 0.0) over the reals, not in IEEE: with
    # A[i] = inf the product is NaN.  Such facts are cached for both modes, so they are
    # made only of stores computed without floats.
    f = pp.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        B[i] = 0
    for i in T.serial(4):
        B[i] = B[i] + T.Cast("int32", A[i] * T.float32(0))
    for i in T.serial(4):
        C[i] = B[i]
""")
    store = f.body.stmts[2].body
    ctx = analyses.context_at(f, store)
    analyses.prove(store.value.equal(0), ctx)  # the reals first, as a pass would ask
    assert not isinstance(analyses.prove(store.value.equal(0), ctx, strict_ieee=True),
                          analyses.Proved)
    a = np.array([np.inf, 1, 2, 3], np.float32)
    b, c = np.zeros(4, np.int32), np.zeros(4, np.int32)
    with np.errstate(invalid="ignore"):
        codegen.build(f, target="python")(a, b, c)
    assert c[0] != 0
