"""Expression simplification for :mod:`.simplify`: ISL first, then the prover.

* An integer expression that is quasi-affine is replaced by the form ISL
  gives it under the known facts (``gist``), when that form is a constant or
  smaller: ``n // 8`` is ``0`` under ``T.assume(0 <= n < 8)``.
* A condition keeps its form: a conjunct or disjunct that the facts decide
  becomes ``True``/``False`` and is folded away; a comparison is rewritten
  only when ISL's ``gist`` of it drops a ``//`` or ``%`` (``i // 8 == 0`` is
  ``i < 8`` where ``0 <= i < 16``).  In ``a and b`` the right
  operand is simplified knowing ``a``; in ``a or b`` knowing ``not a``; in
  ``T.if_then_else(c, x, y)`` the branches know ``c`` / ``not c``.
* A buffer load is replaced by its known value when the value context
  (:func:`analyses.context_at` of the statement) proves one that is no
  bigger than the load (a constant, another element); a condition on
  data is decided by :func:`analyses.prove`.  Only ``Proved`` rewrites
  anything; ``Refuted`` and ``Unknown`` leave the expression as it is.
  The value context follows the operand too: in ``i >= 14 and A[i] == 0``
  the load is asked about where ``i >= 14`` holds.
* What a replaced load leaves is folded (:func:`._fold.fold_constant`):
  ``A[0] + 9`` with ``A[0]`` known to be -2 is ``7``, computed as executed
  (integers wrap at their width, floats in their own dtype).

``ctx`` is the ISL parameter set of :mod:`._isl_context`; ``vctx`` is a
zero-argument callable giving the statement's :class:`analyses.Context` (or
``None`` where none is available, e.g. in statements built by a merge).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import islpy as isl

from polypad.errors import BudgetExceeded, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.visitor import node_fields, walk
from polypad.model import set_to_condition

from ._fold import FALSE, TRUE, fold_constant, fold_expr
from ._isl_context import IslFacts, size

ValueContext = Callable[[], object] | None


class ExprSimplifier:
    """Simplifies expressions of one function under ISL facts and value contexts."""

    def __init__(self, facts: IslFacts) -> None:
        self.facts = facts

    # ------------------------------------------------------------ values

    # expr and cond are the steps of a recursive walk (polypad.ir.deep): a deep
    # expression built inside a pass moves to the deep worker there.
    @guarded
    def expr(self, e: n.Expr, ctx: isl.Set, vctx: ValueContext) -> n.Expr:
        """``e`` simplified where ``ctx`` (and the value context) hold."""
        if e.dtype == "bool" and not isinstance(e, n.Select):
            return self.cond(e, ctx, vctx)
        match e:
            case n.IntImm() | n.FloatImm() | n.BoolImm() | n.Var():
                return e
            case n.Call(op="assume" | "undef"):
                return e
            case n.BufferLoad():
                load = self.children(e, ctx, vctx)
                known = self.known_value(load, vctx)
                return load if known is None else known
            case n.Select(condition=c, true_value=t, false_value=f):
                c2 = self.cond(c, ctx, vctx)
                if isinstance(c2, n.BoolImm):
                    return self.expr(t if c2.value else f, ctx, vctx)
                where = self.facts.condition(c2, ctx)
                t_ctx = ctx if where is None else ctx.intersect_params(where)
                f_ctx = ctx if where is None else ctx.intersect_params(where.complement())
                t2 = self.expr(t, t_ctx, self.knowing(vctx, c2, ctx))
                f2 = self.expr(f, f_ctx, self.knowing(vctx, n.Not(c2), ctx))
                if c2 is c and t2 is t and f2 is f:
                    return e
                return n.Select(c2, t2, f2, e.eager)
        if dtypes.is_int(e.dtype):
            simpler = self.facts.simpler_int(e, ctx)
            if simpler is not None:
                return simpler
        return fold_constant(self.children(e, ctx, vctx))

    def children(self, e: n.Expr, ctx: isl.Set, vctx: ValueContext) -> n.Expr:
        """``e`` with each child expression simplified."""
        changes = {}
        for name in node_fields(e):
            old = getattr(e, name)
            if isinstance(old, n.Expr):
                new = self.expr(old, ctx, vctx)
            elif isinstance(old, tuple) and old and isinstance(old[0], n.Expr):
                new = tuple(self.expr(x, ctx, vctx) for x in old)
                if all(a is b for a, b in zip(new, old, strict=True)):
                    new = old
            else:
                continue
            if new is not old:
                changes[name] = new
        return dataclasses.replace(e, **changes) if changes else e

    def known_value(self, load: n.BufferLoad, vctx: ValueContext) -> n.Expr | None:
        """The value the context proves ``load`` holds, if any."""
        context = vctx() if vctx is not None else None
        if context is None:
            return None
        from analyses.prover import known_value

        # A value is worth using when it is no bigger than the load: a constant, or
        # another element (`B[0]` for `A[0]` after `A[0] = B[0]`); a case-split
        # index would grow the program and every later question about it.  Bigger
        # candidates are not even proved.
        value = known_value(load, context, max_size=size(load))
        if value is None or value.dtype != load.dtype:
            return None
        return value

    def knowing(self, vctx: ValueContext, cond: n.Expr, ctx: isl.Set) -> ValueContext:
        """``vctx`` with ``cond`` also known to hold (an operand guarded by another).

        An affine condition whose arithmetic may wrap is left out: the
        context would read it as an ISL set, whose integers do not wrap.
        """
        if vctx is None or isinstance(cond, n.BoolImm):
            return vctx
        if self.facts.condition(cond, ctx) is None and not any(
                isinstance(x, n.BufferLoad) for x in walk(cond)):
            return vctx
        cache: list = []

        def get():
            if not cache:
                base = vctx()
                try:
                    cache.append(None if base is None else base.with_condition(cond))
                except BudgetExceeded:
                    raise  # the pass returns its input: never half a rewrite
                except PolypadError:
                    cache.append(base)  # a condition the context cannot state: know less
            return cache[0]

        return get

    # ------------------------------------------------------------ conditions

    @guarded
    def cond(self, c: n.Expr, ctx: isl.Set, vctx: ValueContext) -> n.Expr:
        """The boolean ``c`` simplified where ``ctx`` holds, keeping its form."""
        decided = self.facts.decide(c, ctx)
        if decided is not None:
            return TRUE if decided else FALSE
        match c:
            case n.And(a=a, b=b):
                a2 = self.cond(a, ctx, vctx)
                where = self.facts.condition(a2, ctx)
                b2 = self.cond(b, ctx if where is None else ctx.intersect_params(where),
                               self.knowing(vctx, a2, ctx))
                return _rebuilt(c, fold_expr(n.And(a2, b2)), (a, b), (a2, b2))
            case n.Or(a=a, b=b):
                a2 = self.cond(a, ctx, vctx)
                where = self.facts.condition(a2, ctx)
                rest = ctx if where is None else ctx.intersect_params(where.complement())
                b2 = self.cond(b, rest, self.knowing(vctx, n.Not(a2), ctx))
                return _rebuilt(c, fold_expr(n.Or(a2, b2)), (a, b), (a2, b2))
            case n.Not(a=a):
                a2 = self.cond(a, ctx, vctx)
                return _rebuilt(c, fold_expr(n.Not(a2)), (a,), (a2,))
            case n.Call(op="likely", args=(a,)):
                a2 = self.cond(a, ctx, vctx)
                if isinstance(a2, n.BoolImm):
                    return a2
                return c if a2 is a else n.Call("likely", (a2,), c.dtype)
            case n.Compare():
                return self.compare(c, ctx, vctx)
        return self.children(c, ctx, vctx)

    def compare(self, c: n.Compare, ctx: isl.Set, vctx: ValueContext) -> n.Expr:
        """A comparison with simplified operands, decided by ISL or the prover if possible."""
        a, b = self.expr(c.a, ctx, vctx), self.expr(c.b, ctx, vctx)
        out = c if (a is c.a and b is c.b) else type(c)(a, b)
        folded = fold_constant(out)
        if isinstance(folded, n.BoolImm):
            return folded
        if out is not c:
            decided = self.facts.decide(out, ctx)
            if decided is not None:
                return TRUE if decided else FALSE
        where = self.facts.condition(out, ctx)
        if where is not None:
            # Affine and undecided: ISL's gist may still say it more simply
            # (`i // 8 == 0` is `i < 8` for 0 <= i < 16); the prover would find no more.
            # Only a form that loses a `//` or `%` is taken, so that the author's
            # comparisons otherwise keep their shape.
            gisted = set_to_condition(where, [], self.facts.names, context=ctx)
            if _divisions(gisted) < _divisions(out) and size(gisted) <= size(out):
                return gisted
            return out
        if vctx is None:
            return out
        context = vctx()
        if context is None:
            return out
        from analyses import prove

        if prove(out, context):
            return TRUE
        if prove(n.Not(out), context):
            return FALSE
        return out


def _divisions(e: n.Expr) -> int:
    return sum(1 for x in walk(e) if isinstance(x, (n.FloorDiv, n.FloorMod)))


def _rebuilt(node: n.Expr, folded: n.Expr, old: tuple, new: tuple) -> n.Expr:
    """``node`` itself when no operand changed, else the folded rebuild."""
    if all(a is b for a, b in zip(old, new, strict=True)):
        return node
    return folded
