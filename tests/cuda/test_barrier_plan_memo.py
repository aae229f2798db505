"""The barrier planner's remembered isl relations (:mod:`analyses.gpu_isl_memo`) change
no answer: every plan and every refusal, at every ``bind`` of the example schedules
and on random kernels, is the one computed from nothing; a racy ``bind`` after legal
ones (whose relations are remembered) is refused with the same evidence."""

from __future__ import annotations

import cuda_kernels as K
import gpu_random_programs as G
import pytest

import analyses.gpu_sync as gpu_sync
import polypad as pp
from analyses import Refuted
from analyses.evidence import Element, Instance
from analyses.gpu_isl_memo import computing_afresh, forget, reuses
from polypad.errors import IllegalTransformError, PolypadError
from polypad.examples import conv_layer, matmul

_PLAN = gpu_sync.plan_barriers


def _call(func):
    """``plan_barriers(func)``: its answer, or the polypad error it raised."""
    try:
        return _PLAN(func)
    except PolypadError as error:
        return error


def _comparable(found):
    """An answer of :func:`_call` in a form two calls' answers can be compared by."""
    if isinstance(found, PolypadError):
        return ("error", type(found), str(found))
    if isinstance(found, Refuted):
        return ("refused", found.counterexample, str(found.counterexample))
    return ("plan", found.slots, found.count)


def _both(func):
    """``func``'s answer with the remembered relations, and both answers compared."""
    found = _call(func)
    with computing_afresh():
        fresh = _call(func)
    return found, _comparable(found), _comparable(fresh)


@pytest.fixture
def compared(monkeypatch):
    """Every ``plan_barriers`` call (each ``bind``'s check asks it) answered with the
    remembered relations and afresh; the answers that differ, and how many calls."""
    calls: list = []
    differ: list = []

    def plan_both_ways(func):
        found, remembered, fresh = _both(func)
        calls.append(remembered[0])
        if remembered != fresh:
            differ.append((len(calls), remembered, fresh))
        if isinstance(found, PolypadError):
            raise found
        return found

    monkeypatch.setattr(gpu_sync, "plan_barriers", plan_both_ways)
    return calls, differ


def test_every_plan_of_the_example_schedules_is_the_fresh_one(compared):
    calls, differ = compared
    forget()
    start = reuses()
    # The double-buffered SGEMM (the default) with partial tiles, and the conv layer:
    # each bind's plan reuses the relations of the binds before.
    matmul.schedule_cuda(matmul.matmul(10, 12, 7), threads=2, per_thread=2, k_tile=4)
    conv_layer.schedule_cuda(conv_layer.conv_layer(n=1, ci=8, co=4, w=4, h=1), x_threads=2,
                             x_per_thread=2, c_threads=2, c_per_thread=2)
    assert differ == []
    assert len(calls) >= 25 and set(calls) == {"plan"}
    assert reuses() - start > 10 * len(calls)  # the later binds' plans did reuse relations


def test_every_answer_on_random_kernels_is_the_fresh_one():
    forget()
    start = reuses()
    answers: dict[str, int] = {}
    for seed in range(60):
        func = G.parse(seed)
        _, remembered, fresh = _both(func)
        assert remembered == fresh, seed
        answers[remembered[0]] = answers.get(remembered[0], 0) + 1
    # Both answers are checked (the kernels share statements, so entries are reused).
    assert answers.get("plan", 0) >= 10 and answers.get("refused", 0) >= 10
    assert reuses() > start


def _refusal(sch: pp.Schedule, loop: str, axis: str) -> IllegalTransformError:
    with pytest.raises(IllegalTransformError) as info:
        sch.bind(loop, axis)
    return info.value


def test_a_racy_bind_after_legal_ones_is_refused_with_the_same_evidence():
    text = '''
@T.prim_func
def bump(A: T.Buffer((4,), "float32")):
    for b in range(2):
        for t in range(4):
            A[t] = A[t] + T.float32(1)
'''
    forget()
    warm = pp.Schedule(pp.parse(text))
    warm.bind("t", "threadIdx.x")  # legal: its relations are remembered now
    start = reuses()
    refused = _refusal(warm, "b", "blockIdx.x")
    assert reuses() > start
    with computing_afresh():
        cold = pp.Schedule(pp.parse(text))
        cold.bind("t", "threadIdx.x")
        fresh = _refusal(cold, "b", "blockIdx.x")
    assert str(refused) == str(fresh)
    assert refused.evidence == fresh.evidence
    assert refused.evidence.element == Element("A", (0,))
    assert refused.evidence.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                                       "second thread": "block (1, 0, 0) thread (0, 0, 0)"}


def test_binding_a_reduction_axis_is_refused_alike_after_its_row_was_bound():
    def refusal():
        sch = pp.Schedule(K.ROW_SUM)
        i, k = sch.get_loops("B")
        sch.bind(i, "threadIdx.y")
        return _refusal(sch, k, "threadIdx.x")

    forget()
    refusal()  # remembers the relations of both binds
    start = reuses()
    refused = refusal()
    assert reuses() > start
    with computing_afresh():
        fresh = refusal()
    assert str(refused) == str(fresh) and refused.evidence == fresh.evidence
    assert refused.evidence.element == Element("B", (0,))
    assert refused.evidence.instances == (Instance("B_1", {"i": 0, "k": 0}),
                                          Instance("B_1", {"i": 0, "k": 1}))


def test_a_statements_time_carries_its_domain_so_the_key_needs_no_domain():
    """The memo keys a statement by its time's text: the time is a map whose domain is
    exactly the statement's domain, so two guards that differ print two times."""
    from polypad.model.extract import extract

    text = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        if tx > 2:
            A[tx] = T.float32(1)
'''
    times = []
    for guard in ("tx > 2", "tx > 3"):
        (s,) = extract(pp.parse(text.replace("tx > 2", guard))).statements
        assert s.time.domain().is_equal(s.domain)
        times.append(str(s.time))
    assert times[0] != times[1]
