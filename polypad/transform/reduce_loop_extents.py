"""``reduce_loop_extents``: shrink loops to the iterations that do something.

RFC 0077, "New Transform - Reduce Loop Extents".  Before::

    for i, j in T.grid(4, 4):
        if i == 0 and j < 2:
            A[i, j] = 0.0

After::

    i = 0
    for j in T.serial(2):
        A[i, j] = 0.0

For each serial or parallel loop, ISL computes the *active* iterations: for
every statement inside (every store and every ``T.assume``), its instance set
-- the loop bounds and the affine ``if`` guards around it, within what is
known at the loop (enclosing loop ranges and guards) -- projected onto the
loop counter.  The loop is narrowed to ``[min, max]`` of that set (a function
of the enclosing counters and parameters); a loop left with one iteration
becomes a let binding; a loop with none is removed.  Guards that the known
ranges now imply are dropped, conjunct by conjunct (the rest keep their
form), and a guard they contradict takes its else branch.

Why it is correct: an iteration outside the active set runs no statement
(every guard on the way to each statement is false there), so skipping it
changes nothing.  Guards that cannot be converted to ISL (data-dependent,
non-affine) are left out of the instance sets, which only makes the active
set larger, and are kept in the code.  A loop holding a statement the model
does not see (an ``assert``, which may raise; an opaque call; a ``T.attr``
body) keeps all its iterations.  New bounds are used only when ISL
gives one affine piece each and the new range lies inside the old one for
every value of the enclosing counters.  Vectorized and unrolled loops keep
their extents (the RFC restricts the transform to serial and parallel loops).
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.operators import logical_and, max_, min_
from polypad.ir.removal import no_op
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, pw_aff_to_expr, to_set
from polypad.model.domains import loop_bounds, statement_domain
from polypad.model.nest import collect, is_leaf

from ._budget import budgeted_pass
from ._fold import build_if
from ._isl_context import IslFacts

_REDUCED_KINDS = (n.ForKind.SERIAL, n.ForKind.PARALLEL)
_EMPTY = object()


@budgeted_pass
def reduce_loop_extents(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with loops narrowed to the iterations whose body runs a statement.

    >>> reduce_loop_extents(f)   # for i, j: if i == 0 and j < 2  ->  i = 0; for j in 2
    """
    reducer = _Reducer()
    body = reducer.stmt(func.body, reducer.universe)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=no_op() if body is None else body)


class _Reducer:
    """Walks statements top-down with the facts known there, as a parameter set."""

    def __init__(self) -> None:
        self.facts = IslFacts()
        self.names = self.facts.names
        self.lets = self.facts.lets
        self.universe = self.facts.universe
        self.condition = self.facts.condition

    # ------------------------------------------------------------ statements

    def stmt(self, s: n.Stmt, ctx: isl.Set) -> n.Stmt | None:
        match s:
            case n.SeqStmt(stmts=stmts):
                new = [self.stmt(x, ctx) for x in stmts]
                if all(a is b for a, b in zip(new, stmts, strict=True)):
                    return s
                kept = tuple(x for x in new if x is not None)
                if not kept:
                    return None
                return kept[0] if len(kept) == 1 else n.SeqStmt(kept, span=s.span)
            case n.For():
                return self.loop(s, ctx)
            case n.IfThenElse():
                return self.branch(s, ctx)
            case n.LetStmt(var=var, value=value, body=body):
                with self.facts.let(var, value):
                    return _rebuild(s, self.stmt(body, ctx))
            case n.Block(body=body) | n.Allocate(body=body):
                return _rebuild(s, self.stmt(body, ctx))
        return s

    def loop(self, loop: n.For, ctx: isl.Set) -> n.Stmt | None:
        lower, upper = loop_bounds(loop)
        old = self.condition(logical_and(lower, upper), ctx)
        if old is None:
            return _rebuild(loop, self.stmt(loop.body, ctx))
        bounds = self.reduced_bounds(loop, ctx, old) if loop.kind in _REDUCED_KINDS else None
        if bounds is _EMPTY:
            return None
        if bounds is None:
            return _rebuild(loop, self.stmt(loop.body, ctx.intersect_params(old)))
        start, extent, new = bounds
        body = self.stmt(loop.body, ctx.intersect_params(new))
        if body is None:
            return None
        if isinstance(extent, n.IntImm) and extent.value == 1:
            return n.LetStmt(loop.var, start, body, span=loop.span)
        return dataclasses.replace(loop, min=start, extent=extent, body=body)

    def reduced_bounds(self, loop: n.For, ctx: isl.Set, old: isl.Set):
        """``(min, extent, range set)`` of the active iterations, ``_EMPTY``, or ``None``.

        Whatever expressions are proposed for the new bounds, they are used
        only when ISL confirms ``active <= new range <= old range`` here.
        """
        active = self.active(loop, ctx)
        if active is None:
            return None
        active = active.intersect_params(ctx)
        if active.is_empty():
            return _EMPTY
        space = AffineSpace((loop.var,), names=self.names, lets=self.lets)
        old_range = to_set(logical_and(*loop_bounds(loop)), space).intersect_params(ctx)
        lo = active.dim_min(0).gist_params(ctx).coalesce()
        hi = active.dim_max(0).gist_params(ctx).coalesce()
        stop_pa = hi.add_constant_val(isl.Val(1)).coalesce()
        for start in self.exprs(lo):
            for stop in self.exprs(stop_pa):
                extent = _extent(start, stop)
                bounds = logical_and(*loop_bounds(dataclasses.replace(
                    loop, min=start, extent=extent)))
                new_range = to_set(bounds, space).intersect_params(ctx)
                if new_range.is_equal(old_range):
                    return None
                if active.is_subset(new_range) and new_range.is_subset(old_range):
                    where = self.condition(bounds, ctx)
                    if where is not None:  # None: the new bounds may wrap, so isl can't read them
                        return start, extent, where
        return None

    def exprs(self, pa: isl.PwAff) -> list[n.Expr]:
        """Readable IR candidates for ``pa``: its one piece, or min/max of two."""
        pieces = pa.get_pieces()
        if len(pieces) == 1:
            return [pw_aff_to_expr(pa, [], self.names)]
        if len(pieces) == 2:
            a, b = (pw_aff_to_expr(aff, [], self.names) for _, aff in pieces)
            return [min_(a, b), max_(a, b)]
        return []

    def active(self, loop: n.For, ctx: isl.Set) -> isl.Set | None:
        """The iterations of ``loop`` (one set dim) in which some statement runs;
        None where the body holds a statement the model does not see (an ``assert``,
        an opaque call, an attribute's body): its iterations all stay."""
        if _untracked(loop.body) is not None:
            return None
        leaves, _ = collect(loop)
        out = None
        for leaf in leaves:
            space = AffineSpace(leaf.loop_vars, names=self.names, lets={**self.lets, **leaf.lets})
            domain, _ = statement_domain(leaf, space, ctx)
            domain = domain.project_out(isl.dim_type.set, 1, len(leaf.loop_vars) - 1)
            out = domain if out is None else out.union(domain)
        if out is None:
            space = AffineSpace((loop.var,), names=self.names)
            return isl.Set.empty(space.space)
        return out.coalesce()

    def branch(self, node: n.IfThenElse, ctx: isl.Set) -> n.Stmt | None:
        parts = _conjuncts(node.condition)
        kept: list[n.Expr] = []
        then_ctx = ctx
        for part in parts:
            where = self.condition(part, ctx)
            if where is None:
                kept.append(part)
            elif ctx.is_subset(where):
                continue  # implied by what is known here
            elif ctx.intersect_params(where).is_empty():
                return None if node.else_case is None else self.stmt(node.else_case, ctx)
            else:
                kept.append(part)
                then_ctx = then_ctx.intersect_params(where)
        then = self.stmt(node.then_case, then_ctx)
        if not kept:
            return then
        other = None
        if node.else_case is not None:
            where = self.condition(node.condition, ctx)
            else_ctx = ctx if where is None else ctx.intersect_params(where.complement())
            other = self.stmt(node.else_case, else_ctx)
        if len(kept) == len(parts) and then is node.then_case and other is node.else_case:
            return node
        cond = node.condition if len(kept) == len(parts) else logical_and(*kept)
        return build_if(cond, then, other, span=node.span)


def _extent(start: n.Expr, stop: n.Expr) -> n.Expr:
    """The extent of ``range(start, stop)``, in the form the script parser gives it."""
    if isinstance(start, n.IntImm) and start.value == 0:
        return stop
    if isinstance(start, n.IntImm) and isinstance(stop, n.IntImm):
        return n.IntImm(stop.value - start.value, start.dtype)
    return stop - start


def _conjuncts(cond: n.Expr) -> list[n.Expr]:
    if isinstance(cond, n.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _rebuild(node, body: n.Stmt | None) -> n.Stmt | None:
    if body is None:
        return None
    return node if body is node.body else dataclasses.replace(node, body=body)


#: The statements :func:`~polypad.model.nest.collect` enters or records: the effect of
#: a loop body made of these is its leaves' (stores and ``T.assume``).
_SEEN = (n.SeqStmt, n.For, n.IfThenElse, n.LetStmt, n.Block, n.Allocate, n.DeclBuffer)


def _untracked(body: n.Stmt) -> n.Stmt | None:
    """The first statement in ``body`` whose effect the leaves do not show: one that
    ``collect`` passes over (an ``assert``, which may raise; an opaque call, which
    may do anything; the body of a ``T.attr``) and that is no constant ``evaluate``."""
    for x in walk(body):
        if (isinstance(x, n.Stmt) and not isinstance(x, _SEEN) and not is_leaf(x)
                and not (isinstance(x, n.Evaluate) and isinstance(x.value, n.IntImm))):
            return x
    return None
