"""The block time of a launch: where every thread of a block is, in the order all
of them follow, and the sequences a barrier can go into.

The *block order* is program order with the thread loops' counters left out:
every thread of a block runs its statements in it (:mod:`analyses.gpu_sync`).
:class:`Timeline` gives each leaf statement of one launch its block time -- a
list of sequence positions, serial loop counters and branch sides, with what
each entry is (:class:`TimedLeaf`) -- and each sequence or serial loop body a
barrier can go into its slots (:class:`Container`), with the reason, if any,
why not every thread of the block reaches it alike (a condition, a loop bound
or a guarded thread loop that depends on the thread).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk
from polypad.model.affine import as_space, condition_set

from .gpu_threads import THREAD_AXES, Launch, children, is_bound


@dataclass
class Container:
    """A sequence (or a serial loop's body that is no sequence) a barrier can go into."""

    node: n.Stmt
    #: Where slot ``k`` is in the IR: (a ``SeqStmt`` and the index of the statement the
    #: barrier goes before, its length for after the last; or a loop and 0 or 1).
    positions: list[tuple[n.Stmt, int]]
    nonuniform: str | None  # why not every thread of a block reaches it alike


@dataclass
class TimedLeaf:
    """A leaf statement's block time and what each of its entries is."""

    entries: list  # ints and loop Vars: the block time
    descs: list  # per entry: ("seq", container node) | ("loop", For) | ("if", IfThenElse)


class Timeline:
    """The block time of every leaf statement of one launch, and its containers."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.leaves: dict[int, TimedLeaf] = {}
        self.containers: dict[int, Container] = {}
        self.visit(launch.root, [], [], None, frozenset(), ())

    def varies(self, cond: n.Expr, loops: tuple, tvars, free: tuple = ()) -> bool:
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
        # ``free``: variables of ``cond`` in no loop of ``loops`` (a loop's own counter,
        # whose bounds are the question: no box of them, which would make them hold).
        space = as_space([loop.var for loop in loops] + list(free))
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
                self.containers[id(stmt)] = Container(stmt, positions, reason)
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
                               loops, tvars, free=(stmt.var,)):
                    tvars = tvars | {stmt.var}
                    if reason is None:
                        reason = (f"loop {stmt.var.name!r}, whose bounds depend on the "
                                  "thread")
                entries, descs = entries + [stmt.var], descs + [("loop", stmt)]
                if isinstance(_through(stmt.body), n.SeqStmt):
                    self.visit(stmt.body, entries, descs, reason, tvars, inside)
                else:
                    self.containers[id(stmt)] = Container(stmt, [(stmt, 0), (stmt, 1)],
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
            case n.BufferStore() | n.Evaluate() | n.Assert():  # the model's leaves
                self.leaves[id(stmt)] = TimedLeaf(entries, descs)
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



__all__ = ["Container", "TimedLeaf", "Timeline"]
