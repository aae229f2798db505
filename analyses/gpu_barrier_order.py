"""Whether the barriers already placed order two instances of a launch, decided with isl.

Every thread of a block reaches the same barriers in the same order (the
barrier plan refuses one that some thread would skip), in *block order*:
program order with the thread loops' counters left out
(:mod:`analyses.gpu_sync`).  A barrier at slot ``k`` of a sequence whose
statements have block times ``(p..., j, ...)`` runs, at each prefix ``p``
where that sequence runs, at block time ``(p..., k)``: after every instance
whose time truncated to that length is lexicographically smaller, before
every instance whose truncated time is at least that.  So an instance ``x``
(on any thread) and a later one ``y`` (on any other thread of the block) are
ordered exactly when some barrier instance ``b`` that runs satisfies
``T(x) < b <= T(y)`` (the times truncated to ``b``'s length).

:class:`BarrierOrder` answers that for a whole relation of pairs at once:
the pairs no chosen barrier separates are ``part`` minus the union over
the chosen barriers of ``{x -> y : exists b run, T(x) < b <= T(y)}``.
Where a barrier runs is where its sequence runs, read from the loops and
conditions around the sequence (:func:`analyses.gpu_barrier_runs.sequence_runs`),
so that a barrier after a statement under ``if k == 1`` runs at ``k == 0``
too; where one of those conditions cannot be read exactly, it is
under-approximated by where some statement of the sequence runs (the sequence
ran there, so did the barrier): a pair is never called ordered by a barrier
that may not run.  Where is a block time *and a block*: a sequence under
``if bx == 1`` runs in block 1 only, so its barrier orders nothing in block 0,
though block 0 passes the same block times.

:mod:`analyses.gpu_sync` asks this only where its quick structural test
(a barrier in the same gap, or deeper on one of the two paths) finds none:
a double-buffered tile's readers in the last steps of an inner loop and the
next outer iteration's prologue are ordered by the inner loop's barrier of
the step after them, which that test cannot see.
"""

from __future__ import annotations

import islpy as isl

from .gpu_barrier_runs import sequence_runs


class BarrierOrder:
    """The block times of one launch's statements, and the barriers that order them.

    ``leaves`` maps ``id(stmt)`` to the timeline leaf (its ``descs``: per entry
    of the block time, ``("seq", container)``, ``("loop", For)`` or ``("if",
    IfThenElse)``); ``tau`` maps a statement name to its block time map (all
    of length ``length``); ``statements`` are the model statements of the
    launch; ``coords`` maps a statement name to the thread that runs each instance
    (:func:`analyses.gpu_threads.coordinates`).
    """

    def __init__(self, leaves: dict, tau: dict[str, isl.Map], statements, length: int,
                 coords: dict[str, isl.Map]):
        self.tau, self.length = tau, length
        #: Each statement's instance -> its block (the thread's block indices).
        self._block = {name: where.project_out(isl.dim_type.out, 3, 3)
                       for name, where in coords.items()}
        self._members: dict[int, tuple[int, list[str]]] = {}
        #: A statement of each sequence and its timeline leaf, to read the path from.
        self._witness: dict[int, tuple] = {}
        for s in statements:
            leaf = leaves[id(s.stmt)]
            for level, (kind, node) in enumerate(leaf.descs):
                if kind == "seq":
                    self._members.setdefault(id(node), (level, []))[1].append(s.name)
                    self._witness.setdefault(id(node), (s, leaf))
        self._runs: dict[tuple[int, int], isl.Set] = {}
        self._prefixes: dict[int, isl.Set] = {}  # where each container runs

    def _stamp(self, name: str, size: int) -> isl.Map:
        """Instance -> [its block's three indices, its block time's first ``size``]."""
        tau = self.tau[name].project_out(isl.dim_type.out, size, self.length - size)
        return self._block[name].flat_range_product(tau)

    def _barrier_times(self, key: int, slot: int) -> tuple[int, isl.Set] | None:
        """The blocks and block times, of length ``level + 1``, at which the barrier at
        ``slot`` of the container ``key`` runs (where the container runs, or at least
        where some statement of it runs): a set of [block indices, time]."""
        member = self._members.get(key)
        if member is None:
            return None
        level, names = member
        found = self._runs.get((key, slot))
        if found is None:
            prefixes = self._prefixes.get(key)
            if prefixes is None:
                s, leaf = self._witness[key]
                prefixes = sequence_runs(s, leaf.entries, leaf.descs, level)
                for name in names:
                    reached = self._stamp(name, level).range()
                    prefixes = reached if prefixes is None else prefixes.union(reached)
                self._prefixes[key] = prefixes
            space = prefixes.get_space()
            slot_set = isl.Set.universe(isl.Space.set_alloc(space.get_ctx(), 0, 1))
            slot_set = slot_set.fix_val(isl.dim_type.set, 0, isl.Val.int_from_si(
                space.get_ctx(), slot))
            found = prefixes.flat_product(slot_set)
            self._runs[(key, slot)] = found
        return level + 1, found

    def orders(self, part: isl.Map, first: str, second: str,
               chosen: dict[int, set[int]]) -> bool:
        """Whether every pair of ``part`` (instances of statement ``first`` to instances
        of ``second``) has a barrier of ``chosen`` (container key -> slots) between
        them in block order."""
        remaining = part
        for key, slots in chosen.items():
            for slot in slots:
                found = self._barrier_times(key, slot)
                if found is None:
                    continue
                size, times = found
                ctx = times.get_ctx()
                # The same block, an earlier (a later or equal) block time.
                same = isl.Map.identity(isl.Space.map_from_set(isl.Space.set_alloc(ctx, 0, 3)))
                space = isl.Space.set_alloc(ctx, 0, size)
                earlier = same.flat_product(isl.Map.lex_lt(space))
                later = same.flat_product(isl.Map.lex_ge(space))
                after = self._stamp(first, size).apply_range(earlier).intersect_range(times)
                before = self._stamp(second, size).apply_range(later).intersect_range(times)
                remaining = remaining.subtract(after.apply_range(before.reverse()))
                if remaining.is_empty():
                    return True
        return False


__all__ = ["BarrierOrder"]
