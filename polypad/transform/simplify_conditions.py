"""Merging consecutive conditionals, for :mod:`.simplify` (RFC 0077, "Simplify").

Two adjacent ``if`` statements merge when their conditions are

* *identical* -- each implies the other where the known facts hold
  (``i < 8`` and ``i // 8 == 0`` for ``0 <= i < 16``): ``if c1: T1; T2
  else: E1; E2``;
* *complementary* -- each implies the other is false, and one of them always
  holds (``4*i + j < 14`` and ``i == 3 and j >= 2`` on a 4x4 grid): ``if
  c1: T1; E2 else: E1; T2``.

The first condition's form is kept.  ISL decides both relations, so only
affine conditions take part.  A condition that reads a buffer is never
merged, even with an identical one: the first body may write what the second
condition reads (RFC 0077's ``if A[i] < 0.0`` example).  Affine conditions
read only variables, which no statement can change, so evaluating the second
condition before the first body runs gives the same value.

A block that holds only an ``if`` without ``else`` takes part as that
``if``, with the block moved into its branch (:func:`as_conditional`):
``transform_layout`` puts its pad-value store in such a block, and RFC
0077's "explicit default" walkthrough merges it with the producer's guard::

    if 4 * io + ii < 14:                    if 4 * io + ii < 14:
        A[io, ii] = 1000 + (4 * io + ii)        A[io, ii] = 1000 + (4 * io + ii)
    with T.block("A_padding"):        ->    else:
        if 4 * io + ii >= 14:                   with T.block("A_padding"):
            A[io, ii] = 0                           A[io, ii] = 0

A block has no effect of its own (it runs its body), so ``with
T.block(B): if c: S`` and ``if c: with T.block(B): S`` run the same
statements at the same points, and the block keeps its name and all it
held.  A block around an ``if`` with ``else`` does not take part: its name
would have to go to both branches.
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.stages import sequence

from ._isl_context import IslFacts


def relation(facts: IslFacts, a: n.Expr, b: n.Expr, ctx: isl.Set) -> str | None:
    """``"identical"``, ``"complementary"`` or ``None`` for conditions ``a`` and ``b``."""
    sa, sb = facts.condition(a, ctx), facts.condition(b, ctx)
    if sa is None or sb is None:
        return None
    sa, sb = sa.intersect_params(ctx), sb.intersect_params(ctx)
    if sa.is_equal(sb):
        return "identical"
    if sa.intersect_params(sb).is_empty() and ctx.is_subset(sa.union(sb)):
        return "complementary"
    return None


def as_conditional(stmt: n.Stmt) -> n.IfThenElse | None:
    """``stmt`` as an ``if``: itself, or, for a block that holds only an ``if`` without
    ``else`` (possibly through further such blocks), that ``if`` with the block moved
    into its ``then`` branch.  ``None`` for anything else.

    >>> as_conditional(block)   # with T.block("P"): if c: S  ->  if c: with T.block("P"): S
    """
    match stmt:
        case n.IfThenElse():
            return stmt
        case n.Block(body=body):
            inner = as_conditional(body)
            if inner is None or inner.else_case is not None:
                return None
            block = dataclasses.replace(stmt, body=inner.then_case)
            return dataclasses.replace(inner, then_case=block)
    return None


def merge_pair(facts: IslFacts, first: n.Stmt, second: n.Stmt,
               ctx: isl.Set) -> n.Stmt | None:
    """The two conditionals (an ``if``, or a block :func:`as_conditional` sees as one)
    as one ``if``, or ``None`` when they may not be merged.

    Branches that are empty (``pass``) stay out of the merged ``if``: where
    every ``then`` part is empty it becomes ``if not c1: ...``, and where
    both branches are, an empty ``SeqStmt`` (nothing to run).
    """
    first, second = as_conditional(first), as_conditional(second)
    if first is None or second is None:
        return None
    kind = relation(facts, first.condition, second.condition, ctx)
    if kind is None:
        return None
    if kind == "identical":
        then_tail, else_tail = second.then_case, second.else_case
    else:
        then_tail, else_tail = second.else_case, second.then_case
    then = sequence(first.then_case, then_tail)
    other = sequence(first.else_case, else_tail)
    if then is None:
        if other is None:
            return n.SeqStmt((), span=first.span)
        return n.IfThenElse(n.Not(first.condition), other, None, span=first.span)
    return n.IfThenElse(first.condition, then, other, span=first.span)
