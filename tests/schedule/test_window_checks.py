"""The primitives' checks that ask the dataflow of the statements under one loop
(:mod:`analyses.dataflow_window`: ``vectorize``, ``decompose_reduction``, ``reorder``,
``cache_read``/``cache_write``) answer as with the whole function's dataflow: every
check of the GPU example schedules (small sizes) and of reorders of random nests,
asked both ways, gives the same answer or the same refusal."""

from __future__ import annotations

import sys

import islpy as isl
import pytest

import analyses.dataflow as dataflow
import polypad as pp
import polypad.schedule.cache_at as cache_at
import polypad.schedule.legality as legality
from analyses.dataflow_cache import _FLOWS
from analyses.dataflow_window import computing_whole
from polypad.errors import IllegalTransformError, PolypadError
from polypad.examples import conv_layer, matmul

_CHECKS = ((legality, "check_order"), (legality, "check_vectorize"),
           (legality, "check_decompose_reduction"), (cache_at, "_exposed"))


def _outcome(call):
    try:
        found = call()
    except PolypadError as error:
        return ("refused", error, (type(error), str(error), str(error.evidence)
                                   if isinstance(error, IllegalTransformError) else None))
    return ("answer", found, found)


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if isinstance(a[2], isl.Map):
        return isinstance(b[2], isl.Map) and a[2].is_equal(b[2])
    return a[2] == b[2]


@pytest.fixture
def both_ways(monkeypatch):
    """Each check asked with the restricted dataflow, then with the whole function's
    (the caches of flows emptied before each); the checks asked, the answers that
    differ, and how many questions were restricted."""
    asked, differ, restricted = [], [], [0]
    under = dataflow.under

    def counting_under(model, loop):
        restricted[0] += 1
        return under(model, loop)

    monkeypatch.setattr(dataflow, "under", counting_under)
    for module, name in _CHECKS:
        original = getattr(module, name)

        def compared(*args, _original=original, _name=name, **kwargs):
            _FLOWS.clear()
            fast = _outcome(lambda: _original(*args, **kwargs))
            with computing_whole():
                _FLOWS.clear()
                slow = _outcome(lambda: _original(*args, **kwargs))
            asked.append((_name, fast[0]))
            if not _same(fast, slow):
                differ.append((_name, fast[2], slow[2]))
            if fast[0] == "refused":
                raise fast[1]
            return fast[1]

        # Bound by name where a module imported it (reschedule's check_order...).
        for mod in list(sys.modules.values()):
            for attr, value in list(getattr(mod, "__dict__", {}).items()):
                if value is original:
                    monkeypatch.setattr(mod, attr, compared)
    return asked, differ, restricted


def test_every_check_of_the_example_schedules_answers_as_with_the_whole_function(both_ways):
    asked, differ, restricted = both_ways
    # The default SGEMM (runs of 4, wide copies, two stages) with partial tiles, and the
    # conv layer.
    matmul.schedule_cuda(matmul.matmul(12, 20, 7), threads=2, per_thread=4, k_tile=4)
    conv_layer.schedule_cuda(conv_layer.conv_layer(n=1, ci=8, co=4, w=4, h=1), x_threads=2,
                             x_per_thread=2, c_threads=2, c_per_thread=2)
    assert differ == []
    names = {name for name, _ in asked}
    assert names == {"check_order", "check_vectorize", "check_decompose_reduction", "_exposed"}
    assert restricted[0] >= len(asked)


_NEST = '''
@T.prim_func
def f(A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8,), "int32")):
    for i in range(8):
        C[i] = 0
    for p in range(8):
        for q in range(8):
            A[p, q] = {value}
    for k in range(8):
        C[k] = A[k, 7 - k] + C[k]
'''

#: The nest's store: legal to interchange or not, through A, B or C.
_VALUES = ("A[p, q] + 1", "A[(p + 7) % 8, q] + B[p, q]", "A[p, (q + 7) % 8] + 1",
           "A[(p + 7) % 8, (q + 1) % 8] + 1", "A[q, p] + 1", "C[p] + A[p, q]", "B[p, q] * 2")


@pytest.mark.parametrize("value", _VALUES)
def test_reorders_answer_and_refuse_as_with_the_whole_function(both_ways, value):
    asked, differ, restricted = both_ways
    sch = pp.Schedule(pp.parse(_NEST.format(value=value)))
    try:
        sch.reorder("q", "p")
    except IllegalTransformError:
        pass
    assert differ == []
    assert any(name == "check_order" for name, _ in asked) and restricted[0] > 0


def test_the_reorders_are_refused_and_accepted():
    """Both answers are compared above (a refusal's text and evidence included)."""
    refused = set()
    for value in _VALUES:
        sch = pp.Schedule(pp.parse(_NEST.format(value=value)))
        try:
            sch.reorder("q", "p")
            refused.add(False)
        except IllegalTransformError:
            refused.add(True)
    assert refused == {True, False}
