"""Schedule primitives: merge family.

``merge_adjacent_loops`` (RFC 0077, Utility - Merge Adjacent Loops) puts the
body of a loop after the body of the loop before it, in one loop::

    for i in T.serial(16):            for i in T.serial(16):
        A[i] = 0.0              ->        A[i] = 0.0
    for i in T.serial(16):                if i > 0:
        if i > 0:                             A[i] = A[i - 1] + 1.0
            A[i] = A[i - 1] + 1.0

The decider :func:`analyses.can_merge_loops` proves that no dependence is
reversed (:func:`.legality.check_merge`; the rewrite is :mod:`.merge_loops`);
a refusal raises :class:`IllegalTransformError` carrying the
counterexample (the two iterations and the element they meet at).
"""

from __future__ import annotations

from polypad.ir import nodes as n

from .legality import check_merge
from .merge_loops import merge_adjacent
from .state import primitive


class MergePrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def merge_adjacent_loops(self, loop_a: n.For | str, loop_b: n.For | str) -> n.PrimFunc:
        """Merge serial loop ``loop_b`` into ``loop_a``, which it directly follows.

        Loops are ``For`` nodes of the current function or loop variable names
        (when both loops use one name, the adjacent pair of loops with that
        name).  ``loop_b``'s variable becomes ``loop_a``'s, shifted when their
        minimums differ.  Raises :class:`IllegalTransformError` with
        ``evidence`` the counterexample when merging would reverse a
        dependence (or the ``Unknown`` when that cannot be decided).
        """
        from analyses.merge import adjacent_loops

        f = self.func
        around, k = adjacent_loops(f, loop_a, loop_b)
        check_merge(f, around.stmts[k], around.stmts[k + 1])
        return merge_adjacent(f, around, k)
