"""Barriers and races of a GPU execution, decided exactly with isl.

The GPU runs the statement instances of a launch on threads
(:mod:`analyses.gpu_threads`); each thread runs its own in program order.
The GPU execution computes what the serial program computes exactly when
every two instances that touch one element, at least one writing, run in the
same order in both (the standard condition for reordering: every conflicting
pair ordered as before, so every read sees the same write).  Such a pair is

- on one thread: ordered by the thread's program order, which is the serial
  order (the bound loops' counters agree, so dropping them keeps the order);
- on two threads of one block: ordered only by a barrier
  (``cuda.syncthreads()``) that the first reaches after its instance and the
  second before its own.  Where the serial order puts the first before the
  second in the *block order* -- program order with the thread loops'
  counters left out, which is the order every thread of the block follows --
  a barrier can go between them: in the sequence where their block times
  first differ (between the two children), or, where they first differ in a
  serial loop's counter, at the start of that loop's body.  Where the block
  order does not put the first one first (both in one iteration of a thread
  loop's body: thread 3's write and thread 0's read of one element, which
  the serial program runs the other way round), no barrier can order them;
- atomic updates of one element by one combiner (``sch.atomic``,
  :mod:`analyses.gpu_atomics`), on any two threads of a launch (of one
  block, for shared memory): they commute, so any order is the serial one;
- on two blocks, in global memory: never ordered; in private memory on two
  copies (``"local"``: one per thread, ``"shared"``: one per block): no conflict,
  unless a read takes its value from the other copy's write (refused:
  :mod:`analyses.gpu_private_flow`).

:func:`plan_barriers` finds every conflicting pair with isl (the access
relations of :func:`polypad.model.extract_gathers`, restricted to the serial
order; an index that reads memory, ``A[X[i]]``, is there every element of the
buffer's extent on its axis, so its pairs are the may-dependences of every
value it may take, each given the barrier it would need), refuses
the unordered ones with a :class:`Counterexample` naming both instances, both
threads (block and thread indices) and the element, and places the fewest
barriers that order the rest: each needed gap of a sequence gets a barrier
unless one is already chosen there (interval stabbing by right end), each
loop-carried pair one at the start of the loop body unless a chosen one
already orders it.  A barrier must be reached by every thread of the block
as often: one needed under a condition, a loop bound or a guarded thread
loop that depends on the thread is refused, naming that condition.

The parts: the block time of a launch (:mod:`analyses.gpu_block_time`), the gaps
each pair needs and the barriers that fill them
(:mod:`analyses.gpu_barrier_placement`, asking :mod:`analyses.gpu_barrier_order`),
and the counterexample of a race (:mod:`analyses.gpu_race_evidence`).  The isl
relations that do not depend on the bindings (the serial order, the conflicting
pairs, the threads two statements run on) are remembered between the plans of a
schedule's binds by their inputs' text (:mod:`analyses.gpu_isl_memo`).
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.views import root
from polypad.ir.visitor import walk
from polypad.isl_failure import raising_isl_failures
from polypad.model import extract_gathers
from polypad.model.isl_helpers import time_map

from .evidence import Counterexample, Refuted
from .gpu_atomics import atomic_stores
from .gpu_barrier_order import BarrierOrder
from .gpu_barrier_placement import BarrierPlan, place_barriers, record_requirements
from .gpu_block_time import Timeline
from .gpu_isl_memo import remembered
from .gpu_private_flow import PrivateFlow
from .gpu_race_evidence import private_text, race_evidence
from .gpu_threads import (
    BLOCK_AXES,
    THREAD_AXES,
    Launch,
    children,
    coordinates,
    structure,
)

_DIFF_BLOCK = "{ [b0, b1, b2, t0, t1, t2] -> [c0, c1, c2, u0, u1, u2] : " \
              "b0 != c0 or b1 != c1 or b2 != c2 }"
_SAME_BLOCK = "{ [b0, b1, b2, t0, t1, t2] -> [b0, b1, b2, u0, u1, u2] : " \
              "t0 != u0 or t1 != u1 or t2 != u2 }"
_DIFF_THREAD = "{ [b0, b1, b2, t0, t1, t2] -> [c0, c1, c2, u0, u1, u2] : b0 != c0 or " \
               "b1 != c1 or b2 != c2 or t0 != u0 or t1 != u1 or t2 != u2 }"


def plan_barriers(func: n.PrimFunc) -> BarrierPlan | Refuted:
    """Where ``func``'s kernels need ``cuda.syncthreads()``, or the race no barrier can
    order (see the module docstring).

    Raises :class:`~polypad.errors.BuildError` for a function the GPU cannot
    run at all (:func:`analyses.gpu_threads.structure`), and
    :class:`~polypad.errors.IslFailure` where ISL fails (:mod:`polypad.isl_failure`).
    """
    return raising_isl_failures("plan_barriers", lambda: _plan_barriers(func))


def _plan_barriers(func: n.PrimFunc) -> BarrierPlan | Refuted:
    found = structure(func)
    plan = BarrierPlan(found)
    launch_of = found.launch_of()
    model = extract_gathers(func)
    by_launch: dict[int, list] = {}
    for s in model.statements:
        launch = launch_of.get(id(s.stmt))
        if launch is None:
            raise BuildError(f"statement {show(s.stmt)} is outside every kernel launch")
        by_launch.setdefault(launch.index, []).append(s)
    for alloc in found.allocations:
        if alloc.buffer.scope in ("shared", "local"):
            users = {launch_of[id(x)].index for x in walk(alloc.body)
                     if isinstance(x, (n.BufferStore, n.BufferLoad))
                     and root(x.buffer) is alloc.buffer and id(x) in launch_of}
            if len(users) > 1:
                raise BuildError(f"{alloc.buffer.scope} buffer {alloc.buffer.name!r} is used "
                                 f"by {len(users)} kernel launches; {alloc.buffer.scope} "
                                 "memory lives only as long as one: allocate it in global "
                                 "memory")
    for launch in found.launches:
        statements = by_launch.get(launch.index, [])
        if not statements:
            continue
        refused = _plan_launch(model, launch, statements, plan)
        if refused is not None:
            refused = Counterexample(refused.description, refused.instances, refused.element,
                                     refused.params, refused.values, func=func)
            return Refuted(refused)
    return plan


def _plan_launch(model, launch: Launch, statements, plan: BarrierPlan):
    timeline = Timeline(launch)
    length = max(len(timeline.leaves[id(s.stmt)].entries) for s in statements) or 1
    tau, coords = {}, {}
    for s in statements:
        leaf = timeline.leaves[id(s.stmt)]
        entries = leaf.entries if leaf.entries else [0]
        tau[s.name] = time_map(s.space, entries, s.domain, length)
        coords[s.name] = coordinates(s)
    diff_block, same_block = isl.Map(_DIFF_BLOCK), isl.Map(_SAME_BLOCK)
    diff_thread = isl.Map(_DIFF_THREAD)
    private_loops = _private_loops(launch.root)
    flows = PrivateFlow(statements)
    atomics = atomic_stores(launch.root)
    intervals: dict[int, list] = {}  # container -> [(i, j, why)]
    wraps: dict[int, list] = {}  # container -> [(a, c, why)]
    # The serial order and the conflicting pairs do not depend on the bindings:
    # remembered by their inputs' text across the plans of one schedule's binds.
    times = {s.name: str(s.time) for s in statements}
    relations = {id(a): str(a.relation) for s in statements for a in s.accesses}
    for s in statements:
        for d in statements:
            before = remembered("serial order", (times[s.name], times[d.name]),
                                lambda: s.time.lex_lt_map(d.time))  # noqa: B023 (called now)
            if before.is_empty():
                continue
            for a in s.accesses:
                for b in d.accesses:
                    if a.buffer is not b.buffer or (a.kind == "read" and b.kind == "read"):
                        continue
                    pairs = remembered(
                        "conflicts", (times[s.name], times[d.name], relations[id(a)],
                                      relations[id(b)]),
                        lambda: a.relation.apply_range(  # noqa: B023 (called now)
                            b.relation.reverse()).intersect(before))  # noqa: B023
                    scope = a.buffer.scope
                    for k in private_loops.get(a.buffer, ()):
                        pairs = pairs.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
                    if pairs.is_empty():
                        continue
                    why = (model, s, d, a, b)
                    private = diff_thread if scope == "local" else diff_block
                    race = pairs.intersect(_relate(coords, s, d, private))
                    if scope in ("local", "shared") and not race.is_empty():  # only a value
                        race = flows.races(race, a, b)  # crosses between copies
                    commute = _commute(atomics, s, d, a) and scope != "local"
                    if not race.is_empty() and not (commute and scope != "shared"):
                        return race_evidence(why, race, coords, private_text(scope))
                    if commute or scope == "local":  # commuting updates; a thread's own copy
                        continue
                    across = pairs.intersect(_relate(coords, s, d, same_block))
                    if across.is_empty():
                        continue
                    not_before = remembered(
                        "block order not before", (str(tau[s.name]), str(tau[d.name])),
                        lambda: tau[s.name].lex_ge_map(tau[d.name]))  # noqa: B023 (called now)
                    unordered = across.intersect(not_before)
                    if not unordered.is_empty():
                        return race_evidence(why, unordered, coords,
                                             "two threads of one block run them in either order: "
                                             "no barrier can order them as the serial "
                                             "program does")
                    refused = record_requirements(timeline, length, tau, coords, s, d, across,
                                                  why, intervals, wraps)
                    if refused is not None:
                        return refused
    order = BarrierOrder(timeline.leaves, tau, statements, length, coords)
    return place_barriers(timeline, intervals, wraps, plan, coords, order)


def _commute(atomics: dict, s, d, a) -> bool:
    """Whether ``s`` and ``d`` are atomic updates of ``a``'s buffer by one combiner (their
    every access of that buffer is the update's own: the operand does not read it)."""
    combiner = atomics.get(id(s.stmt))
    return (combiner is not None and combiner == atomics.get(id(d.stmt))
            and s.stmt.buffer is a.buffer and d.stmt.buffer is a.buffer)


def _private_loops(root: n.Stmt) -> dict[n.Buffer, list[int]]:
    """For each buffer allocated in the launch, the depths of the loops around its
    allocation that make a fresh copy on the GPU too: block loops for ``"shared"``
    memory, block and thread loops for ``"local"``.  Two instances in different
    iterations of such a loop touch different memory; around any other loop the
    serial program's fresh allocation is one array on the GPU, reused."""
    private = {"shared": BLOCK_AXES, "local": BLOCK_AXES + THREAD_AXES}
    out: dict[n.Buffer, list[int]] = {}

    def visit(stmt, loops):
        if isinstance(stmt, n.Allocate):
            axes = private.get(stmt.buffer.scope, ())
            out[stmt.buffer] = [k for k, loop in enumerate(loops) if loop.kind in axes]
        if isinstance(stmt, n.For):
            loops = loops + [stmt]
        for child in children(stmt):
            visit(child, loops)

    visit(root, [])
    return out


def _relate(coords, s, d, axes: isl.Map) -> isl.Map:
    # Depends on the two statements' threads only: remembered across a schedule's binds.
    return remembered("threads related", (str(coords[s.name]), str(coords[d.name]), str(axes)),
                      lambda: coords[s.name].apply_range(axes).apply_range(
                          coords[d.name].reverse()))


__all__ = ["BLOCK_AXES", "THREAD_AXES", "BarrierPlan", "plan_barriers"]
