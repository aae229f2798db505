"""The loop-nest structure of a function: its leaf statements in context.

A *leaf* is a statement instance kind the model tracks: every
``BufferStore`` and every ``Evaluate(T.assume(...))``.  :func:`collect`
walks a function body once, in program order, and records for each leaf
the loops, ``if`` guards (with the branch taken), let bindings and block
around it, plus its sequence position at every loop level (for the 2d+1
schedule).  It also returns the tree of loops and leaves that the schedule
tree is built from.  ``Allocate``, ``Block``, ``LetStmt`` and ``SeqStmt``
are transparent; only loops open a new level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.ir import nodes as n
from polypad.ir.deep import guarded


@dataclass(frozen=True, eq=False)
class Guard:
    """An enclosing ``if``: its condition and whether the leaf is in the then-branch."""

    condition: n.Expr
    then: bool

    @property
    def holds(self) -> n.Expr:
        """The condition that holds at the leaf (``not c`` in an else-branch)."""
        return self.condition if self.then else n.Not(self.condition)


@dataclass(frozen=True, eq=False)
class Leaf:
    """One leaf statement and everything around it."""

    stmt: n.BufferStore | n.Evaluate
    loops: tuple[n.For, ...]
    guards: tuple[Guard, ...]
    lets: dict
    block: str | None
    position: tuple[int, ...]  # sequence position at each level, outer to inner

    @property
    def loop_vars(self) -> tuple[n.Var, ...]:
        return tuple(loop.var for loop in self.loops)


@dataclass(eq=False)
class LoopItem:
    """A loop in the item tree, with the loops and leaves of its body in order."""

    loop: n.For
    items: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class LeafItem:
    """A leaf in the item tree: its index in the leaf list."""

    index: int


def is_leaf(stmt: n.Stmt) -> bool:
    """True for the statements the model tracks as instances."""
    if isinstance(stmt, n.BufferStore):
        return True
    return (
        isinstance(stmt, n.Evaluate)
        and isinstance(stmt.value, n.Call)
        and stmt.value.op == "assume"
    )


def collect(body: n.Stmt) -> tuple[list[Leaf], list]:
    """The leaves of ``body`` in program order, and the top-level item list."""
    walker = _Walker()
    top: list = []
    walker.visit(body, top)
    return walker.leaves, top


class _Walker:
    def __init__(self) -> None:
        self.leaves: list[Leaf] = []
        self.loops: list[n.For] = []
        self.guards: list[Guard] = []
        self.lets: dict = {}
        self.block: str | None = None
        self.prefix: list[int] = []  # positions of the enclosing loops
        self.counters: list[int] = [0]  # next position at each level

    def take_position(self) -> int:
        pos = self.counters[-1]
        self.counters[-1] += 1
        return pos

    @guarded
    def visit(self, stmt: n.Stmt, items: list) -> None:
        match stmt:
            case n.SeqStmt(stmts=stmts):
                for s in stmts:
                    self.visit(s, items)
            case n.For():
                item = LoopItem(stmt)
                items.append(item)
                self.prefix.append(self.take_position())
                self.loops.append(stmt)
                self.counters.append(0)
                self.visit(stmt.body, item.items)
                self.counters.pop()
                self.loops.pop()
                self.prefix.pop()
            case n.IfThenElse(condition=c, then_case=then, else_case=other):
                self.guards.append(Guard(c, True))
                self.visit(then, items)
                self.guards.pop()
                if other is not None:
                    self.guards.append(Guard(c, False))
                    self.visit(other, items)
                    self.guards.pop()
            case n.LetStmt(var=var, value=value, body=body):
                self.lets[var] = value
                self.visit(body, items)
                del self.lets[var]
            case n.Block(name=name, body=body):
                outer, self.block = self.block, name
                self.visit(body, items)
                self.block = outer
            case n.Allocate(body=body):
                self.visit(body, items)
            case _ if is_leaf(stmt):
                position = (*self.prefix, self.take_position())
                items.append(LeafItem(len(self.leaves)))
                self.leaves.append(
                    Leaf(stmt, tuple(self.loops), tuple(self.guards), dict(self.lets),
                         self.block, position)
                )
            case _:
                pass  # Evaluate of a non-assume expression: no effect to model
