"""``simplify``: rewrite a function with what is known at each statement.

RFC 0077, "Enhancement - Simplify".  Before::

    T.assume(n >= 0 and n < 8)
    for i in T.serial(16):
        if i < 20:
            A[i] = n // 8

After::

    T.assume(n >= 0 and n < 8)
    for i in T.serial(16):
        A[i] = 0

What is known at a statement: the ranges of the enclosing loops, the affine
conditions of the enclosing ``if`` branches, affine ``T.assume`` facts and
conditions of plain ``assert`` statements (:mod:`polypad.ir.stated`) that
ran before it in the same block (ISL, :mod:`._isl_context`), and -- for
buffer contents -- :func:`analyses.context_at`, which instantiates
assumptions and earlier stores at each load and drops a fact once its
element may have been written again.  With that:

* expressions are simplified (:mod:`.simplify_exprs`): a condition ISL or
  the prover decides becomes ``True``/``False``, integer expressions take a
  constant or smaller form, a load with a proven value is replaced by it
  (under ``T.assume(B[0] == 0)`` only the reads before the first store to
  ``B[0]``, the RFC's example);
* an ``if`` with a decided condition keeps only the branch taken, an ``if``
  whose branches are equal is replaced by one copy, a loop that never runs
  or whose body is empty is removed, a let nothing uses is removed;
* adjacent ``if`` statements with identical or complementary affine
  conditions are merged, keeping the first condition's form, also when one
  of them is alone in a block, which then moves into its branch
  (:mod:`.simplify_conditions`); data-dependent ones never are.

Known values are those of the function as it was given, so a store that
reads what it overwrites (``A[0] = A[0] + 2``) establishes nothing in one
round.  Once a round has replaced such a load (``A[0] = 7`` after
``A[0] = 5``), the store establishes a value the next round can use, so
simplify runs again while a round removed a load from a store, at most
:data:`MAX_ROUNDS` times: ``A[0] = 5; A[0] = A[0] + 2; if A[0] == 7:``
becomes ``A[0] = 5; A[0] = 7`` and the ``if``'s body.

Why it is correct: every rewrite replaces an expression by one equal to it
wherever the facts hold, and the facts hold at that point by construction
(loop bounds, the branch taken, assumptions, proven values).  Nothing is
rewritten on an ``Unknown`` or ``Refuted`` answer.  ``T.assume`` statements
are never changed or removed (a user assumption may only be removed once
proven, and it is still needed by later passes), nor are asserts (a
check may raise).
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import BudgetExceeded, PolypadError
from polypad.ir import nodes as n
from polypad.ir.operators import logical_and
from polypad.ir.removal import no_op
from polypad.ir.stated import stated_condition
from polypad.ir.structural import structural_equal
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk
from polypad.model.domains import conjuncts, loop_bounds

from ._budget import budgeted_pass
from ._fold import build_if
from ._isl_context import IslFacts
from .simplify_conditions import merge_pair, sequence
from .simplify_exprs import ExprSimplifier

#: Rounds of simplification at most (each after one that removed a load from a store).
MAX_ROUNDS = 8


@budgeted_pass
def simplify(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` simplified with its loop ranges, conditions and assumptions.

    Returns ``func`` itself when nothing changes.

    >>> simplify(f)   # `n // 8` -> `0` under T.assume(0 <= n < 8)
    """
    for _ in range(MAX_ROUNDS):
        simplifier = _Simplifier(func)
        body = simplifier.stmt(func.body, simplifier.facts.universe, original=True)
        if body is func.body or (body is None and _is_empty(func.body)):
            return func
        func = dataclasses.replace(func, body=no_op() if body is None else body)
        if not simplifier.learned:
            break
    return func


class _Simplifier:
    def __init__(self, func: n.PrimFunc) -> None:
        self.func = func
        self.facts = IslFacts()
        self.exprs = ExprSimplifier(self.facts)
        #: Whether a store now reads fewer loads: it may establish a value it did not.
        self.learned = False

    def value_context(self, stmt: n.Stmt, original: bool):
        """A callable giving the value context just before ``stmt`` (computed once)."""
        if not original:
            return None
        cache: list = []

        def get():
            if not cache:
                from analyses.context import context_at

                try:
                    cache.append(context_at(self.func, stmt))
                except BudgetExceeded:
                    raise  # the pass returns its input: never half a rewrite
                except PolypadError:
                    cache.append(None)  # e.g. a statement object used twice
            return cache[0]

        return get

    # ------------------------------------------------------------ statements

    def stmt(self, s: n.Stmt, ctx: isl.Set, *, original: bool) -> n.Stmt | None:
        """``s`` simplified where ``ctx`` holds; ``None`` when nothing is left.

        ``original`` says ``s`` is a statement of the input function, so its
        value context can be asked for.
        """
        match s:
            case n.SeqStmt():
                return self.seq(s, ctx, original)
            case n.For():
                return self.loop(s, ctx, original)
            case n.IfThenElse():
                return self.branch(s, ctx, original)
            case n.LetStmt():
                return self.let(s, ctx, original)
            case n.BufferStore():
                vctx = self.value_context(s, original)
                value = self.exprs.expr(s.value, ctx, vctx)
                indices = tuple(self.exprs.expr(i, ctx, vctx) for i in s.indices)
                if value is s.value and all(a is b for a, b in zip(indices, s.indices)):
                    return s
                if _loads(value, *indices) < _loads(s.value, *s.indices):
                    self.learned = True
                return dataclasses.replace(s, value=value, indices=indices)
            case n.Block() | n.Allocate():
                body = self.stmt(s.body, ctx, original=original)
                if body is None:
                    return None
                return s if body is s.body else dataclasses.replace(s, body=body)
        return s  # Evaluate: assumptions stay exactly as written

    def seq(self, s: n.SeqStmt, ctx: isl.Set, original: bool) -> n.Stmt | None:
        items: list[tuple[n.Stmt, isl.Set]] = []
        for child in s.stmts:
            new = self.stmt(child, ctx, original=original)
            if new is not None:
                for part in new.stmts if isinstance(new, n.SeqStmt) else (new,):
                    items.append((part, ctx))
            stated = stated_condition(child)  # T.assume, or an assert on plain values
            if stated is not None:
                ctx = self.assume(stated, ctx)
        merged = self.merge(items)
        stmts = [x for x, _ in merged]
        if not stmts:
            return None  # `pass`, or statements that were all removed
        if len(stmts) == len(s.stmts) and all(a is b for a, b in zip(stmts, s.stmts)):
            return s
        return sequence(*stmts)

    def merge(self, items: list) -> list:
        """Merge adjacent conditionals (identical or complementary conditions)."""
        out: list[tuple[n.Stmt, isl.Set]] = []
        for stmt, ctx in items:
            if out:
                prev, prev_ctx = out[-1]
                merged = merge_pair(self.facts, prev, stmt, prev_ctx)
                if merged is not None:
                    # The merged branches may hold more to merge or equal branches.
                    result = self.stmt(merged, prev_ctx, original=False)
                    out.pop()
                    if result is not None:
                        out.extend((x, prev_ctx) for x in (
                            result.stmts if isinstance(result, n.SeqStmt) else (result,)))
                    continue
            out.append((stmt, ctx))
        return out

    def assume(self, cond: n.Expr, ctx: isl.Set) -> isl.Set:
        """``ctx`` with the affine conjuncts of an assumption added."""
        for part in conjuncts(cond):
            where = self.facts.condition(part, ctx)
            if where is not None:
                ctx = ctx.intersect_params(where)
        return ctx

    def loop(self, s: n.For, ctx: isl.Set, original: bool) -> n.Stmt | None:
        vctx = self.value_context(s, original)
        start = self.exprs.expr(s.min, ctx, vctx)
        extent = self.exprs.expr(s.extent, ctx, vctx)
        loop = s if (start is s.min and extent is s.extent) else dataclasses.replace(
            s, min=start, extent=extent)
        where = self.facts.condition(logical_and(*loop_bounds(loop)), ctx)
        if where is not None:
            ctx = ctx.intersect_params(where)
            if ctx.is_empty():
                return None  # the loop never runs
        body = self.stmt(s.body, ctx, original=original)
        if body is None:
            return None
        return loop if body is loop.body else dataclasses.replace(loop, body=body)

    def branch(self, s: n.IfThenElse, ctx: isl.Set, original: bool) -> n.Stmt | None:
        cond = self.exprs.cond(s.condition, ctx, self.value_context(s, original))
        if isinstance(cond, n.BoolImm):
            taken = s.then_case if cond.value else s.else_case
            return None if taken is None else self.stmt(taken, ctx, original=original)
        where = self.facts.condition(cond, ctx)
        then_ctx = ctx if where is None else ctx.intersect_params(where)
        then = self.stmt(s.then_case, then_ctx, original=original)
        other = None
        if s.else_case is not None:
            else_ctx = ctx if where is None else ctx.intersect_params(where.complement())
            other = self.stmt(s.else_case, else_ctx, original=original)
        if then is not None and other is not None and structural_equal(then, other):
            return then  # the condition has no effects, so either copy will do
        if cond is s.condition and then is s.then_case and other is s.else_case:
            return s
        return build_if(cond, then, other, span=s.span)

    def let(self, s: n.LetStmt, ctx: isl.Set, original: bool) -> n.Stmt | None:
        value = self.exprs.expr(s.value, ctx, self.value_context(s, original))
        with self.facts.let(s.var, value):
            body = self.stmt(s.body, ctx, original=original)
        if body is None:
            return None
        if not any(v is s.var for v in free_vars(body)):
            return body
        if value is s.value and body is s.body:
            return s
        return dataclasses.replace(s, value=value, body=body)


def _is_empty(body: n.Stmt) -> bool:
    """Whether ``body`` runs nothing: ``pass`` (an empty ``SeqStmt``)."""
    return isinstance(body, n.SeqStmt) and not body.stmts


def _loads(*exprs: n.Expr) -> int:
    return sum(isinstance(x, n.BufferLoad) for e in exprs for x in walk(e))
