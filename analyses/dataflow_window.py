"""The dataflow of the statements under one loop: exact for the pairs inside one run of it.

A question about the instances that one run of a loop ``L`` executes (the
instances of the statements under ``L`` in one iteration of every loop around
it) is answered by the dataflow of those statements alone.  Every instance that
runs between two such instances is one too: a run of ``L`` is a contiguous
stretch of program order that executes nothing else.  A value-based pair ``a ->
b`` depends only on the accesses that run between ``a`` and ``b`` (a must-write
or kill of the element there cuts it; a may-write there makes it uncertain;
two writes at one time tie), so the pairs inside one run are the same whether
the other statements, the other runs' kills and ``END`` are in the question or
not.  The other pairs of such a question are not to be read: a write outside
``L`` that cut a pair is not there.

``vectorize`` (the dependences ``L`` carries), ``decompose_reduction`` (the
pairs under ``L`` within one of its runs) and ``cache_read``/``cache_write``
(what the block reads in one iteration of the cache's loop before writing it)
ask such questions; on the GPU example schedules they were most of the
primitives' time, because the whole function's dataflow includes the ``END``
read of every output element, the costliest part of it (an isl ``lexmax``
through the tiled index of every write).

:func:`computing_whole` turns this off in a block (every question gets the whole
function's dataflow, as before), so that tests and benchmarks can compare.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from polypad.ir import nodes as n
from polypad.model import Model, StatementModel

# Per thread, for tests and benchmarks only; not a context variable: no option steers
# an analysis through one (tests/analyses/test_proof_options.py), and this one changes
# no answer.
_WHOLE = threading.local()


def window(func: n.PrimFunc, loop: n.For | None) -> n.For | None:
    """The loop a question is to be restricted to: ``loop``, or ``None`` (the whole
    function) inside :func:`computing_whole`, and where ``loop`` is not a node of
    ``func`` at exactly one place (a run of a loop found twice is not one stretch of
    program order; one not there has no statements to ask about)."""
    if loop is None or getattr(_WHOLE, "on", False):
        return None
    from .instances import leaf_range

    try:
        return loop if leaf_range(func.body, loop) is not None else None
    except ValueError:  # the same node at two places
        return None


def under(model: Model, loop: n.For) -> list[StatementModel]:
    """The statements of ``model`` under ``loop`` (by identity), in program order."""
    return [s for s in model.statements if any(x is loop for x in s.loops)]


@contextlib.contextmanager
def computing_whole() -> Iterator[None]:
    """Within the block, in the calling thread, every question restricted to the
    statements under a loop is asked of the whole function's dataflow instead."""
    before, _WHOLE.on = getattr(_WHOLE, "on", False), True
    try:
        yield
    finally:
        _WHOLE.on = before


__all__ = ["computing_whole", "under", "window"]
