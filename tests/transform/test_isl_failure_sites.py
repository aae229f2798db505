"""ISL's errors met inside a computation reach the caller as polypad's answer.

Two kinds of ISL error, each real where it can be:

- ISL stopping at its operation limit: real.  The budget grants ISL
  ``ISL_OPERATIONS_PER_SECOND`` operations a second (polypad's own constant); a
  test lowers that constant, and ISL itself stops.  Where code caught the error
  and went on (``may_wrap`` answered "may wrap", ``prove`` asked Z3, the AST
  builder's error became a plain ``PolypadError``), the answer hid that the budget
  ran out; now it is the budget's (``BudgetExceeded``, or ``Unknown`` saying the
  budget ran out).
- ISL failing its own consistency check: no input makes today's ISL fail, so the
  reproducer of ``test_isl_failures.py`` is reused: ISL's ``Set.coalesce`` raising
  ``islpy.Error`` as ISL's did on the fuzzer's program (seed 20001, case 26).

And a failure in one thread does not leave its objects to another thread's answer
(:func:`polypad.isl_failure.answering_isl_failure`, :class:`polypad.concurrency.Recent`).
"""

from __future__ import annotations

import threading

import islpy as isl
import pytest
from test_isl_failures import INJECTED, SHIFTED

import analyses
from analyses import Proved, Unknown
from analyses.gpu_barrier_placement import BarrierPlan
from analyses.gpu_isl_memo import computing_afresh
from analyses.gpu_sync import plan_barriers
from polypad import budget
from polypad.concurrency import Recent, generation
from polypad.errors import BudgetExceeded, IslFailure, PolypadError
from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.isl_failure import ANOTHER_THREAD, answering_isl_failure
from polypad.layout import IndexMap
from polypad.model import extract, parameter_facts
from polypad.model.affine import AffineSpace
from polypad.model.exact_forms import may_wrap
from polypad.model.overflow import first_wrap
from polypad.schedule.checked_ast import RunsChecked, checked_loops
from polypad.schedule.location_box import _max_val
from polypad.schedule.reschedule_plan import parse_band
from polypad.script import parse
from polypad.transform._isl_context import IslFacts
from polypad.viz.points import as_union_set

GUARDED = """
@T.prim_func
def func(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in T.serial(8):
        for j in T.serial(8):
            if i * 8 + j < 64:
                B[i * 8 + j] = A[i * 8 + j] + 1
"""


# A kernel whose shared buffers need barriers (tests/cuda/test_gpu_random_programs.py).
BARRIERS = '''
@T.prim_func
def rand(A: T.Buffer((32,), "float32"), B: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((16,), "float32", scope="shared")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(2):
                S[k * 8 + tx] = A[bx * 16 + k * 8 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = S[T.floormod(tx + 10, 16)]
'''


@pytest.fixture
def few_isl_operations(monkeypatch):
    """ISL allowed ``ops`` operations per second of budget (its own limit stops it)."""
    def allow(ops: int) -> None:
        monkeypatch.setattr(budget, "ISL_OPERATIONS_PER_SECOND", ops)

    return allow


def _fail_coalesce(monkeypatch, method: str = "coalesce") -> list:
    """ISL's ``Set.coalesce`` (or ``method``) failing its check from now on, as in
    test_isl_failures.py; returns the list of the sets it failed on."""
    calls = []

    def fail(self, *args):
        calls.append(self)
        raise isl.Error(INJECTED)

    monkeypatch.setattr(isl.Set, method, fail)
    return calls


@pytest.fixture
def failing_coalesce(monkeypatch):
    return _fail_coalesce(monkeypatch)


def _guard_question():
    f = parse(GUARDED)
    guard = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse))
    return guard.condition, analyses.context_at(f, guard.then_case)


# ---------------------------------------------------------------- the operation limit


def test_prove_out_of_isl_operations_says_the_budget_ran_out(few_isl_operations):
    cond, ctx = _guard_question()
    assert isinstance(analyses.prove(cond, ctx), Proved)
    few_isl_operations(100)  # enough for nothing: ISL stops in the first question
    decided = analyses.prove(cond, ctx, budget=1)
    # Was "isl failed while gathering facts: ... maximal number of operations exceeded"
    # (ISL's limit caught, Z3 asked, ISL's limit caught again).
    assert isinstance(decided, Unknown)
    assert decided.reason == str(BudgetExceeded(1))
    assert decided.timed_out


def test_may_wrap_out_of_isl_operations_raises_instead_of_answering_true(
        few_isl_operations):
    i, m = n.Var("i", "int32"), n.Var("m", "int32")
    space = AffineSpace([i])
    where = isl.Set("[m] -> { [i] : 0 <= i < 8 and 0 <= m < 100 }")
    e = i + m
    assert may_wrap(e, space, where) is False
    few_isl_operations(10)
    with budget.within(1):  # the ISL operation limit of 10 operations
        # Was True: a form ISL could not judge counted as wrapping, and its refusal
        # claimed a wrap that no point has.
        with pytest.raises(isl.Error, match="maximal number of operations exceeded"):
            may_wrap(e, space, where)


def test_the_ast_builder_out_of_isl_operations_raises_the_budgets_error(
        few_isl_operations):
    schedule = isl.UnionMap("[n] -> { S[i] -> [i] : 0 <= i < n; T[j] -> [j] : 0 <= j < 2n }")
    builder = isl.AstBuild.from_context(isl.Set("[n] -> { : }"))
    context = isl.Set("{ : }")

    def build():
        return checked_loops(builder, schedule, 1,
                             lambda: RunsChecked({}, names=Names(), context=context), {},
                             "test")

    few_isl_operations(100)
    with budget.within(1):
        # Was PolypadError("test: ISL could not build the loops: ... maximal number of
        # operations exceeded"): a refusal, where the budget had run out.
        with pytest.raises(BudgetExceeded):
            build()


@pytest.mark.parametrize("question", ["transformed_shape", "padding_predicate",
                                      "is_injective", "inverse"])
def test_an_index_map_out_of_isl_operations_raises_the_budgets_error(
        few_isl_operations, question):
    imap = IndexMap(lambda i: [i // 4, i % 4])
    few_isl_operations(30)
    with budget.within(1):
        with pytest.raises(BudgetExceeded):  # was islpy's own error
            getattr(imap, question)((10,))


def _first_wrap_of_a_sum():
    i, m = n.Var("i", "int8"), n.Var("m", "int8")
    where = isl.Set("[m] -> { [i] : 0 <= i < 8 and 0 <= m < 127 }")
    return first_wrap(i + m, AffineSpace([i]), where)


def _exactness_of_a_sum():
    m = n.Var("m", "int32")
    facts = IslFacts()
    return facts.exact(m + 1, isl.Set("[m] -> { : 0 <= m < 100 }"))


def _fact_over_parameters():
    m = n.Var("m", "int32")
    space = AffineSpace([], names=Names())
    return parameter_facts._with(None, m < 100, [m], space)


# Each answered a weaker answer where ISL stopped: no wrap point, "not exact", no fact.
@pytest.mark.parametrize("question, answer, stopped", [
    (_first_wrap_of_a_sum, "i + m = 128 at i = 2, m = 126", None),
    (_exactness_of_a_sum, True, False),
    (_fact_over_parameters, "[m] -> {  : m <= 99 }", None),
])
def test_a_weaker_answer_is_no_longer_given_where_isl_stops(few_isl_operations, question,
                                                             answer, stopped):
    assert str(question()) == str(answer)
    few_isl_operations(10)
    with budget.within(1):
        with pytest.raises(isl.Error) as err:
            question()  # was the weaker answer `stopped`
        assert budget.is_exhausted(err.value), err.value


def test_isls_parser_stopped_by_the_limit_is_the_budget_running_out(few_isl_operations):
    # ISL's parser says "syntax error" where the operation limit stopped it.
    text = "[m] -> { [i] : 0 <= i < 8 and 0 <= m < 100 }"
    few_isl_operations(5)
    with budget.within(1):
        with pytest.raises(isl.Error, match="syntax error") as err:
            isl.Set(text)
        assert budget.is_exhausted(err.value)  # was False: an ISL failure
    with pytest.raises(isl.Error, match="syntax error") as err:
        isl.Set("[m] -> { [i] : 0 <= i < }")  # a real syntax error, no limit in force
    assert not budget.is_exhausted(err.value)


@pytest.mark.parametrize("read", [
    lambda text: parse_band(None, text, "reschedule"),
    lambda text: as_union_set(text, "show_set"),
])
def test_a_text_the_limit_stopped_is_not_read_as_the_users_syntax_error(
        few_isl_operations, read):
    text = "[m] -> { S[i] -> [i] : 0 <= i < 8 and 0 <= m < 100 }"
    few_isl_operations(5)
    with budget.within(1), pytest.raises(BudgetExceeded):
        read(text)  # was "cannot read ... syntax error"
    with pytest.raises(PolypadError, match="cannot read") as err:
        read("[m] -> { S[i] -> [i] : 0 <= i < }")  # the user's typo, no limit in force
    assert not isinstance(err.value, BudgetExceeded)

def test_an_expected_refusal_of_isl_still_goes_on_to_the_fallback():
    # ISL's own refusal (not a failure): max_val takes integer affine pieces only, and
    # the graph of n / 2 answers instead; the cache of models is left as it was.
    half = isl.PwAff("[n] -> { [i] -> [(n/2)] : n mod 2 = 0 and 0 <= n <= 10 }")
    with pytest.raises(isl.Error, match="expecting integer affine expression"):
        half.max_val()
    before = generation()
    assert _max_val(half).to_python() == 5
    assert generation() == before


# ---------------------------------------------------------------- ISL failing its check


def test_prove_where_isl_fails_answers_unknown_naming_the_failure(monkeypatch):
    cond, ctx = _guard_question()
    failing_coalesce = _fail_coalesce(monkeypatch, "complement")  # ISL's proof takes it
    decided = analyses.prove(cond, ctx)
    # Was Proved by Z3, asked after ISL failed, with facts read from the same model.
    assert failing_coalesce
    assert isinstance(decided, Unknown)
    assert decided.reason == f"prove could not decide: ISL failed ({INJECTED})"
    assert not decided.timed_out


@pytest.mark.parametrize("question", ["padding_predicate", "inverse"])
def test_an_index_map_where_isl_fails_raises_an_isl_failure(failing_coalesce, question,
                                                             monkeypatch):
    imap = IndexMap(lambda i: [i // 4, i % 4])
    with pytest.raises(IslFailure) as err:  # was islpy's own error
        getattr(imap, question)((10,))
    assert err.value.operation == f"IndexMap.{question}"
    assert err.value.reason == INJECTED
    monkeypatch.undo()  # ISL whole again: the padding of 10 elements in 3 rows of 4
    assert show(imap.padding_predicate((10,))) == "i0 == 2 and i1 >= 2"


def test_plan_barriers_where_isl_fails_raises_an_isl_failure(failing_coalesce, monkeypatch):
    func = parse(BARRIERS)
    # Computed afresh: relations an earlier test in this process planned are remembered
    # (analyses.gpu_isl_memo), and would not reach the failing coalesce.
    with pytest.raises(IslFailure) as err, computing_afresh():  # was islpy's own error
        plan_barriers(func)
    assert err.value.operation == "plan_barriers"
    assert isinstance(err.value, PolypadError)
    monkeypatch.undo()
    plan = plan_barriers(func)
    assert isinstance(plan, BarrierPlan) and plan.count == 1



def test_extract_where_isl_fails_raises_an_isl_failure(failing_coalesce):
    with pytest.raises(IslFailure) as err:
        extract(parse(SHIFTED))
    assert err.value.operation == "extract" and INJECTED in str(err.value)


@pytest.mark.parametrize("ask", [lambda d: d.tagged("flow"), lambda d: d.flow,
                                 lambda d: d.anti, lambda d: d.tagged_output_from(["S0"]),
                                 lambda d: d.tagged_flow_out_of(["S0"])])
def test_dependences_computed_later_where_isl_fails_raise_an_isl_failure(monkeypatch, ask):
    # Made while ISL is whole; its flows are computed on first use, after the call.
    deps = analyses.dependences(parse(SHIFTED))
    _fail_coalesce(monkeypatch)
    for kind in (isl.UnionSet, isl.Map, isl.UnionMap):  # the flows' maps and sets too
        monkeypatch.setattr(kind, "coalesce", isl.Set.coalesce)
    with pytest.raises(IslFailure) as err:
        ask(deps)
    assert err.value.operation == "dependences" and INJECTED in str(err.value)


# ---------------------------------------------------------------- threads


def test_a_failure_in_another_thread_voids_a_call_running_meanwhile(failing_coalesce):
    # Thread "long" is inside a polypad call when ISL fails in thread "failing": what
    # "long" holds may share the objects ISL rewrote, so its answer is not used, and
    # what it computes is not cached.
    started, failed = threading.Event(), threading.Event()
    cache = Recent(4)
    owner = object()
    results = {}

    def long_call():
        started.set()
        failed.wait(timeout=60)
        stored = cache.put((owner,), "computed before the failure was known")
        return stored

    def long_thread():
        results["long"] = answering_isl_failure(long_call, lambda message: ("failed", message))

    def failing_thread():
        started.wait(timeout=60)
        try:
            analyses.dependences(parse(SHIFTED))
        except IslFailure as err:
            results["failing"] = err.operation
        failed.set()

    threads = [threading.Thread(target=long_thread), threading.Thread(target=failing_thread)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results["failing"] == "dependences"
    assert results["long"] == ("failed", ANOTHER_THREAD)
    assert cache.get((owner,)) is None  # not stored
    # A call that begins after the failure answers, and caches.
    assert answering_isl_failure(lambda: cache.put((owner,), "fresh"), None) == "fresh"
    assert cache.get((owner,)) == "fresh"


def test_a_call_beginning_while_the_caches_are_emptied_finds_no_old_entry():
    # forget_all counts before it clears: a call that begins in between, when this
    # cache is not cleared yet, must not find the entry stored before the failure.
    from polypad.concurrency import forget_all

    owner, seen = object(), []

    class CallsMeanwhile(Recent):
        def clear(self):
            if not seen:  # the count moved, this cache not yet cleared
                other = threading.Thread(target=lambda: seen.append(answering_isl_failure(
                    lambda: self.get((owner,)), lambda message: ("failed", message))))
                other.start()
                other.join(timeout=60)
            super().clear()

    cache = CallsMeanwhile(4)
    cache.put((owner,), "stored before the failure")
    forget_all()
    assert seen == [None]
    assert cache.get((owner,)) is None
