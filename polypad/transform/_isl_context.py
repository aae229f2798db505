"""What the passes know at a program point, as an ISL set of parameter values.

:mod:`.simplify` and :mod:`.reduce_loop_extents` walk a function top-down
carrying the facts that hold at each statement -- enclosing loop ranges,
affine ``if`` conditions (negated in else branches) and affine ``T.assume``
facts -- as one parameter set in which every variable is an ISL parameter.
:class:`IslFacts` converts IR conditions and integer expressions into that
form (let-bound variables are replaced by their values) and back.  An
expression in which an operation may wrap around its integer width where
the facts hold is left alone: ISL's integers do not wrap
(:mod:`polypad.model.overflow`).
"""

from __future__ import annotations

from contextlib import contextmanager

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, pw_aff_to_expr, to_pw_aff, to_set
from polypad.model.overflow import wraps_somewhere


class IslFacts:
    """Converts conditions and integer expressions to parameter sets and functions."""

    def __init__(self) -> None:
        self.names = Names()
        self.lets: dict = {}
        self.universe = isl.Set.universe(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))

    def space(self) -> AffineSpace:
        """A space with no set dims: every variable is a parameter."""
        return AffineSpace((), names=self.names, lets=self.lets)

    @contextmanager
    def let(self, var: n.Var, value: n.Expr):
        """Within the block, ``var`` stands for ``value``."""
        self.lets[var] = value
        try:
            yield
        finally:
            del self.lets[var]

    def condition(self, cond: n.Expr, ctx: isl.Set) -> isl.Set | None:
        """The parameter values where ``cond`` holds, or ``None`` if it is not affine or
        an operation in it may wrap around where ``ctx`` holds."""
        try:
            where = to_set(cond, self.space()).params()
        except NotAffineError:
            return None
        return where if self.exact(cond, ctx) else None

    def exact(self, e: n.Expr, ctx: isl.Set) -> bool:
        """Whether no operation of ``e``, nor of the let values it uses, may wrap
        around where ``ctx`` holds.

        The let values count: ISL reads ``x`` as its value exactly, so a value
        that wrapped when the let ran (``x = 1073741824 * n`` with ``n = 3``)
        is not the one ISL computes with.
        """
        space = self.space()
        # ISL's error rises: its operation limit is the budget's, and its failing
        # drops the whole computation (polypad.isl_failure), never answers "not exact".
        return not wraps_somewhere(e, space, ctx)  # follows the let values itself

    def decide(self, cond: n.Expr, ctx: isl.Set) -> bool | None:
        """``True``/``False`` when ``ctx`` decides the affine ``cond``, else ``None``."""
        where = self.condition(cond, ctx)
        if where is None:
            return None
        if ctx.is_subset(where):
            return True
        if ctx.intersect_params(where).is_empty():
            return False
        return None

    def simpler_int(self, e: n.Expr, ctx: isl.Set) -> n.Expr | None:
        """An expression equal to the integer ``e`` wherever ``ctx`` holds, if ISL finds
        one that is a constant or smaller than ``e``; otherwise ``None``."""
        if isinstance(e, (n.IntImm, n.Var)):
            return None
        try:
            pa = to_pw_aff(e, self.space())
        except NotAffineError:
            return None
        if not self.exact(e, ctx):
            return None
        pa = pa.gist_params(ctx).coalesce()
        if len(pa.get_pieces()) != 1:
            return None
        try:
            out = pw_aff_to_expr(pa, [], self.names)
        except NotAffineError:
            return None
        # ISL's form computes the same exact value; executed, it must not wrap
        # where ``e`` does not (a ``//`` over a sum that now overflows).
        if not self.exact(out, ctx):
            return None
        if out.dtype != e.dtype:
            out = n.IntImm(out.value, e.dtype) if isinstance(out, n.IntImm) else None
        if out is None:
            return None
        if isinstance(out, n.IntImm) or size(out) < size(e):
            return out
        return None


def size(e) -> int:
    """The number of nodes in ``e`` (how readable simplification judges a form)."""
    return sum(1 for _ in walk(e))
