"""Schedule primitives: merge family.

``merge_adjacent_loops`` (RFC 0077, Utility - Merge Adjacent Loops) puts the
body of a loop after the body of the loop before it, in one loop::

    for i in T.serial(16):            for i in T.serial(16):
        A[i] = 0.0              ->        A[i] = 0.0
    for i in T.serial(16):                if i > 0:
        if i > 0:                             A[i] = A[i - 1] + 1.0
            A[i] = A[i - 1] + 1.0

The decider :func:`analyses.can_merge_loops` proves that no dependence is
reversed; a refusal raises :class:`IllegalTransformError` carrying the
counterexample (the two iterations and the element they meet at).
"""

from __future__ import annotations

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.substitute import substitute

from .layout_stages import seq
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
        from analyses import Proved, Refuted
        from analyses.merge import adjacent_loops, can_merge_loops

        f = self.func
        around, k = adjacent_loops(f, loop_a, loop_b)
        a, b = around.stmts[k], around.stmts[k + 1]
        decision = can_merge_loops(f, a, b)
        if not isinstance(decision, Proved):
            evidence = decision.counterexample if isinstance(decision, Refuted) else decision
            raise IllegalTransformError(
                f"merge_adjacent_loops: cannot merge the loops over {a.var.name} and "
                f"{b.var.name} in {f.name}: {decision}", evidence=evidence)
        merged = n.For(a.var, a.min, a.extent, a.kind, seq(a.body, _rebase(a, b)),
                       span=a.span)
        rest = (*around.stmts[:k], merged, *around.stmts[k + 2:])
        new_seq = rest[0] if len(rest) == 1 else n.SeqStmt(rest, span=around.span)
        return replace(f, around, new_seq)


def _rebase(a: n.For, b: n.For) -> n.Stmt:
    """``b``'s body with ``b``'s variable written in terms of ``a``'s."""
    if a.min == b.min:
        value = a.var
    elif isinstance(a.min, n.IntImm) and isinstance(b.min, n.IntImm):
        shift = b.min.value - a.min.value
        value = a.var + shift if shift > 0 else a.var - (-shift)
    else:
        value = a.var - a.min + b.min
    return substitute(b.body, {b.var: value})
