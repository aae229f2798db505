"""Where the barriers of a launch go: the gaps each ordered pair needs, and the fewest
barriers that fill them (:mod:`analyses.gpu_sync`).

A pair of instances on two threads of one block, the first before the second in
the block order, needs a barrier in the sequence where their block times first
differ (:func:`record_requirements`: a gap ``i < slot <= j`` of that sequence),
or, where they first differ in a serial loop's counter, at the start of that
loop's body (a wrap-around gap).  Where they first differ in an ``if``'s
branches, no barrier can order them.  :func:`place_barriers` then stabs the
intervals by their right ends, deepest containers first, into a
:class:`BarrierPlan`, skipping a pair that a
barrier already chosen orders (on either path, or, decided by isl,
:class:`analyses.gpu_barrier_order.BarrierOrder`); a barrier needed where not
every thread reaches it alike is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.show import show

from .gpu_barrier_order import BarrierOrder
from .gpu_isl_memo import remembered
from .gpu_race_evidence import race_evidence
from .gpu_threads import Structure


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


def first_differ(length: int, level: int) -> isl.Map:
    """``{ [x] -> [y] : x[:level] = y[:level] and x[level] < y[level] }`` on ``length`` dims."""
    xs = ", ".join(f"x{k}" for k in range(length))
    ys = ", ".join(f"x{k}" if k < level else f"y{k}" for k in range(length))
    return isl.Map(f"{{ [{xs}] -> [{ys}] : x{level} < y{level} }}")


def record_requirements(timeline, length, tau, coords, s, d, across, why, intervals, wraps):
    """Record where a barrier must go to order the pairs ``across``; an unorderable
    part (threads that differ inside one branch) is returned as evidence."""
    left_s, left_d = timeline.leaves[id(s.stmt)], timeline.leaves[id(d.stmt)]
    remaining = across
    texts = (str(tau[s.name]), str(tau[d.name]), str(length))
    for level in range(length):
        if remaining.is_empty():
            break
        # Depends on the two block times only: remembered across a schedule's binds.
        step = remembered("first differ", (*texts, str(level)),
                          lambda: tau[s.name].apply_range(  # noqa: B023 (called now)
                              first_differ(length, level)).apply_range(  # noqa: B023
                              tau[d.name].reverse()))
        part = remaining.intersect(step)
        if part.is_empty():
            continue
        remaining = remaining.subtract(part)
        kind, node = left_s.descs[level]
        if kind == "if":
            return race_evidence(why, part, coords, "two threads take different branches "
                                 f"of `if {show(node.condition)}`, which no barrier can order")
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


def place_barriers(timeline, intervals, wraps, plan: BarrierPlan, coords, order: BarrierOrder):
    """Add to ``plan`` the fewest barriers that order every recorded pair; a barrier
    needed where not every thread of the block reaches it is returned as evidence."""
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
    return race_evidence(why, part, coords,
                         f"they need a barrier between them, under {container.nonuniform}, "
                         "which not every thread of the block reaches")



__all__ = ["BarrierPlan", "first_differ", "place_barriers", "record_requirements"]
