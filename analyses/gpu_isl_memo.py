"""The isl relations the barrier planner recomputes at every ``bind``, remembered by
the exact text of their inputs.

``sch.bind`` asks :func:`analyses.gpu_sync.plan_barriers` about the whole
function after each binding (:func:`polypad.schedule.gpu_legality.check_gpu`),
and a schedule binds a dozen loops one by one.  Most of the planner's isl work
does not depend on the bindings at all: which instances of two statements the
serial program runs in which order (``lex_lt_map`` of their times), and which
of those touch one element (the access relations composed and restricted to
that order) come from the serial program, which a ``bind`` leaves as it was;
the pairs whose block times first differ at a level depend only on the two
statements' block times, which a ``bind`` changes only under the bound loop.

Each such relation is a pure function of its isl inputs, so it is remembered
by their printed text (exact: isl prints every constraint, and polypad's ids
carry no user data) and the computation's name; a later plan whose inputs
print the same gets the same relation, and any change to a statement's
time, accesses or block time gives other text, hence a fresh computation.  A
statement's domain is not a key of its own: its time is a map restricted to
the domain (``[n] -> { S0[i] -> [0, i, 0] : 3 <= i < n }``), so a change to the
domain prints another time.  Nothing about the program's objects is kept by identity, so a
program rebuilt by a primitive hits the entries of its unchanged parts.

The entries live in a :class:`polypad.concurrency.Recent` (a lock around each
lookup, emptied with the others when ISL fails: :mod:`polypad.isl_failure`).
:func:`computing_afresh` turns the memory off in a block, so that tests can
compare every answer with one computed from nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import islpy as isl

from polypad.concurrency import Recent

#: Entries kept: a schedule of a few launches needs a few hundred.
KEEP = 4096

_RELATIONS = Recent(KEEP)
# Per thread, for tests only; not a context variable: no option steers an analysis
# through one (tests/analyses/test_proof_options.py), and this one changes no answer.
_AFRESH = threading.local()
_reuses = 0  # counted without a lock: a number for tests and benchmarks, not a decision


def remembered(computation: str, texts: tuple, compute: Callable[[], isl.Map]) -> isl.Map:
    """The value of ``compute()``, a pure function of isl objects whose printed texts (and
    any ints it also reads) are ``texts``, named ``computation``: computed once per
    distinct ``texts``."""
    global _reuses
    if getattr(_AFRESH, "on", False):
        return compute()
    key = (computation, *texts)
    found = _RELATIONS.get((), key)
    if found is not None:
        _reuses += 1
        return found
    return _RELATIONS.put((), compute(), key)


@contextlib.contextmanager
def computing_afresh() -> Iterator[None]:
    """Within the block, :func:`remembered` computes every relation anew and neither
    reads nor stores an entry (for the tests that compare both ways), in the calling
    thread."""
    before, _AFRESH.on = getattr(_AFRESH, "on", False), True
    try:
        yield
    finally:
        _AFRESH.on = before


def reuses() -> int:
    """How many times :func:`remembered` has answered from memory so far."""
    return _reuses


def forget() -> None:
    """Drop every remembered relation."""
    _RELATIONS.clear()


__all__ = ["KEEP", "computing_afresh", "forget", "remembered", "reuses"]
