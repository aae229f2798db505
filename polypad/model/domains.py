"""Instance domains: which iterations of a leaf statement run.

The domain of a statement is the set of its loop-counter vectors allowed by
the enclosing loop bounds and ``if`` guards.  A then-branch guard is split
into its conjuncts so that ``if i < n and A[i] > 0`` keeps ``i < n`` and
drops only the data-dependent part; an else-branch contributes the
complement of its whole condition, or nothing when that is not affine.
A guard in which an operation may wrap around its integer width at some
instance (``if i + 2147483647 < 0``) is dropped too: ISL's integers do not
wrap (:mod:`.overflow`).  Whatever is dropped makes the domain an
over-approximation (``may``).
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n

from .affine import AffineSpace
from .conditions import condition_set
from .nest import Leaf
from .overflow import wraps_somewhere


def loop_bounds(loop: n.For) -> tuple[n.Expr, n.Expr]:
    """``var >= min`` and ``var < min + extent`` for ``loop``."""
    v = loop.var
    lo, extent = loop.min, loop.extent
    if isinstance(lo, n.IntImm) and lo.value == 0:
        hi = extent
    elif isinstance(lo, n.IntImm) and isinstance(extent, n.IntImm):
        hi = n.IntImm(lo.value + extent.value, lo.dtype)
    else:
        hi = lo + extent
    return v >= lo, v < hi


def conjuncts(cond: n.Expr) -> list[n.Expr]:
    """``cond`` split at top-level ``and`` (through ``T.likely``), in order.

    A loop, not a recursion: ``a and b and ...`` may be thousands of levels deep.
    """
    out, stack = [], [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, n.Call) and c.op == "likely" and len(c.args) == 1:
            stack.append(c.args[0])
        elif isinstance(c, n.And):
            stack += [c.b, c.a]
        else:
            out.append(c)
    return out


def statement_domain(leaf: Leaf, space: AffineSpace, context: isl.Set | None = None
                     ) -> tuple[isl.Set, tuple[n.Expr, ...]]:
    """The instance set of ``leaf`` in ``space``, and the conditions it had to drop.

    ``context``, a set of parameter values outside which the leaf does not run
    (:mod:`.parameter_facts`), only narrows where a guard is checked for
    wrap-around.
    """
    domain = space.universe
    dropped: list[n.Expr] = []
    for loop in leaf.loops:
        for bound in loop_bounds(loop):
            try:
                domain = domain.intersect(condition_set(bound, space))
            except NotAffineError:
                dropped.append(bound)
    loops = domain if context is None else domain.intersect_params(context)
    for guard in leaf.guards:
        parts = conjuncts(guard.condition) if guard.then else [guard.condition]
        for part in parts:
            try:
                if wraps_somewhere(part, space, loops):
                    raise NotAffineError("it may wrap around", part)
                where = condition_set(part, space)
            except NotAffineError:
                dropped.append(part if guard.then else n.Not(part))
                continue
            domain = domain.intersect(where if guard.then else where.complement())
    return domain.coalesce(), tuple(dropped)
