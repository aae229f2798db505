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
relations of :mod:`polypad.model`, restricted to the serial order), refuses
the unordered ones with a :class:`Counterexample` naming both instances, both
threads (block and thread indices) and the element, and places the fewest
barriers that order the rest: each needed gap of a sequence gets a barrier
unless one is already chosen there (interval stabbing by right end), each
loop-carried pair one at the start of the loop body unless a chosen one
already orders it.  A barrier must be reached by every thread of the block
as often: one needed under a condition, a loop bound or a guarded thread
loop that depends on the thread is refused, naming that condition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import BuildError, NotAffineError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.views import root
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.model.affine import as_space, condition_set
from polypad.model.isl_helpers import time_map

from . import instances as inst
from .evidence import Counterexample, Element, Refuted
from .gpu_atomics import atomic_stores
from .gpu_barrier_order import BarrierOrder
from .gpu_private_flow import PrivateFlow
from .gpu_threads import (
    BLOCK_AXES,
    THREAD_AXES,
    Launch,
    Structure,
    children,
    coordinates,
    is_bound,
    structure,
    thread_text,
)


@dataclass
class BarrierPlan:
    """Where the barriers go: sequence gaps, by container.

    A container is a ``SeqStmt`` (slot ``k`` is just before its ``k``-th
    statement, ``len`` after the last) or a serial loop whose body is no
    sequence (slot 0 before the body, 1 after).
    """

    structure: Structure
    slots: dict[int, set[int]] = field(default_factory=dict)
    nodes: dict[int, n.Stmt] = field(default_factory=dict)

    def at(self, container: n.Stmt) -> set[int]:
        """The slots of ``container`` that hold a barrier."""
        return self.slots.get(id(container), set())

    @property
    def count(self) -> int:
        """How many barriers the kernels hold (in the code, not at run time)."""
        return sum(len(s) for s in self.slots.values())


@dataclass
class _Container:
    node: n.Stmt
    #: Where slot ``k`` is in the IR: (a ``SeqStmt`` and the index of the statement the
    #: barrier goes before, its length for after the last; or a loop and 0 or 1).
    positions: list[tuple[n.Stmt, int]]
    nonuniform: str | None  # why not every thread of a block reaches it alike


@dataclass
class _Leaf:
    entries: list  # ints and loop Vars: the block time
    descs: list  # per entry: ("seq", container node) | ("loop", For) | ("if", IfThenElse)


class _Timeline:
    """The block time of every leaf statement of one launch, and its containers."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.leaves: dict[int, _Leaf] = {}
        self.containers: dict[int, _Container] = {}
        self.visit(launch.root, [], [], None, frozenset(), ())

    def varies(self, cond: n.Expr, loops: tuple, tvars) -> bool:
        """Whether two threads of one block may disagree on ``cond`` (at the same
        values of everything else): decided by isl where ``cond`` is affine in the
        thread loops' counters, else assumed where it reads memory or a value
        computed from a counter."""
        if any(isinstance(x, n.BufferLoad) for x in walk(cond)):
            return True
        used = [v for v in free_vars(cond) if v in tvars]
        if not used:
            return False
        threads = [loop.var for loop in loops if loop.kind in THREAD_AXES]
        if any(v not in threads for v in used):
            return True
        space = as_space([loop.var for loop in loops])
        try:
            box = space.universe
            for loop in loops:
                box = box.intersect(condition_set(
                    n.And(loop.var >= loop.min, loop.var < loop.min + loop.extent), space))
            holds = condition_set(cond, space)
        except NotAffineError:
            return True
        yes, no = box.intersect(holds), box.subtract(holds)
        for var in sorted(threads, key=space.position, reverse=True):
            yes = yes.project_out(isl.dim_type.set, space.position(var), 1)
            no = no.project_out(isl.dim_type.set, space.position(var), 1)
        return not yes.intersect(no).is_empty()

    def visit(self, stmt, entries, descs, reason, tvars, loops) -> None:
        match stmt:
            case n.SeqStmt():
                # A sequence inside a block or an allocation that is itself in a
                # sequence continues it: one barrier can serve both.
                flat = _flatten(stmt)
                positions = [(owner, k) for owner, k, _ in flat]
                positions.append((flat[-1][0], flat[-1][1] + 1) if flat else (stmt, 0))
                self.containers[id(stmt)] = _Container(stmt, positions, reason)
                for k, (_, _, child) in enumerate(flat):
                    self.visit(child, entries + [k], descs + [("seq", stmt)], reason, tvars,
                               loops)
            case n.For() if is_bound(stmt):
                if stmt.kind in THREAD_AXES:
                    tvars = tvars | {stmt.var}
                    if not self.launch.full(stmt) and reason is None:
                        reason = (f"loop {stmt.var.name!r}, which runs on only "
                                  f"{show(stmt.extent)} of the threads on {stmt.kind.value}")
                self.visit(stmt.body, entries, descs, reason, tvars, loops + (stmt,))
            case n.For():
                inside = loops + (stmt,)
                if self.varies(n.And(stmt.var >= stmt.min, stmt.var < stmt.min + stmt.extent),
                               inside, tvars):
                    tvars = tvars | {stmt.var}
                    if reason is None:
                        reason = (f"loop {stmt.var.name!r}, whose bounds depend on the "
                                  "thread")
                entries, descs = entries + [stmt.var], descs + [("loop", stmt)]
                if isinstance(_through(stmt.body), n.SeqStmt):
                    self.visit(stmt.body, entries, descs, reason, tvars, inside)
                else:
                    self.containers[id(stmt)] = _Container(stmt, [(stmt, 0), (stmt, 1)],
                                                           reason)
                    self.visit(stmt.body, entries + [0], descs + [("seq", stmt)], reason,
                               tvars, inside)
            case n.IfThenElse():
                if reason is None and self.varies(stmt.condition, loops, tvars):
                    reason = f"the condition {show(stmt.condition)}"
                self.visit(stmt.then_case, entries + [0], descs + [("if", stmt)], reason,
                           tvars, loops)
                if stmt.else_case is not None:
                    self.visit(stmt.else_case, entries + [1], descs + [("if", stmt)], reason,
                               tvars, loops)
            case n.LetStmt():
                if any(v in tvars for v in free_vars(stmt.value)) or any(
                        isinstance(x, n.BufferLoad) for x in walk(stmt.value)):
                    tvars = tvars | {stmt.var}
                self.visit(stmt.body, entries, descs, reason, tvars, loops)
            case n.BufferStore() | n.Evaluate():
                self.leaves[id(stmt)] = _Leaf(entries, descs)
            case _:
                for child in children(stmt):
                    self.visit(child, entries, descs, reason, tvars, loops)


def _flatten(seq: n.SeqStmt) -> list[tuple[n.SeqStmt, int, n.Stmt]]:
    """The statements of ``seq`` with each block or allocation around a sequence
    replaced by that sequence's statements: (the sequence holding it, its index, it)."""
    out = []
    for k, child in enumerate(seq.stmts):
        inner = child
        while isinstance(inner, (n.Block, n.Allocate)):
            inner = inner.body
        if isinstance(inner, n.SeqStmt) and inner.stmts:
            out += _flatten(inner)
        else:
            out.append((seq, k, child))
    return out


def _through(stmt: n.Stmt) -> n.Stmt:
    """``stmt`` without the blocks, allocations and lets around it."""
    while isinstance(stmt, (n.Block, n.Allocate, n.LetStmt, n.DeclBuffer)):
        stmt = stmt.body
    return stmt


_DIFF_BLOCK = "{ [b0, b1, b2, t0, t1, t2] -> [c0, c1, c2, u0, u1, u2] : " \
              "b0 != c0 or b1 != c1 or b2 != c2 }"
_SAME_BLOCK = "{ [b0, b1, b2, t0, t1, t2] -> [b0, b1, b2, u0, u1, u2] : " \
              "t0 != u0 or t1 != u1 or t2 != u2 }"
_DIFF_THREAD = "{ [b0, b1, b2, t0, t1, t2] -> [c0, c1, c2, u0, u1, u2] : b0 != c0 or " \
               "b1 != c1 or b2 != c2 or t0 != u0 or t1 != u1 or t2 != u2 }"


def _first_differ(length: int, level: int) -> isl.Map:
    """``{ [x] -> [y] : x[:level] = y[:level] and x[level] < y[level] }`` on ``length`` dims."""
    xs = ", ".join(f"x{k}" for k in range(length))
    ys = ", ".join(f"x{k}" if k < level else f"y{k}" for k in range(length))
    return isl.Map(f"{{ [{xs}] -> [{ys}] : x{level} < y{level} }}")


def plan_barriers(func: n.PrimFunc) -> BarrierPlan | Refuted:
    """Where ``func``'s kernels need ``cuda.syncthreads()``, or the race no barrier can
    order (see the module docstring).

    Raises :class:`~polypad.errors.BuildError` for a function the GPU cannot
    run at all (:func:`analyses.gpu_threads.structure`).
    """
    found = structure(func)
    plan = BarrierPlan(found)
    launch_of = found.launch_of()
    model = extract(func)
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
    timeline = _Timeline(launch)
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
    for s in statements:
        for d in statements:
            before = s.time.lex_lt_map(d.time)
            if before.is_empty():
                continue
            for a in s.accesses:
                for b in d.accesses:
                    if a.buffer is not b.buffer or (a.kind == "read" and b.kind == "read"):
                        continue
                    pairs = a.relation.apply_range(b.relation.reverse()).intersect(before)
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
                        return _evidence(why, race, coords, _private_text(scope))
                    if commute or scope == "local":  # commuting updates; a thread's own copy
                        continue
                    across = pairs.intersect(_relate(coords, s, d, same_block))
                    if across.is_empty():
                        continue
                    unordered = across.intersect(tau[s.name].lex_ge_map(tau[d.name]))
                    if not unordered.is_empty():
                        return _evidence(why, unordered, coords,
                                         "two threads of one block run them in either order: "
                                         "no barrier can order them as the serial program "
                                         "does")
                    refused = _requirements(timeline, length, tau, coords, s, d, across, why,
                                            intervals, wraps)
                    if refused is not None:
                        return refused
    order = BarrierOrder(timeline.leaves, tau, statements, length, coords)
    return _place(timeline, intervals, wraps, plan, coords, order)


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
    return coords[s.name].apply_range(axes).apply_range(coords[d.name].reverse())


def _private_text(scope: str) -> str:
    if scope == "local":
        return ("the element is in local memory, private to each thread, and two threads "
                "would need to share it")
    if scope == "shared":
        return ("the element is in shared memory, private to each block, and two blocks "
                "would need to share it")
    return "two blocks touch one element and blocks never wait for one another"


def _requirements(timeline, length, tau, coords, s, d, across, why, intervals, wraps):
    """Record where a barrier must go to order the pairs ``across``; an unorderable
    part (threads that differ inside one branch) is returned as evidence."""
    left_s, left_d = timeline.leaves[id(s.stmt)], timeline.leaves[id(d.stmt)]
    remaining = across
    for level in range(length):
        if remaining.is_empty():
            break
        step = tau[s.name].apply_range(_first_differ(length, level)).apply_range(
            tau[d.name].reverse())
        part = remaining.intersect(step)
        if part.is_empty():
            continue
        remaining = remaining.subtract(part)
        kind, node = left_s.descs[level]
        if kind == "if":
            return _evidence(why, part, coords, "two threads take different branches of "
                             f"`if {show(node.condition)}`, which no barrier can order")
        if kind == "seq":
            i, j = left_s.entries[level], left_d.entries[level]
            intervals.setdefault(id(node), []).append((i, j, (why, part),
                                                       (left_s, left_d, level)))
        else:  # a serial loop's counter: its body's container is the next level
            body_kind, body = left_s.descs[level + 1]
            assert body_kind == "seq"
            a, c = left_s.entries[level + 1], left_d.entries[level + 1]
            wraps.setdefault(id(body), []).append((a, c, (why, part),
                                                   (left_s, left_d, level + 1)))
    return None


def _place(timeline, intervals, wraps, plan: BarrierPlan, coords, order: BarrierOrder):
    # Deepest containers first: a barrier they need may order a pair of an outer one
    # too (a barrier at the start of an inner loop's body runs between the last
    # iteration of the outer loop and the next), which then needs none of its own.
    # Where the quick test (_served) finds no chosen barrier between a pair, isl
    # decides it exactly (analyses.gpu_barrier_order): a double-buffered tile read
    # in an inner loop's next to last step and overwritten by the next outer
    # iteration's prologue is ordered by the inner loop's barrier of the last step.
    depth = {key: paths[2] for group in (intervals, wraps) for key, entries in group.items()
             for *_, paths in entries}
    chosen_by: dict[int, set[int]] = {}
    for key in sorted(set(intervals) | set(wraps), key=lambda k: -depth[k]):
        container = timeline.containers[key]
        chosen = chosen_by.setdefault(key, set())
        for i, j, reason, paths in sorted(intervals.get(key, []), key=lambda x: x[1]):
            if not any(i < b <= j for b in chosen) and not _served(paths, chosen_by) \
                    and not _ordered(order, reason, chosen_by):
                chosen.add(j)
                if container.nonuniform is not None:
                    return _barrier_refused(container, reason, coords)
        for a, c, reason, paths in wraps.get(key, []):
            if not any(b > a or b <= c for b in chosen) and not _served(paths, chosen_by) \
                    and not _ordered(order, reason, chosen_by):
                chosen.add(0)
                if container.nonuniform is not None:
                    return _barrier_refused(container, reason, coords)
        for slot in chosen:
            owner, index = container.positions[slot]
            plan.slots.setdefault(id(owner), set()).add(index)
            plan.nodes[id(owner)] = owner
    return None


def _ordered(order: BarrierOrder, reason, chosen_by: dict[int, set[int]]) -> bool:
    """Whether the barriers chosen so far order every pair of ``reason`` (isl)."""
    (_, s, d, _, _), part = reason
    return order.orders(part, s.name, d.name, chosen_by)


def _served(paths, chosen_by: dict[int, set[int]]) -> bool:
    """Whether a barrier already chosen in a container deeper than the pair's own runs
    between the two: on the second's path, before it in its container (inside the
    iteration or branch the second runs in, so after the first), or on the first's
    path, after it (so before the second)."""
    first, second, level = paths
    for leaf, before in ((second, True), (first, False)):
        for m in range(level + 1, len(leaf.descs)):
            kind, node = leaf.descs[m]
            if kind != "seq":
                continue
            at = leaf.entries[m]
            if any((b <= at) if before else (b > at) for b in chosen_by.get(id(node), ())):
                return True
    return False


def _barrier_refused(container, reason, coords):
    why, part = reason
    return _evidence(why, part, coords,
                     f"they need a barrier between them, under {container.nonuniform}, "
                     "which not every thread of the block reaches")


def _evidence(why, pairs: isl.Map, coords, text: str) -> Counterexample:
    model, s, d, a, b = why
    point = inst.first_point(isl.UnionMap.from_map(pairs))
    values, params = inst.point_coordinates(point)
    k = s.domain.dim(isl.dim_type.set)
    pair = isl.Set.from_point(point).unwrap()
    src, dst = inst.instance(model, s, values[:k]), inst.instance(model, d, values[k:])
    threads = []
    for stmt, side in ((s, pair.domain()), (d, pair.range())):
        where = side.apply(coords[stmt.name]).sample_point()
        threads.append(thread_text(inst.point_coordinates(where)[0]))
    touched = pair.domain().apply(a.relation).intersect(pair.range().apply(b.relation))
    element_values = inst.point_coordinates(touched.sample_point())[0]
    element = Element(a.buffer.name, tuple(int(v) for v in element_values))
    verbs = {"write": "writes", "read": "reads"}
    description = (f"{src} on {threads[0]} {verbs[a.kind]} {element} and {dst} on "
                   f"{threads[1]} {verbs[b.kind]} it after it in the serial program, but "
                   f"{text}")
    return Counterexample(description, instances=(src, dst), element=element, params=params,
                          values={"first thread": threads[0], "second thread": threads[1]})


__all__ = ["BLOCK_AXES", "THREAD_AXES", "BarrierPlan", "plan_barriers"]
