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
"""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n

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


def merge_pair(facts: IslFacts, first: n.IfThenElse, second: n.IfThenElse,
               ctx: isl.Set) -> n.IfThenElse | None:
    """The two conditionals as one, or ``None`` when they may not be merged."""
    kind = relation(facts, first.condition, second.condition, ctx)
    if kind is None:
        return None
    if kind == "identical":
        then_tail, else_tail = second.then_case, second.else_case
    else:
        then_tail, else_tail = second.else_case, second.then_case
    then = sequence(first.then_case, then_tail)
    other = sequence(first.else_case, else_tail)
    return n.IfThenElse(first.condition, then, other, span=first.span)


def sequence(*stmts: n.Stmt | None) -> n.Stmt | None:
    """The statements in order, flattened, with ``None`` left out."""
    flat: list[n.Stmt] = []
    for s in stmts:
        if s is None:
            continue
        flat.extend(s.stmts if isinstance(s, n.SeqStmt) else (s,))
    if not flat:
        return None
    if len(flat) == 1:
        return flat[0]
    return n.SeqStmt(tuple(flat))
