"""The search: rank the space, compile batches in parallel, time them one at a time,
keep the best, log everything.

Order.  The space (:mod:`.space`) is ranked by the cost model (:mod:`.cost`),
ties broken by the candidate's key; then every fourth place goes to a
candidate drawn, with ``random.Random(seed)``, from those the model ranks
lower, so that a wrong model still meets good candidates.  The plain function
(no step) is tried first: it is the baseline, and the result when nothing
beats it -- except for a nest of more than :data:`PLAIN_FIRST_BELOW`
statement instances, whose plain run would take much of the budget: it is
tried last.  The order is a function of the function, the seed and the core
count alone.

Budget.  The order is walked in batches of up to :data:`PER_PROCESS` rounds
(a round: one candidate per process of the runner), handed out as processes
come free, so that one long compile holds up only its own process, not the
batch (the timings wait for the whole batch: none runs beside a compile).  A
batch holds only the rounds that fit in what is left of ``budget_s`` at the
last batch's pace, and none is started when no round fits (nor past
``max_candidates``), so the search overruns the budget by a fraction of a
round at most, besides the first batch, which always runs.  The wall clock decides only where the
walk stops, never what comes next: two searches with one seed try the same
candidates in the same order, and one given more time tries a longer prefix.
The winner is the fastest median; one within :data:`TIE` of an earlier
candidate's loses to it, so that noise between near-equal candidates does
not flip the result.  The fastest are then timed again (:func:`_confirm`);
a best they do not include (the plain nest timed by its one long call in the
check) stays unless the confirmed winner beats it.

Log.  Every candidate tried is appended to the log (:mod:`.log`), refusals
included; a search that finds a candidate there takes its record instead of
trying it again, so an interrupted search resumes where it stopped.  A search
that ends appends a ``search`` line; a later call that finds one returns the
best logged schedule at once, without searching, unless ``resume=True``.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

from polypad.errors import PolypadError
from polypad.ir import nodes as n

from .cost import estimate
from .log import TuningLog, func_hash
from .measure import LONG_CALL, Compiled, make_check, trace_from_json
from .nest import analyze
from .report import Tried, Tuning
from .space import Candidate, enumerate_space, plain

TIE = 0.02
#: A nest of more statement instances than this is tried plain last, not first.
PLAIN_FIRST_BELOW = 100_000_000
EXPLORE_EVERY = 4
EXPLORE_WITHIN = 4.0
#: Candidates per process in a batch: four, so that the batch barrier (every compile done before
#: any timing) comes seldom; at two, two workers searched 1.42x as fast as one, at four 1.52x.
PER_PROCESS = 4
#: The fastest candidates timed again, in turn, CONFIRM_ROUNDS times at the end of a
#: search: on a busy machine one median of a few calls is off by 2x and more for a
#: short parallel kernel, and a lucky one would win.
CONFIRM, CONFIRM_ROUNDS = 3, 2
PLAIN_KEY = Candidate().key  # "plain": the candidate that takes no step, for any nest


def ranked(func_or_nest, seed: int, cores: int | None = None) -> list[Candidate]:
    """The order a search walks the space of ``func`` in (see the module docstring)."""
    nest = analyze(func_or_nest) if isinstance(func_or_nest, n.PrimFunc) else func_or_nest
    cores = cores or os.cpu_count() or 1
    space = [c for c in enumerate_space(nest) if not c.is_plain]
    costs = {c: estimate(nest, c, cores) for c in space}
    space.sort(key=lambda c: (costs[c], c.key))
    rng = random.Random(seed)
    cut = max(1, len(space) // 8)
    head = space[:cut]
    # Exploration draws only among candidates the model puts within EXPLORE_WITHIN of
    # its best: far slower ones are seldom the best, and one call of a candidate 100
    # times slower than the best can take more of the budget than ten good ones.
    near = [c for c in space[cut:] if costs[c] <= EXPLORE_WITHIN * costs[space[0]]]
    rest = [c for c in space[cut:] if costs[c] > EXPLORE_WITHIN * costs[space[0]]]
    # The plain nest first, as the baseline; a large one last: timing it would take
    # much of the budget, and it is seldom the best (the conv layer's takes seconds).
    large = nest.root.instances + sum(p.instances for p in nest.producers) > PLAIN_FIRST_BELOW
    order: list[Candidate] = [] if large else [plain(nest)]
    while head or near:
        if near and (len(order) + large) % EXPLORE_EVERY == 0:
            order.append(near.pop(rng.randrange(len(near))))
        elif head:
            order.append(head.pop(0))
        else:
            order.append(near.pop(0))
    order += rest
    return order + ([plain(nest)] if large else [])


def search(func: n.PrimFunc, *, budget_s: float, runner, log: TuningLog | None, seed: int,
           target: str, small: n.PrimFunc | None = None, max_candidates: int | None = None,
           resume: bool = False, progress: Callable[[Tuning], None] | None = None):
    """Search the schedules of ``func``; returns ``(trace, tuning)`` (module docstring)."""
    start = time.perf_counter()
    key_hash = func_hash(func, target)
    entries = log.read(key_hash, target) if log is not None else None
    if entries is not None and entries.searches and not resume:
        found = _from_log(func, key_hash, target, entries)
        if found is not None:
            found[1].search_s = time.perf_counter() - start
            return found
    nest = analyze(func)
    order = ranked(nest, seed)
    tuning = Tuning(func.name, key_hash, target, space=len(order), runner=runner.description)
    check = make_check(func, nest, small, seed)
    tuning.checked_against = check.against
    logged = entries.candidates if entries is not None else {}
    best: list = [None, None, None]  # seconds, index, trace
    timed: dict[str, tuple[Compiled, list[float]]] = {}  # this search's, by key
    traces: dict[str, list] = {}

    def record(index: int, cand: Candidate, status: str, seconds: float | None,
               trace: list, detail: str = "", from_log: bool = False):
        tuning.tried.append(Tried(cand.key, status, seconds, time.perf_counter() - start,
                                  from_log, detail))
        if status == "ok":
            traces[cand.key] = trace
            if cand.is_plain:
                tuning.plain_seconds = seconds
            if best[0] is None or seconds < best[0] * (1 - TIE):
                best[:] = [seconds, index, trace]
                tuning.best_key, tuning.best_seconds = cand.key, seconds
        if progress is not None:
            progress(tuning)

    if check.plain_runs and check.plain_runs[0] >= LONG_CALL and PLAIN_KEY not in logged:
        # The plain kernel's run that computed the expected outputs is its timing when
        # it is long; a short one paid the first touch of the outputs' pages and is
        # timed as a candidate (and confirmed beside the best) instead.
        base = plain(nest)
        record(order.index(base), base, "ok", check.plain_runs[0], [])
        _log(log, key_hash, target, base, "ok", check.plain_runs[0], check.plain_runs, [],
             seed)
        order.remove(base)
    position = 0
    tried = 0
    batch_size = runner.parallelism * PER_PROCESS
    last_batch = 0.0  # seconds the last batch took: the next is not started past the budget
    last_rounds = 1  # rounds of compiles (one candidate per process) in the last batch
    while position < len(order):
        size = batch_size
        if tried:
            # As many rounds as fit in what is left of the budget, at the last batch's pace.
            left = budget_s - (time.perf_counter() - start)
            rounds = min(PER_PROCESS, int(left / max(last_batch / last_rounds, 1e-9)))
            size = rounds * runner.parallelism
        if size <= 0:
            break
        if max_candidates is not None and tried >= max_candidates:
            break
        batch: list[tuple[int, Candidate]] = []
        while position < len(order) and len(batch) < size:
            cand = order[position]
            if cand.key in logged:
                rec = logged[cand.key]
                if rec["status"] == "refused":
                    tuning.refused[rec.get("primitive") or "?"] += 1
                record(position, cand, rec["status"], rec.get("seconds"), rec["trace"],
                       rec.get("detail", ""), from_log=True)
            elif max_candidates is None or tried + len(batch) < max_candidates:
                batch.append((position, cand))
            position += 1
        if not batch:
            continue
        tried += len(batch)
        batch_start = time.perf_counter()
        compiled = runner.compile(func, nest, [c for _, c in batch], check)
        index = {id(c): k for (k, _), c in zip(batch, compiled)}
        ready: list[Compiled] = []
        for (k, cand), c in zip(batch, compiled):
            tuning.skipped.update(c.skipped)
            if c.status == "ok":
                ready.append(c)
                continue
            if c.status == "refused":
                tuning.refused[c.primitive or "?"] += 1
            record(k, cand, c.status, None, c.trace, c.detail)
            _log(log, key_hash, target, cand, c.status, None, [], c.trace, seed,
                 detail=c.detail, primitive=c.primitive)
        plain_s = 0.0  # the plain nest's timing, which no later batch repeats
        for c, runs in runner.time(ready, seed, lambda: best[0]):
            if c.candidate.is_plain:
                plain_s = sum(runs)
            seconds = sorted(runs)[len(runs) // 2]
            timed[c.candidate.key] = (c, list(runs))
            record(index[id(c)], c.candidate, "ok", seconds, c.trace)
            _log(log, key_hash, target, c.candidate, "ok", seconds, runs, c.trace, seed,
                 compile_s=round(c.compile_s, 3))
        last_batch = time.perf_counter() - batch_start - plain_s
        last_rounds = -(-len(batch) // runner.parallelism)
    tuning.exhausted = position >= len(order)
    _confirm(runner, timed, seed, tuning, best)
    tuning.search_s = time.perf_counter() - start
    if best[2] is None:
        raise PolypadError(f"autoschedule: no candidate of {func.name} could be timed "
                           f"in {budget_s} s; give it a larger budget")
    if log is not None:
        log.append("search", key_hash, target, func=func.name, seed=seed,
                   tried=len(tuning.tried), exhausted=tuning.exhausted,
                   best=tuning.best_key, seconds=tuning.best_seconds)
    return trace_from_json(best[2]), tuning


def _confirm(runner, timed: dict, seed: int, tuning: Tuning, best: list) -> None:
    """Time the :data:`CONFIRM` fastest of ``timed`` again, in turn, and make the one
    with the fastest median of all its calls the best (:data:`CONFIRM`)."""
    def median(runs: list[float]) -> float:
        return sorted(runs)[len(runs) // 2]

    top = sorted(timed, key=lambda key: (median(timed[key][1]), key))[:CONFIRM]
    if len(top) < 2:
        return
    # The best may not be among them (the plain nest timed by its one long call, or a
    # record of an earlier search): the confirmed winner must then beat it.
    outside = tuning.best_key not in top and best[0] is not None
    prior = best[0]
    for _ in range(CONFIRM_ROUNDS):
        for c, runs in runner.time([timed[key][0] for key in top], seed, lambda: None):
            timed[c.candidate.key][1].extend(runs)
    tuning.confirmed = {key: median(timed[key][1]) for key in top}
    winner = min(top, key=lambda key: (tuning.confirmed[key], key))
    if outside and tuning.confirmed[winner] >= prior * (1 - TIE):
        return
    tuning.best_key, tuning.best_seconds = winner, tuning.confirmed[winner]
    best[0], best[2] = tuning.best_seconds, timed[winner][0].trace


def _log(log, key_hash, target, cand, status, seconds, runs, trace, seed, **extra) -> None:
    if log is None:
        return
    log.append("candidate", key_hash, target, key=cand.key, candidate=cand.to_json(),
               status=status, seconds=seconds, runs=runs, trace=trace, seed=seed, **extra)


def _from_log(func: n.PrimFunc, key_hash: str, target: str, entries):
    """The best logged schedule of ``func`` whose trace replays, as ``(trace, tuning)``;
    None when none does.  A trace that does not replay is skipped with a warning."""
    import warnings

    from .log import TuningLogWarning

    # The searches' picks first, the last one's first (a search keeps an earlier
    # candidate within TIE of a faster one), then the others, fastest first.
    picks = [str(rec.get("best")) for rec in reversed(entries.searches)]
    timed = sorted((rec for rec in entries.candidates.values() if rec["status"] == "ok"),
                   key=lambda rec: (picks.index(rec["key"]) if rec["key"] in picks
                                    else len(picks), rec["seconds"]))
    for rec in timed:
        try:
            trace = trace_from_json(rec["trace"])
            trace.apply_to(func)
        except (ValueError, TypeError, PolypadError) as error:
            warnings.warn(f"tuning log: the trace of {rec['key']} does not replay on "
                          f"{func.name}: {error}", TuningLogWarning, stacklevel=3)
            continue
        tuning = Tuning(func.name, key_hash, target, space=0, from_log=True,
                        best_key=rec["key"], best_seconds=rec["seconds"])
        plain = entries.candidates.get(PLAIN_KEY)
        tuning.plain_seconds = plain.get("seconds") if plain else None
        tuning.tried = [Tried(r["key"], r["status"], r.get("seconds"), 0.0, True)
                        for r in entries.candidates.values()]
        return trace, tuning
    return None
