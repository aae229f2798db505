"""The loop-nest structure of a function: its leaf statements in context.

A *leaf* is a statement instance kind the model tracks: every
``BufferStore``, every ``Evaluate(T.assume(...))`` and every ``assert`` on
scalar values (:func:`polypad.ir.opaque.is_plain_check`: a check that may
raise, ordered against every store by :mod:`analyses.dataflow`).  :func:`collect`
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
from polypad.ir.opaque import is_plain_check
from polypad.ir.views import root
from polypad.ir.visitor import walk


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

    stmt: n.BufferStore | n.Evaluate | n.Assert
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


def _uses(leaf: Leaf, var: n.Var) -> bool:
    """Whether ``leaf`` may read ``var``: in its statement, guards, loops or lets."""
    around = [leaf.stmt, *(g.condition for g in leaf.guards), *leaf.lets.values(),
              *(e for x in leaf.loops for e in (x.min, x.extent))]
    return any(x is var for e in around for x in walk(e))


def is_leaf(stmt: n.Stmt) -> bool:
    """True for the statements the model tracks as instances."""
    if isinstance(stmt, n.BufferStore) or is_plain_check(stmt):
        return True
    return (
        isinstance(stmt, n.Evaluate)
        and isinstance(stmt.value, n.Call)
        and stmt.value.op == "assume"
    )


def collect(body: n.Stmt, reread: list | None = None) -> tuple[list[Leaf], list]:
    """The leaves of ``body`` in program order, and the top-level item list.

    ``reread``, when given, receives ``(stmt, expr, store)`` for each ``if``
    condition or let value ``expr`` of ``stmt`` that the leaves would read
    after ``store`` of its body may have changed it (see
    :meth:`_Walker.check_read_once`).
    """
    walker = _Walker()
    top: list = []
    walker.visit(body, top)
    if reread is not None:
        reread.extend(walker.reread)
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
        # (statement, expression, store) where the model's reading is not exact:
        # see :meth:`check_read_once`.
        self.reread: list[tuple[n.Stmt, n.Expr, n.BufferStore]] = []

    def check_read_once(self, stmt: n.Stmt, expr: n.Expr, first: int,
                        var: n.Var | None = None) -> None:
        """Record where ``expr`` (an ``if`` condition or a let value, read once when
        ``stmt`` runs) may read what a store of its body wrote before.

        The model reads such an expression at every leaf under ``stmt``, each
        at the leaf's own time.  That is the executed value unless a store of
        the body, to a buffer ``expr`` loads, runs before another leaf of the
        same execution of ``stmt``: when it is not the last leaf of the body,
        or sits in a loop inside it.  A let's value (``var``) is read only at
        the leaves that use ``var``: a store with no such leaf after it (TVM's
        ``v0 = ...; v1 = ...; X[i] = v0; Y[i] = v1``) reads it as executed.
        """
        # By the memory a buffer names, not by the buffer: a store through a view
        # (``A_1 = T.decl_buffer(..., data=A.data)``) changes what a load of ``A`` reads.
        read = {id(root(x.buffer)) for x in walk(expr) if isinstance(x, n.BufferLoad)}
        if not read:
            return
        inside = self.leaves[first:]
        for k, leaf in enumerate(inside):
            store = leaf.stmt
            if not (isinstance(store, n.BufferStore) and id(root(store.buffer)) in read):
                continue
            in_loop = len(leaf.loops) > len(self.loops)
            if var is not None and not in_loop and not any(
                    _uses(x, var) for x in inside[k + 1:]):
                continue
            if k != len(inside) - 1 or in_loop:
                self.reread.append((stmt, expr, store))
                return

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
                # Both branches at once: the model reads ``c`` again at each else
                # leaf, after the then branch's stores (they are one execution).
                first = len(self.leaves)
                for branch, taken in ((then, True), (other, False)):
                    if branch is None:
                        continue
                    self.guards.append(Guard(c, taken))
                    self.visit(branch, items)
                    self.guards.pop()
                self.check_read_once(stmt, c, first)
            case n.LetStmt(var=var, value=value, body=body):
                first = len(self.leaves)
                self.lets[var] = value
                self.visit(body, items)
                del self.lets[var]
                self.check_read_once(stmt, value, first, var)
            case n.Block(name=name, body=body):
                outer, self.block = self.block, name
                self.visit(body, items)
                self.block = outer
            case n.Allocate(body=body) | n.DeclBuffer(body=body):
                # A view's accesses are its memory owner's (accesses.py, views.py).
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
