"""``remove_branching_through_overcompute``: drop the conditionals that guard nothing.

RFC 0077, "New Primitive - Remove Branching Through Overcompute".  Before::

    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    for io, ii in T.grid(4, 4):
        if io == 3 and ii >= 2:
            B[io, ii] = 0.0

After (the padding is computed too, and overwritten by the pad values)::

    for io, ii in T.grid(4, 4):
        B[io, ii] = 0.0
        for f in T.serial(3):
            B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    for io, ii in T.grid(4, 4):
        if io == 3 and ii >= 2:
            B[io, ii] = 0.0

Each ``if`` is offered, outermost first and in program order, to
:func:`analyses.can_remove_conditional`, and replaced by the branch it names
when the answer is ``Proved`` (or by the ``replacement`` it carries: the
then branch with the indices that would leave their buffer wrapped modulo
its extent, :mod:`analyses.wrap_indices`).  Why it is correct: each question is asked of
the function as it is after the removals before it (two conditionals may
each be removable only while the other stays), and a removal happens only
on a proof that the kept branch does, where the condition fails, exactly
what ran there before (nothing, for an ``if`` without ``else``).

:func:`explain_branching_through_overcompute` runs the same pass and also
returns, for every conditional, whether it went and the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.arguments import expect, expect_budget
from polypad.budget import run_within
from polypad.errors import ArgumentValueError, BudgetExceeded, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry
from polypad.ir.locate import find_block
from polypad.ir.removal import StatementRemover
from polypad.ir.show import show
from polypad.ir.stages import flatten
from polypad.ir.visitor import walk
from polypad.model.block_bindings import widened_to_bindings
from polypad.model.float_semantics import FloatSemantics, float_semantics

from ._budget import budgeted_pass


@dataclass(frozen=True)
class ConditionalEntry:
    """One conditional of the input: its condition, whether it was removed, and why."""

    condition: str
    line: int | None
    removed: bool
    decision: object  # Proved | Refuted | Unknown

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        verdict = "removed" if self.removed else "kept"
        return f"{where}if {self.condition}: {verdict} ({self.decision})"


@dataclass(frozen=True)
class BranchingReport:
    """The rewritten function and one :class:`ConditionalEntry` per conditional."""

    func: n.PrimFunc
    entries: tuple[ConditionalEntry, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.entries) or "no conditionals"


@deep_entry
def explain_branching_through_overcompute(func: n.PrimFunc, *, block: str | None = None,
                                          strict_ieee: bool = False,
                                          sweeps: int | None = None,
                                          budget: float | None = None) -> BranchingReport:
    """:func:`remove_branching_through_overcompute`, with the evidence for each conditional.

    ``block`` limits the pass to the conditionals inside that block.
    ``sweeps`` stops after that many sweeps over the conditionals (``1``:
    each asked once, as the RFC's "part 1" does; ``None``: until a sweep
    removes nothing).  An ``if`` nested in a branch that a sweep replaced by
    its wrapped copy is a new node, first asked in the next sweep.  When the
    time budget runs out, the report holds ``func`` unchanged and, as always,
    one entry per conditional: each kept, its decision ``Unknown`` with the reason.
    """
    where = "explain_branching_through_overcompute"
    expect(func, n.PrimFunc, "func", where)
    expect(block, (str, None), "block", where, what="a block name (str) or None")
    _expect_sweeps(sweeps, where)
    expect_budget(budget, where)

    def gave_up(err) -> BranchingReport:
        # The same shape as an answer in time (one entry per conditional), so that a
        # caller never meets another structure because the machine was slow: nothing
        # was removed, and nothing decided before the deadline is kept either (the
        # removals it rested on are undone).
        from analyses.evidence import Unknown

        scope = find_block(func, block) if block is not None else func.body
        return BranchingReport(func, tuple(
            ConditionalEntry(show(stmt.condition), stmt.span.line if stmt.span else None,
                             False, Unknown(str(err), timed_out=True))
            for stmt in walk(scope) if isinstance(stmt, n.IfThenElse)))

    floats = float_semantics(strict_ieee)
    return run_within(budget, lambda: _explain(func, block, floats, sweeps), gave_up)


def _expect_sweeps(sweeps, where: str) -> None:
    expect(sweeps, (int, None), "sweeps", where, what="a positive int or None")
    if sweeps is not None and sweeps < 1:
        raise ArgumentValueError(f"{where}: sweeps must be at least 1, not {sweeps}")


def _explain(func: n.PrimFunc, block: str | None, floats: FloatSemantics,
             sweeps: int | None = None) -> BranchingReport:
    """Sweeps until one removes nothing: the result is a fixpoint of the pass.

    A removal can make another conditional removable (an ``if/else`` whose
    ``else`` equals its ``then`` only once a nested guard has gone), so the
    conditionals left are asked again.  Each sweep that goes on removed at
    least one, so there are at most as many sweeps as conditionals.  The
    report keeps one entry per conditional of the input, with its last
    decision, in the order of the first sweep.
    """
    names = _Names()
    entries: dict[tuple, ConditionalEntry] = {}
    done = 0
    while True:
        func, found = _sweep(func, block, floats, names)
        done += 1
        for key, entry in found:
            entries[key] = entry  # a later decision replaces the earlier one
        if not any(entry.removed for _, entry in found) or done == sweeps:
            return BranchingReport(func, tuple(entries.values()))


class _Names:
    """Which conditional of the input each ``if`` of a rewritten function is.

    A removal rebuilds the ``if`` statements around the one it removes
    (:class:`_Replace` reports them); every other node keeps its identity.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[n.IfThenElse, int]] = {}

    def of(self, stmt: n.IfThenElse) -> int:
        found = self._by_id.get(id(stmt))
        if found is not None and found[0] is stmt:
            return found[1]
        number = len(self._by_id)
        self._by_id[id(stmt)] = (stmt, number)
        return number

    def rebuilt(self, old: n.IfThenElse, new: n.IfThenElse) -> None:
        self._by_id[id(new)] = (new, self.of(old))


def _sweep(func: n.PrimFunc, block: str | None, floats: FloatSemantics, names: _Names):
    """One pass over the conditionals, outermost first, each asked of the function as
    the removals before it left it; returns the result and ``(key, entry)`` pairs."""
    from analyses.conditional import Removable, can_remove_conditional
    from analyses.proof_options import ProofOptions

    options = ProofOptions(floats=floats)

    scope = find_block(func, block) if block is not None else func.body
    entries: list[tuple[tuple, ConditionalEntry]] = []
    seen: dict[int, int] = {}  # a node shared by two places gives two entries
    for stmt in [x for x in walk(scope) if isinstance(x, n.IfThenElse)]:
        if not any(x is stmt for x in walk(func.body)):
            continue  # inside a branch that a removal dropped
        number = names.of(stmt)
        seen[number] = seen.get(number, -1) + 1
        line = stmt.span.line if stmt.span is not None else None
        try:
            decision = can_remove_conditional(func, stmt, options=options)
        except NotFoundError:
            continue
        except BudgetExceeded:
            raise
        except PolypadError as err:
            from analyses.evidence import Unknown

            decision = Unknown(str(err))
        removed = isinstance(decision, Removable)
        if removed:
            kept = decision.kept(stmt)
            if decision.replacement is not None:  # the branch with its indices wrapped
                for old, new in decision.rebuilt:
                    names.rebuilt(old, new)
            # A block now runs where its T.where (or a guard around it) was false: its
            # axes' domains hold the values their bindings take there.
            func = widened_to_bindings(_Replace(stmt, kept, names.rebuilt).visit(func), func)
        entries.append(((number, seen[number]),
                        ConditionalEntry(show(stmt.condition), line, removed, decision)))
    return func, entries


@budgeted_pass
def remove_branching_through_overcompute(func: n.PrimFunc, *, block: str | None = None,
                                         strict_ieee: bool = False,
                                         sweeps: int | None = None) -> n.PrimFunc:
    """``func`` with every conditional that :func:`analyses.can_remove_conditional` proves
    removable replaced by the branch it keeps (or by its then branch with the leaving
    indices wrapped, when that is what was proved).  Returns ``func`` itself when none is.
    ``sweeps`` as in :func:`explain_branching_through_overcompute`.

    >>> remove_branching_through_overcompute(f)   # `if 4*io + ii < 14:` goes (see above)
    """
    expect(block, (str, None), "block", "remove_branching_through_overcompute",
           what="a block name (str) or None")
    _expect_sweeps(sweeps, "remove_branching_through_overcompute")
    report = explain_branching_through_overcompute(func, block=block, strict_ieee=strict_ieee,
                                                   sweeps=sweeps)
    return report.func if any(e.removed for e in report.entries) else func


class _Replace(StatementRemover):
    """Replaces one statement (by identity) with ``new``, flattening sequences."""

    def __init__(self, target: n.Stmt, new: n.Stmt, rebuilt=None) -> None:
        self.target, self.new = target, new
        self.rebuilt = rebuilt  # called with (old, new) for each `if` rebuilt around it

    def visit(self, node):
        if node is self.target:
            return self.new
        out = super().visit(node)
        if (self.rebuilt is not None and out is not node and isinstance(node, n.IfThenElse)
                and isinstance(out, n.IfThenElse)):
            self.rebuilt(node, out)
        return out

    def visit_SeqStmt(self, node: n.SeqStmt) -> n.Stmt | None:
        out = super().visit_SeqStmt(node)
        if not isinstance(out, n.SeqStmt) or out is node:
            return out
        return n.SeqStmt(flatten(out.stmts), span=out.span)
