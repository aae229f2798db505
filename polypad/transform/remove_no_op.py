"""``remove_no_op``: delete the statements that provably change nothing.

RFC 0077, "Enhancement - Remove No Op".  Before::

    T.assume(B[0] == 0.0)
    B[0] = 0.0
    for i in T.serial(16):
        B[0] = B[0] + A[i]

After::

    T.assume(B[0] == 0.0)
    for i in T.serial(16):
        B[0] = B[0] + A[i]

Each statement -- a store, or a whole loop, ``if``, block or sequence -- is
offered to :func:`analyses.is_no_op`, which decides the review's three
rules: a write overwritten before it is read (two stores to one element, a
block whose writes a later block covers), a write to memory freed before it
is read, and a write of the value already there (``B[0] = B[0]``, or a value
known through ``T.assume``).  Statements are tried outermost first and in
program order, so a dead loop goes as a whole.  A loop, ``if``, let or
block that a removal leaves empty goes too, and so does an allocation whose
last use it removed -- or that nothing ever used.

Why it is correct: a statement is removed only on ``Proved``, and every
question is asked of the function as it is after the removals before it,
because two statements can each be a no-op only thanks to the other (``A[0] = 1;
A[0] = 1``: the first is overwritten, the second rewrites the same value;
removing both would change ``A[0]``).  ``T.assume`` statements are never
removed.
"""

from __future__ import annotations

from polypad.budget import check as check_deadline
from polypad.errors import BudgetExceeded, PolypadError
from polypad.ir import nodes as n
from polypad.ir.intrinsics import is_call
from polypad.ir.removal import StatementRemover
from polypad.ir.views import root
from polypad.ir.visitor import walk

from ._budget import budgeted_pass

_CANDIDATES = (n.BufferStore, n.For, n.IfThenElse, n.Block, n.SeqStmt, n.LetStmt, n.Allocate)


@budgeted_pass
def remove_no_op(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` without the statements :func:`analyses.is_no_op` proves do nothing.

    Returns ``func`` itself when nothing is removed.

    >>> remove_no_op(f)   # drops `B[0] = 0.0` under T.assume(B[0] == 0.0)
    """
    from analyses.evidence import Proved
    from analyses.no_op import is_no_op

    func = _DropUnusedAllocations().visit(func)
    # Sweep in program order, asking each statement once about the function as it
    # is then; sweep again while a sweep removed something (a removal can make an
    # earlier statement dead, or keep a later one alive).
    # The leaves of the statements asked about since the function last changed
    # and not proved: a loop around them all, or the one statement inside it,
    # is the same question (is_no_op reads a statement's leaves only), so a
    # 64-deep nest around one store is asked about once, not 65 times.  The set
    # outlives a sweep: the next one asks about the same function until it
    # removes something, and only what changed since is a new question (the
    # statements after the last removal are not asked twice).
    undecided: set[tuple[int, ...]] = set()
    while True:
        removed = False
        for stmt in list(_candidates(func.body)):
            if removed and not _contains(func.body, stmt):
                continue  # inside a removed statement, or an ancestor of one (rebuilt)
            leaves = _leaves(stmt)
            if leaves in undecided:
                continue
            # Past the deadline no question is asked: is_no_op would spend a
            # little more each time before it noticed (a Z3 timeout is only
            # an Unknown), and the pass would overrun its budget by their sum.
            check_deadline()
            try:
                decision = is_no_op(func, stmt)
            except BudgetExceeded:
                raise  # the pass as a whole ran out: it returns func unchanged
            except PolypadError:
                decision = None  # e.g. a statement object that occurs twice
            if isinstance(decision, Proved):
                func = _Remove(stmt).visit(func)
                removed = True
                undecided.clear()
            else:
                undecided.add(leaves)
        if not removed:
            return func


def _candidates(body: n.Stmt):
    """Statements worth asking about, parents before children, in program order."""
    for node in walk(body):
        if not isinstance(node, _CANDIDATES):
            continue
        if any(isinstance(x, n.Evaluate) and is_call(x.value, "assume") for x in walk(node)):
            if not isinstance(node, n.BufferStore):
                # Removing a fact is never a no-op question; its siblings still are.
                continue
        yield node


class _Remove(StatementRemover):
    """Deletes one statement (by identity) and whatever that leaves empty."""

    def __init__(self, target: n.Stmt) -> None:
        self.target = target

    def visit(self, node):
        if node is self.target:
            return None
        return super().visit(node)

    def visit_Allocate(self, node: n.Allocate) -> n.Stmt | None:
        body = self.visit(node.body)
        if body is node.body or body is None:
            return node if body is not None else None
        if not _uses(body, node.buffer):
            return body  # the removal took the buffer's last use: drop the allocation
        return n.Allocate(node.buffer, body, span=node.span)


class _DropUnusedAllocations(StatementRemover):
    """Removes the allocations whose body never reads or writes their buffer."""

    def visit_Allocate(self, node: n.Allocate) -> n.Stmt | None:
        body = self.visit(node.body)
        if body is None or not _uses(body, node.buffer):
            return body
        return node if body is node.body else n.Allocate(node.buffer, body, span=node.span)


def _leaves(stmt: n.Stmt) -> tuple[int, ...]:
    """The stores and evaluations under ``stmt``, by identity: all is_no_op asks about."""
    return tuple(id(x) for x in walk(stmt) if isinstance(x, (n.BufferStore, n.Evaluate)))


def _contains(body: n.Stmt, stmt: n.Stmt) -> bool:
    return any(x is stmt for x in walk(body))


def _uses(stmt: n.Stmt, buffer: n.Buffer) -> bool:
    # Through a view too: an allocation read or declared again only as ``x_1 =
    # T.decl_buffer(..., data=x.data)`` is still in use.
    return any(isinstance(x, (n.BufferLoad, n.BufferStore, n.DeclBuffer))
               and root(x.buffer) is buffer for x in walk(stmt))
