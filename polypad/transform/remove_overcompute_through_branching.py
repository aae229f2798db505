"""``remove_overcompute_through_branching``: stop computing padding that is overwritten.

RFC 0077, "New Primitive - Remove Overcompute Through Branching", the
reverse of :mod:`.remove_branching_through_overcompute`.  Before::

    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0

After (``block="compute"``)::

    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if not (io == 3 and ii >= 2):
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        ...                                        # unchanged

The RFC's four steps, each a pass of its own, in :data:`STEPS`:

1. :func:`introduce_padding_conditionals` -- each store instance whose value
   a later pad-value store overwrites before anything reads it
   (:func:`analyses.padding_writes.pad_value_overwrites`, decided with ISL
   on the dataflow) stores the pad value instead:
   ``if io == 3 and ii >= 2: B[io, ii] = 0.0 else: <the store>``.
   Correct by the analysis: the values those instances wrote were never seen.
2. :func:`hoist_padding_conditionals` -- :func:`hoist_expression` of whole
   ``if`` conditions, then adjacent ``if`` statements with the same (or the
   complementary) affine condition merged, so that each pad-value branch
   holds a whole loop nest.  Both rewrites are correct on their own
   (see :mod:`.hoist_expression` and :mod:`.simplify_conditions`).
3. :func:`remove_padding_no_ops` -- :func:`analyses.is_no_op` removes the
   pad-value stores: the pad-value block overwrites them before any read.
   Only statements made of stores of known values are asked about (what
   step 1 introduced; never a store that computes), each of the whole
   function as it then is, as in :mod:`.remove_no_op`.
4. :func:`simplify_padding_conditionals` -- :func:`simplify` folds what the
   steps left (a condition the loop ranges decide, branches that became
   equal).  The RFC's step 4 spells ``if c: pass else: body`` as
   ``if io < 3 or (io == 3 and ii < 2): body``; here step 3 already leaves
   ``if not (io == 3 and ii >= 2): body``, the same set of iterations.

With ``block``, every step changes only that block: step 1 rewrites its
stores, steps 2 and 4 run on the block alone (as a function whose body is
the block, so they know less, never something false), step 3 removes only
statements inside it, asking about the whole function.  When step 1 finds
nothing, the pass returns ``func`` itself, untouched by steps 2-4.

>>> for step in STEPS:                   # the same as remove_overcompute_through_branching
...     f = step(f, block="compute")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from polypad.arguments import expect
from polypad.budget import check as check_deadline
from polypad.errors import BudgetExceeded, PolypadError
from polypad.ir import nodes as n
from polypad.ir.intrinsics import is_call
from polypad.ir.locate import find_block, replace
from polypad.ir.removal import StatementRemover, no_op
from polypad.ir.visitor import Rewriter, children

from ._budget import budgeted_pass
from ._isl_context import IslFacts
from .hoist_expression import HoistedConditionals, HoistedLetBindings, hoist_expression
from .simplify import simplify
from .simplify_conditions import merge_pair, sequence

# ---------------------------------------------------------------- step 1


@budgeted_pass
def introduce_padding_conditionals(func: n.PrimFunc, *, block: str | None = None
                                   ) -> n.PrimFunc:
    """Step 1: ``if P: B[...] = <pad value> else: <store>`` around each store of the
    target (``func``, or its block ``block``) that computes, where ``P`` holds, a value a
    later pad-value store overwrites before any read.  Returns ``func`` when there is none.

    >>> introduce_padding_conditionals(f, block="compute")   # RFC 0077, step 1
    """
    from analyses.padding_writes import pad_value_overwrites

    _check_block(block, "introduce_padding_conditionals")
    found = pad_value_overwrites(func, block)
    if not found.stores:
        return func
    new: dict[int, n.Stmt] = {}
    for entry in found.stores:
        store = entry.store
        out: n.Stmt = store
        for case in reversed(entry.cases):
            padded = n.BufferStore(store.buffer, case.value, store.indices, span=store.span)
            if isinstance(case.condition, n.BoolImm) and case.condition.value:
                out = padded
            else:
                out = n.IfThenElse(case.condition, padded, out, span=store.span)
        new[id(store)] = out
    return _Substitute(new).visit(func)


class _Substitute(Rewriter):
    """Replaces statements by identity (``id`` -> new statement)."""

    def __init__(self, new: dict[int, n.Stmt]) -> None:
        self.new = new

    def visit(self, node):
        found = self.new.get(id(node))
        return found if found is not None else super().visit(node)

    def visit_Expr(self, node: n.Expr) -> n.Expr:
        return node


# ---------------------------------------------------------------- step 2


@budgeted_pass
def hoist_padding_conditionals(func: n.PrimFunc, *, block: str | None = None) -> n.PrimFunc:
    """Step 2: hoist whole ``if`` conditions out of the loops they do not depend on, then
    merge adjacent ``if`` statements with the same or complementary affine condition.

    >>> hoist_padding_conditionals(f, block="compute")   # RFC 0077, step 2
    """
    _check_block(block, "hoist_padding_conditionals")

    def hoist(sub: n.PrimFunc) -> n.PrimFunc:
        hoisted = hoist_expression(sub, conditionals=HoistedConditionals.IF_ELSE_STMT,
                                   let_bindings=HoistedLetBindings.NONE)
        return _MergeAdjacent().visit(hoisted)

    return _on_target(func, block, hoist)


class _MergeAdjacent(Rewriter):
    """Merges adjacent conditionals (:func:`.simplify_conditions.merge_pair`), innermost
    first; a merge's branches are merged again, since they may now hold neighbours."""

    def __init__(self) -> None:
        self.facts = IslFacts()

    def visit_Expr(self, node: n.Expr) -> n.Expr:
        return node

    def visit_SeqStmt(self, node: n.SeqStmt) -> n.Stmt:
        stmts = [self.visit(s) for s in node.stmts]
        out: list[n.Stmt] = []
        for s in stmts:
            if out and isinstance(s, n.IfThenElse) and isinstance(out[-1], n.IfThenElse):
                merged = merge_pair(self.facts, out[-1], s, self.facts.universe)
                if merged is not None:
                    out[-1] = self.visit(merged)
                    continue
            out.append(s)
        if len(out) == len(node.stmts) and all(a is b for a, b in zip(out, node.stmts)):
            return node
        merged = sequence(*out)
        # A statement is still needed where the merges left nothing to run.
        return n.SeqStmt((), span=node.span) if merged is None else merged


# ---------------------------------------------------------------- step 3

_CANDIDATES = (n.BufferStore, n.For, n.IfThenElse, n.Block, n.SeqStmt, n.LetStmt, n.Allocate)


@budgeted_pass
def remove_padding_no_ops(func: n.PrimFunc, *, block: str | None = None) -> n.PrimFunc:
    """Step 3: remove the pad-value stores of the target that :func:`analyses.is_no_op`
    proves change nothing -- after step 2, the branches a pad-value block overwrites.

    :func:`.remove_no_op`, asked only about statements inside ``block`` (the block
    itself stays, emptied if it must be) made only of stores of known values
    (constants and scalar parameters): what step 1 introduced, and nothing the
    user wrote that computes.

    >>> remove_padding_no_ops(f, block="compute")   # RFC 0077, step 3
    """
    from analyses.evidence import Proved
    from analyses.no_op import is_no_op

    _check_block(block, "remove_padding_no_ops")
    while True:
        removed = False
        for stmt in list(_no_op_candidates(func, _target(func, block))):
            if removed and not any(x is stmt for x in _statements(func.body)):
                continue  # inside a removed statement, or an ancestor of one (rebuilt)
            check_deadline()  # past it, no question is asked (as remove_no_op)
            try:
                decision = is_no_op(func, stmt)
            except BudgetExceeded:
                raise  # the pass returns its input: never half a rewrite
            except PolypadError:
                decision = None  # e.g. a statement object that occurs twice
            if isinstance(decision, Proved):
                func = _Remove(stmt, block).visit(func)
                removed = True
        if not removed:
            return func


def _no_op_candidates(func: n.PrimFunc, scope: n.Stmt):
    """Statements under ``scope`` (not ``scope`` itself) whose stores all store known
    values, parents first, in program order."""
    from analyses.padding_writes import known_value

    for node in _statements(scope):
        if node is scope or not isinstance(node, _CANDIDATES):
            continue
        inside = list(_statements(node))  # not the expressions: a long sum is long
        stores = [x for x in inside if isinstance(x, n.BufferStore)]
        if not stores or not all(known_value(x.value, func) for x in stores):
            continue
        if any(isinstance(x, n.Evaluate) and is_call(x.value, "assume") for x in inside):
            continue  # removing a fact is never a no-op question
        yield node


def _statements(stmt: n.Stmt):
    """The statements under (and including) ``stmt``, parents first, in program order."""
    stack = [stmt]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed([c for c in children(current) if isinstance(c, n.Stmt)]))


class _Remove(StatementRemover):
    """Deletes one statement (by identity) and what that empties, but never block ``keep``."""

    def __init__(self, target: n.Stmt, keep: str | None) -> None:
        self.target, self.keep = target, keep

    def visit(self, node):
        if node is self.target:
            return None
        return super().visit(node)

    def visit_Block(self, node: n.Block) -> n.Stmt | None:
        body = self.visit(node.body)
        if body is None and node.name == self.keep:
            return dataclasses.replace(node, body=no_op())
        if body is None:
            return None
        return node if body is node.body else dataclasses.replace(node, body=body)


# ---------------------------------------------------------------- step 4


@budgeted_pass
def simplify_padding_conditionals(func: n.PrimFunc, *, block: str | None = None
                                  ) -> n.PrimFunc:
    """Step 4: :func:`simplify` the target (the block alone, when ``block`` is given).

    >>> simplify_padding_conditionals(f, block="compute")   # RFC 0077, step 4
    """
    _check_block(block, "simplify_padding_conditionals")
    return _on_target(func, block, simplify)


# ---------------------------------------------------------------- the pass

#: The RFC's four steps, in order; each is ``step(func, *, block=None) -> PrimFunc``.
STEPS: tuple[Callable[..., n.PrimFunc], ...] = (
    introduce_padding_conditionals,
    hoist_padding_conditionals,
    remove_padding_no_ops,
    simplify_padding_conditionals,
)


@budgeted_pass
def remove_overcompute_through_branching(func: n.PrimFunc, *, block: str | None = None
                                         ) -> n.PrimFunc:
    """``func`` computing nothing, in ``block`` (or anywhere), that a later pad-value store
    overwrites unread: the four :data:`STEPS`.  Returns ``func`` when step 1 finds nothing.

    >>> remove_overcompute_through_branching(f, block="compute")   # see the module docstring
    """
    _check_block(block, "remove_overcompute_through_branching")
    out = introduce_padding_conditionals(func, block=block)
    if out is func:
        return func
    for step in STEPS[1:]:
        out = step(out, block=block)
    return out


# ---------------------------------------------------------------- scope


def _check_block(block, where: str) -> None:
    expect(block, (str, None), "block", where, what="a block name (str) or None")


def _target(func: n.PrimFunc, block: str | None) -> n.Stmt:
    return func.body if block is None else find_block(func, block)


def _on_target(func: n.PrimFunc, block: str | None,
               rewrite: Callable[[n.PrimFunc], n.PrimFunc]) -> n.PrimFunc:
    """``rewrite`` applied to ``func``, or to block ``block`` alone, as the body of a
    function with ``func``'s parameters, and put back in place.

    Sound for a rewrite that is correct for any function: the block's
    surroundings only add facts that it then does not use.
    """
    if block is None:
        return rewrite(func)
    target = find_block(func, block)
    sub = dataclasses.replace(func, body=target)
    out = rewrite(sub)
    if out is sub:
        return func
    body = out.body
    if not (isinstance(body, n.Block) and body.name == block):
        body = dataclasses.replace(target, body=body)
    return replace(func, target, body)
