"""Schedule primitives: overcompute and branching (RFC 0077).

``remove_branching_through_overcompute`` drops the conditionals whose
overcompute is harmless (:mod:`polypad.transform.remove_branching_through_overcompute`)::

    for io, ii in T.grid(4, 4):                  for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:                 ->      B[io, ii] = 0.0
            B[io, ii] = 0.0                          for f in T.serial(3):
            for f in T.serial(3):                        B[io, ii] = B[io, ii] + ...
                B[io, ii] = B[io, ii] + ...
    (then B_pad_value writes 0.0 where io == 3 and ii >= 2)

``reduce_overcompute_through_branching`` is the reverse: the padding that a
later pad-value block overwrites is no longer computed
(:mod:`polypad.transform.remove_overcompute_through_branching`); from the
right-hand side above it gives back ``if not (io == 3 and ii >= 2): ...``.

A user who calls a primitive on a block expects it to do something, so
both refuse, rather than silently do nothing, when nothing can change:
:class:`IllegalTransformError` whose ``evidence`` is the reason for the
first thing kept -- the counterexample of the first conditional that stays
(or the ``Unknown``), or the store instance whose value is read before a
pad value overwrites it.  This is what ``merge_adjacent_loops`` does.  When
some conditionals go and others stay, the primitive succeeds;
:func:`polypad.transform.explain_branching_through_overcompute` reports
each.
"""

from __future__ import annotations

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n

from .state import primitive


class OvercomputePrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def remove_branching_through_overcompute(self, block: str | n.Block | None = None,
                                             strict_ieee: bool = False) -> n.PrimFunc:
        """Replace each conditional in ``block`` (or anywhere, for ``None``) by the branch
        that may run everywhere, where :func:`analyses.can_remove_conditional` proves it.

        With ``strict_ieee`` values are IEEE floats (``0 * x`` is not 0 when ``x`` may
        be ``inf``).  Raises :class:`IllegalTransformError` when no conditional can
        go; its ``evidence`` is the first conditional's counterexample (or ``Unknown``).

        >>> sch.remove_branching_through_overcompute("compute")
        """
        from analyses.evidence import Counterexample, Refuted
        from polypad.transform import explain_branching_through_overcompute

        where = "remove_branching_through_overcompute"
        block = block.name if isinstance(block, n.Block) else block
        f = self.func
        report = explain_branching_through_overcompute(f, block=block,
                                                       strict_ieee=strict_ieee)
        if any(e.removed for e in report.entries):
            return report.func
        scope = f"block {block!r}" if block is not None else f"function {f.name}"
        if not report.entries:
            raise IllegalTransformError(f"{where}: {scope} holds no conditional",
                                        evidence=Counterexample(f"{scope} holds no conditional"))
        first = report.entries[0]
        decision = first.decision
        evidence = decision.counterexample if isinstance(decision, Refuted) else decision
        raise IllegalTransformError(
            f"{where}: no conditional of {scope} can be removed; the first stays: {first}",
            evidence=evidence)

    @primitive
    def reduce_overcompute_through_branching(self, block: str | n.Block | None = None
                                             ) -> n.PrimFunc:
        """Stop computing, in ``block`` (or anywhere, for ``None``), the values that a
        later pad-value store overwrites before anything reads them (RFC 0077's four
        steps: introduce conditionals, hoist, remove no-ops, simplify).

        Raises :class:`IllegalTransformError` when there is no such value; its
        ``evidence`` is the counterexample of
        :func:`analyses.padding_writes.pad_value_overwrites` (a store instance whose
        value is read before a pad value overwrites it, or that nothing overwrites).

        >>> sch.reduce_overcompute_through_branching("compute")
        """
        from analyses.evidence import Proved, Refuted, Unknown
        from analyses.padding_writes import pad_value_overwrites
        from polypad.transform import remove_overcompute_through_branching

        where = "reduce_overcompute_through_branching"
        block = block.name if isinstance(block, n.Block) else block
        f = self.func
        out = remove_overcompute_through_branching(f, block=block)
        if out is not f:
            return out
        decision = pad_value_overwrites(f, block).decision
        if isinstance(decision, Proved):  # found, but the pass ran out of its time budget
            decision = Unknown("the time budget ran out before the rewrite was done")
        evidence = decision.counterexample if isinstance(decision, Refuted) else decision
        scope = f"block {block!r}" if block is not None else f"function {f.name}"
        raise IllegalTransformError(
            f"{where}: {scope} computes nothing that a pad value overwrites unread: "
            f"{decision}", evidence=evidence)
