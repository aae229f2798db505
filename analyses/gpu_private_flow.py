"""Which conflicts on private GPU memory are races: only a value passed between copies.

On the GPU each thread has its own copy of a ``"local"`` buffer, and each
block its own copy of a ``"shared"`` one; the serial program has one array.
Two threads writing one element of a local buffer, or one reading it and
another overwriting it later, touch two copies, and no read sees anything
else than in the serial program.  What the GPU cannot do is hand a value from
one copy to another: a read whose value, in the serial program, was written
last by another thread (another block, for shared memory) finds its own
copy's value instead.  So the race is exactly the value-based flow from a
write to a read across copies -- the last write before each read, which
:func:`analyses.value_flow.value_flow` computes with isl -- and not every
conflicting pair.  (Nothing outlives a launch in those buffers, so no value
is read after the last write either.)

A read that finds nothing written in the serial program finds nothing on its
thread either, and both see the zeros of a fresh allocation: the ``cuda``
target fills such buffers with zeros (:mod:`analyses.gpu_shared_reads`).
"""

from __future__ import annotations

import islpy as isl

from polypad.model.isl_helpers import union_all

from .value_flow import value_flow


class PrivateFlow:
    """The serial program's value flow into each read of the buffers of one launch,
    computed once per read access (isl)."""

    def __init__(self, statements):
        self._statements = statements
        self._time: isl.UnionMap | None = None  # made at the first question: most plans ask none
        self._flows: dict[int, isl.UnionMap] = {}

    def _into(self, read) -> isl.UnionMap:
        """``write instance -> read instance`` for the read access ``read``: each instance
        of its statement, from the write its value comes from (may or must)."""
        found = self._flows.get(id(read))
        if found is None:
            writes = [a for s in self._statements for a in s.accesses
                      if a.kind == "write" and a.buffer is read.buffer]
            must = union_all(a.relation for a in writes if not a.may)
            may = union_all(a.relation for a in writes if a.may)
            sink = isl.UnionMap.from_map(read.relation)
            nothing = isl.UnionMap.empty(read.relation.get_space().params())
            if self._time is None:
                self._time = union_all(s.time for s in self._statements)
            found = value_flow(sink, must, may, nothing, self._time).may_dependence
            self._flows[id(read)] = found
        return found

    def races(self, conflicts: isl.Map, first, second) -> isl.Map:
        """The pairs of ``conflicts`` (instances of two statements on two copies, the
        first in serial order accessing with ``first``, the second with ``second``)
        that pass a value between copies: a write and a read taking its value from it."""
        if first.kind != "write" or second.kind != "read":
            return isl.Map.empty(conflicts.get_space())
        flow = self._into(second).extract_map(conflicts.get_space())
        return conflicts.intersect(flow)


__all__ = ["PrivateFlow"]
