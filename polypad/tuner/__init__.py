"""``polypad.tuner``: ``autoschedule``, a search over schedules built from proved-legal primitives.

>>> sch = pp.autoschedule(f, budget_s=60, log="tuning.jsonl")
>>> print(sch.trace)            # what was found; sch.trace.apply_to(f) replays it
>>> sch.tuning                  # in a notebook: the best-so-far curve and the trace

The parts, one per module: :mod:`.nest` (what isl says of the loops),
:mod:`.space` (the candidates), :mod:`.realize` (a candidate built from the
primitives; a refusal drops it), :mod:`.cost` (the analytic model that ranks
them), :mod:`.measure` (check against the reference, compile, time),
:mod:`.local` and :mod:`.distributed` (where that runs), :mod:`.log` (the
tuning log), :mod:`.search` (the walk), :mod:`.report` (what it found).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from polypad.arguments import expect
from polypad.errors import ArgumentValueError
from polypad.ir import nodes as n

from .log import TuningLog, TuningLogWarning
from .report import Tuning

__all__ = ["Tuning", "TuningLog", "TuningLogWarning", "autoschedule", "best_logged"]


def autoschedule(func: n.PrimFunc, *, budget_s: float = 60, target: str = "numba",
                 client=None, log: str | os.PathLike | None = None, seed: int = 0,
                 small: n.PrimFunc | None = None, workers: int | None = None,
                 max_candidates: int | None = None, resume: bool = False,
                 progress: Callable[[Tuning], None] | None = None):
    """A fast legal schedule of ``func``, found by measuring candidates for ``budget_s``
    seconds; returns the :class:`~polypad.schedule.Schedule`, with ``sch.tuning``
    (:class:`Tuning`) saying what was tried.

    Every candidate is built from the checked primitives (a refused one is dropped
    and counted), its results are checked against the reference executor before it
    is timed, and the median of several calls decides (:mod:`.search`).  Sizes
    must be constants.

    - ``client``: a ``dask.distributed.Client``: compile and time on its workers
      (:mod:`.distributed`); by default a local process pool of ``workers``
      processes compiles (None: one per core; 0: this process) and this process
      times.
    - ``log``: a tuning log file (:mod:`.log`): every candidate is appended; a
      search resumes from it; once a search has finished, a later call returns the
      best logged schedule without searching (``resume=True`` searches on).
    - ``seed``: the order of the walk (:func:`.search.ranked`).
    - ``small``: the same kernel at small sizes, for the reference check of a
      function too large for the reference executor.
    - ``max_candidates``: stop after trying this many (besides the budget).
    - ``progress``: called with the :class:`Tuning` after each candidate.
    """
    from polypad.ir.nodes import PrimFunc

    from .search import search

    where = "autoschedule"
    expect(func, PrimFunc, "func", where)
    expect(budget_s, (int, float), "budget_s", where)
    expect(target, str, "target", where)
    expect(seed, int, "seed", where)
    expect(small, (PrimFunc, None), "small", where)
    expect(workers, (int, None), "workers", where)
    expect(max_candidates, (int, None), "max_candidates", where)
    if budget_s <= 0:
        raise ArgumentValueError(f"{where}: budget_s must be positive, not {budget_s}")
    if target != "numba":
        raise ArgumentValueError(f"{where}: only the 'numba' target is tuned, not {target!r}")
    if client is not None:
        from .distributed import DaskRunner

        runner = DaskRunner(client)
    else:
        from .local import LocalRunner

        runner = LocalRunner(workers)
    tuning_log = TuningLog(log) if log is not None else None
    try:
        trace, tuning = search(func, budget_s=budget_s, runner=runner, log=tuning_log,
                               seed=seed, target=target, small=small,
                               max_candidates=max_candidates, resume=resume,
                               progress=progress)
    finally:
        runner.close()
    sch = trace.apply_to(func)
    tuning.trace_text = str(sch.trace)
    sch.tuning = tuning
    return sch


def best_logged(func: n.PrimFunc, log: str | os.PathLike, *, target: str = "numba"):
    """The best schedule of ``func`` in ``log``, replayed through the checked
    primitives, or None when the log has none (no search)."""
    from .log import func_hash
    from .search import _from_log

    entries = TuningLog(log).read(func_hash(func, target), target)
    found = _from_log(func, func_hash(func, target), target, entries)
    if found is None:
        return None
    trace, tuning = found
    sch = trace.apply_to(func)
    tuning.trace_text = str(sch.trace)
    sch.tuning = tuning
    return sch
