"""Time budgets: every analysis and pass takes ``budget=``; running out is Unknown for a
decider, an error for an analysis that returns no decision, and "unchanged" for a pass."""


import islpy as isl
import numpy as np
import pytest

import analyses
import codegen
import polypad as pp
from analyses import Proved, Unknown
from polypad import budget
from polypad.errors import ArgumentValueError, BudgetExceeded, IllegalTransformError
from polypad.transform import (
    explain_branching_through_overcompute,
    hoist_expression,
    reduce_loop_extents,
    remove_no_op,
    simplify,
)

CHAIN = '''
@T.prim_func
def chain(A: T.Buffer((7,), "float32"), n: T.int32):
    for i in T.serial({n}):
        A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]
'''

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


def same_results(f, g, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(7).astype(np.float32)
    a1, a2 = a.copy(), a.copy()
    codegen.build(f, target="python")(a1, 20)
    codegen.build(g, target="python")(a2, 20)
    np.testing.assert_array_equal(a1, a2)


@pytest.mark.parametrize("extent", [8, 14, 28, "n"])
def test_chain_of_writes_ends_with_a_right_answer(extent):
    """The nest that once ran for over 400 s: it ends (within the default budget) and
    whatever the passes do keeps its results."""
    f = pp.parse(CHAIN.format(n=extent).replace("T.serial(n)", "T.serial(T.min(n, 28))"))
    for p in (simplify, remove_no_op):
        same_results(f, p(f))
    decided = analyses.is_no_op(f, f.body)
    assert not isinstance(decided, Proved)  # A[1] = 2 * A[0] - A[1] changes A[1]


def test_a_pass_out_of_budget_returns_its_input_unchanged():
    f = pp.parse(CHAIN.format(n=28))
    for p in (simplify, remove_no_op, hoist_expression, reduce_loop_extents):
        assert p(f, budget=1e-6) is f


def test_a_decider_out_of_budget_says_unknown_and_why():
    f = pp.parse(ROW_SUM)
    store = f.body.stmts[1].body.stmts[0]
    decided = analyses.is_no_op(f, store, budget=1e-6)
    assert isinstance(decided, Unknown) and "time budget of 1e-06 s ran out" in decided.reason
    ctx = analyses.context_at(f, store)
    i = f.body.stmts[1].var
    assert isinstance(analyses.prove(i < 4, ctx, budget=1e-6), Unknown)
    assert isinstance(analyses.prove(i < 4, ctx), Proved)


def test_an_analysis_without_a_decision_raises():
    f = pp.parse(CHAIN.format(n=28))
    with pytest.raises(BudgetExceeded, match="budget"):
        analyses.dependences(f, budget=1e-6)
    with pytest.raises(BudgetExceeded):
        analyses.domain_touched(f, "A", budget=1e-6)
    assert analyses.domain_touched(f, "A", "write").exact


def test_default_budget_is_global_and_validated():
    assert budget.default_budget() == budget.DEFAULT_BUDGET
    f = pp.parse(CHAIN.format(n=28))
    budget.set_default_budget(1e-6)
    try:
        assert simplify(f) is f
    finally:
        budget.set_default_budget(budget.DEFAULT_BUDGET)
    with pytest.raises(TypeError):
        budget.set_default_budget("10")
    with pytest.raises(ValueError):
        budget.set_default_budget(0)


def test_nested_calls_share_one_deadline():
    with budget.within(5.0) as outer:
        with budget.within() as inner:
            assert inner == outer  # budget=None shares the enclosing deadline
        with budget.within(100.0) as longer:
            assert longer == outer  # an explicit budget cannot outlive the enclosing one
        with budget.within(0.5) as shorter:
            assert shorter < outer
    assert budget.remaining() is None


def test_isl_operation_limit_is_set_and_restored():
    ctx = isl.DEFAULT_CONTEXT
    assert ctx.get_max_operations() == 0
    with budget.within(1.0):
        assert ctx.get_max_operations() == budget.ISL_OPERATIONS_PER_SECOND
    assert ctx.get_max_operations() == 0


def test_isl_running_out_of_operations_is_running_out_of_budget():
    heavy = isl.Set("{ [i, j, k] : 0 <= i, j, k < 1000 and exists (a, b : i = 7a + 3 "
                    "and j = 11b + 2 and k <= a + b) }")

    def count():
        for _ in range(50):
            heavy.coalesce().compute_divs().lexmax()
        return "finished"

    assert budget.run_within(1e-4, count, lambda err: str(err)).startswith(
        "the time budget of 0.0001 s ran out")


# The fuzz's case 7112 (seed 0): isl took minutes over the dependences of these
# ``%`` indices, and ``sequential_buffer_access`` ran past every budget.  With
# value_flow's last writes found level by level it settles in under a second.
MOD_HEAVY = '''
@T.prim_func
def func(A: T.Buffer((8,), "int32"), n: T.int32):
    for l in T.serial(6):
        for m in T.serial(3):
            A[(2 * m + 2 * l + 0) % 8] = A[(2 * m + l + -1) % 8]
            if l % 3 < 2:
                A[(2 * l + 4) % 8] = A[(-2 * m + -2) % 8] + 1
        A[(l + 4) % 8] = A[(-1 * l + 1) % 8] + 1
'''


def test_a_primitive_whose_legality_does_not_settle_refuses_within_its_budget():
    f = pp.parse(MOD_HEAVY)
    sch = pp.Schedule(f, budget=1e-3)
    # Raised only because the budget ran out (settling takes some 0.5 s of ISL).
    # (No bound on the seconds it took: the suite asserts nothing of the clock.)
    with pytest.raises(BudgetExceeded) as err:
        sch.sequential_buffer_access(None, "A")
    assert str(err.value).startswith(
        "Schedule.sequential_buffer_access left the schedule unchanged")
    assert err.value.seconds == 1e-3
    # All or nothing: nothing the nested distribute/reorder did is kept or recorded.
    assert sch.func is f and len(sch.trace) == 0


def test_the_same_primitive_settles_with_time_and_refuses_by_a_dependence():
    # S0(l=2, m=0) writes A[(0 + 4) % 8]; S0(l=3, m=1) reads A[(2 + 3 - 1) % 8] first
    # thing, and the writes between go to A[6], A[0], A[6], A[6] and A[2].
    f = pp.parse(MOD_HEAVY)
    sch = pp.Schedule(f, budget=120)
    with pytest.raises(IllegalTransformError) as err:
        sch.sequential_buffer_access(None, "A")
    assert str(err.value).startswith(
        "reorder_by_map would break a dependence: flow dependence: S0(l=3, m=1) reads "
        "A[4], which S0(l=2, m=0) writes before it")
    assert sch.func is f and len(sch.trace) == 0


def test_a_schedule_budget_is_validated():
    with pytest.raises(ArgumentValueError, match="budget must be a positive number"):
        pp.Schedule(pp.parse(MOD_HEAVY), budget=0)


TWO_GUARDS = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        if i < 14:
            B[i] = A[i] * 2.0
            if i < 7:
                B[i] = B[i] + 1.0
'''


def test_a_branching_report_out_of_budget_has_one_entry_per_conditional():
    # The shape of the report must not depend on the clock: in time or not, one entry per
    # conditional of the input, in walk order; out of time, each kept and Unknown.
    f = pp.parse(TWO_GUARDS)
    in_time = explain_branching_through_overcompute(f, budget=600.0)
    late = explain_branching_through_overcompute(f, budget=1e-6)
    assert late.func is f
    assert [(e.condition, e.line) for e in late.entries] == \
        [(e.condition, e.line) for e in in_time.entries] == [("i < 14", 5), ("i < 7", 7)]
    for entry in late.entries:
        assert not entry.removed and isinstance(entry.decision, Unknown)
        assert "time budget of 1e-06 s ran out" in entry.decision.reason
        assert entry.decision.timed_out


# The fuzz's case 1787 of seed 6007: the last-write search of these ``%`` indices left
# domains whose subset test and subtraction took isl 18 s and 6 s, past any isl
# operation limit, so ``reorder`` ran for 30 s against a 10 s budget.
LAST_WRITE_HEAVY = '''
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((4, 4), "int32"), n: T.int32):
    T.assume(1 <= n and n < 4)
    for l in T.serial(6):
        for m in T.serial(3):
            A[(3 * m + 2 * l + 5) % 8] = T.int32(l) - (1 + A[(2 * l + -2 * m + -1) % 8])
            if l % 3 < 2:
                A[(3 * l + -2 * m + 2) % 8] = A[((m + 1) % 6) // 2]
        A[(-2 * l + 2) % 8] = 0
        A[(-2 * l + 1) % 8] = A[1]
'''


def test_a_reorder_over_heavy_last_writes_settles_within_its_budget():
    # About 4 s of CPU now; 20 s leaves room for a busy machine, and the 30 s of CPU
    # the search took before cannot fit in it, budget or not.
    f = pp.parse(LAST_WRITE_HEAVY)
    sch = pp.Schedule(f, budget=20)
    with pytest.raises(IllegalTransformError) as err:
        sch.reorder("m", "l")
    assert str(err.value).startswith(
        "reorder would break a dependence: flow dependence: S2(l=4, m=1) reads A[1], "
        "which S1(l=3, m=2) writes before it")
    assert sch.func is f and len(sch.trace) == 0


def test_a_reorder_over_heavy_last_writes_refuses_within_a_small_budget():
    f = pp.parse(LAST_WRITE_HEAVY)
    sch = pp.Schedule(f, budget=0.5)
    with pytest.raises(BudgetExceeded) as err:  # never applied unsettled
        sch.reorder("m", "l")
    assert err.value.seconds == 0.5
    assert sch.func is f and len(sch.trace) == 0
