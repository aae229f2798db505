"""What holds at a point of a function, for rewrites that put new statements there.

A schedule primitive that builds statements at a point of a function (the copy
of a reduction's init before a loop, the tail nest of a partitioned split) wants
them as plain as that point allows: ``if 0 * 8 + 0 < 30`` is always true over the
copy and should go, and an ``if`` that never holds there takes its branch with it.
:func:`facts_at` gathers what :mod:`.simplify` knows on its way down to a statement
-- the ranges of the enclosing loops, the conditions of the enclosing ``if``
branches (negated in an ``else``), the values of the enclosing lets -- and the
:class:`Facts` it returns decides a condition there, or simplifies a statement
placed there, with :mod:`.simplify`'s own rules (ISL decides, nothing is
rewritten on an undecided answer).

Buffer contents are never used: a statement that is not yet part of the function
has no value context, and none is asked for.  ``T.assume`` facts are left out too
unless asked for (``assumptions=True``: the affine ones that run before the
statement in an enclosing sequence, and that a parameter buffer's symbolic size
is not negative, as the caller's array gives it); knowing less is safe, it only
simplifies less.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.locate import ancestors
from polypad.ir.operators import logical_and
from polypad.ir.stated import stated_condition
from polypad.model.domains import conjuncts, loop_bounds

from ._isl_context import IslFacts
from .simplify import _Simplifier
from .simplify_exprs import ExprSimplifier


@dataclass(frozen=True)
class Facts:
    """What holds at a statement of ``func``: ISL facts (with the enclosing lets) and
    the parameter set ``ctx`` of the values the variables take there."""

    func: n.PrimFunc
    facts: IslFacts
    ctx: isl.Set

    def decide(self, cond: n.Expr) -> bool | None:
        """``True`` where ``cond`` holds everywhere here, ``False`` where nowhere, else
        ``None`` (not affine, or it depends on where)."""
        out = ExprSimplifier(self.facts).cond(cond, self.ctx, None)
        return out.value if isinstance(out, n.BoolImm) else None

    def simplified(self, stmt: n.Stmt) -> n.Stmt | None:
        """``stmt``, to be placed here, simplified as :func:`.simplify` would (without
        buffer values); ``None`` when nothing of it would ever run."""
        simplifier = _Simplifier(self.func)
        simplifier.facts = self.facts
        simplifier.exprs = ExprSimplifier(self.facts)
        return simplifier.stmt(stmt, self.ctx, original=False)


def facts_at(func: n.PrimFunc, stmt: n.Stmt, *, assumptions: bool = False) -> Facts:
    """What holds just before ``stmt`` (a statement of ``func``, by identity) runs;
    with ``assumptions``, also the affine conjuncts of the ``T.assume``\\ s that run
    before it in the sequences around it (a program that breaks one has no meaning),
    and ``size >= 0`` for each symbolic size of a parameter buffer.

    >>> facts_at(f, loop).decide(guard)   # `0 * 8 + 0 < 30`, anywhere: True
    """
    facts = IslFacts()
    ctx = facts.universe
    if assumptions:
        for p in func.params:
            for size in p.shape if isinstance(p, n.Buffer) else ():
                if isinstance(size, n.Var):
                    ctx = _known(facts, ctx, n.Ge(size, n.IntImm(0, size.dtype)), negated=False)
    path = ancestors(func, stmt)
    for parent, child in zip(path, path[1:], strict=False):
        if isinstance(parent, n.For):
            ctx = _known(facts, ctx, logical_and(*loop_bounds(parent)), negated=False)
        elif isinstance(parent, n.IfThenElse):
            ctx = _known(facts, ctx, parent.condition, negated=child is not parent.then_case)
        elif isinstance(parent, n.LetStmt) and child is parent.body:
            facts.lets[parent.var] = parent.value
        elif isinstance(parent, n.SeqStmt) and assumptions:
            for before in parent.stmts[:next(k for k, x in enumerate(parent.stmts)
                                             if x is child)]:
                stated = stated_condition(before)  # T.assume, or an assert on plain values
                if stated is not None:
                    for part in conjuncts(stated):
                        ctx = _known(facts, ctx, part, negated=False)
    return Facts(func, facts, ctx)


def _known(facts: IslFacts, ctx: isl.Set, cond: n.Expr, *, negated: bool) -> isl.Set:
    """``ctx`` where ``cond`` (or its negation) holds; ``ctx`` itself where ISL cannot
    say where (a condition on data, or one that may wrap)."""
    where = facts.condition(cond, ctx)
    if where is None:
        return ctx
    return ctx.intersect_params(where.complement() if negated else where)
