"""The box one iteration of a loop touches, and the accesses shifted into it.

The caches placed at a loop (:mod:`.cache_at`) and ``store_at``
(:mod:`.store_at`) allocate a buffer inside a loop, shaped as the box around
the elements one iteration touches (:func:`box_around`: its corner, a
quasi-affine function of the loop variables, and its constant size), and
rewrite the accesses to index it from the corner (:class:`ShiftToBox`):
``C[4 * io + ii, 4 * jo + ji]`` becomes ``C_local[ii, ji]``.
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.visitor import Rewriter
from polypad.isl_failure import rise_unless_expected
from polypad.model import AffineSpace, pw_aff_to_expr
from polypad.model.affine import to_pw_aff
from polypad.model.isl_helpers import maps_of, union_all

from .box_indices import exact_index, runs_of
from .exact_bounds import assumed
from .location_placement import Placement


def relation_of(s, buffer: n.Buffer, kind: str | None = None) -> isl.UnionMap:
    """The accesses of ``s`` to ``buffer`` (of ``kind``, or all), as one union map."""
    return union_all(a.relation for a in s.accesses
                     if a.buffer is buffer and (kind is None or a.kind == kind))


def one_map(umap: isl.UnionMap) -> isl.Map:
    """The one map of ``umap`` (one buffer's region at one ``_at`` iteration)."""
    maps = maps_of(umap)
    if len(maps) != 1:  # pragma: no cover - one buffer, one _at space
        raise PolypadError("the cached region is not one map")
    return maps[0]


def box_around(p: Placement, touched: isl.Map) -> tuple[list[isl.PwAff], list[int]]:
    """The corner (a PwAff of the loop variables per dimension) and the constant size of
    the box around each iteration's region."""
    lo, shape = [], []
    for d in range(touched.dim(isl.dim_type.out)):
        low = touched.dim_min(d)
        extent = touched.dim_max(d).sub(low).add_constant_val(isl.Val(1))
        size = _max_val(extent)
        if not size.is_int():
            raise PolypadError(f"{p.where}: the region's extent in dimension {d} has no "
                               f"constant bound ({extent})")
        lo.append(low)
        shape.append(int(size.to_python()))
    return lo, shape


def _max_val(e: isl.PwAff) -> isl.Val:
    """The largest value of ``e`` over its domain and parameters (infinity when there is
    none).  ``PwAff.max_val`` takes only integer affine pieces; an extent built from
    ``vi // 2`` and ``vi % 4`` can have a piece with a rational coefficient over
    existentials, for which the graph of ``e`` is asked instead."""
    try:
        return e.max_val()
    except isl.Error as err:
        # That refusal, checked before ISL does anything, is the one to go on past;
        # out of budget, or ISL failing, rises (polypad.isl_failure).
        rise_unless_expected(err, "expecting integer affine expression")
        values = isl.Map.from_pw_aff(e).range()
        values = values.move_dims(isl.dim_type.set, 1, isl.dim_type.param, 0,
                                  values.dim(isl.dim_type.param))
        return values.dim_max_val(0)


class ShiftToBox(Rewriter):
    """The block's accesses of ``old`` as accesses of ``cache`` at ``index - corner``."""

    def __init__(self, model, old: n.Buffer, cache: n.Buffer, corner, block: n.Block,
                 where: str = "the rewrite"):
        self.model, self.old, self.cache, self.corner = model, old, cache, corner
        self.block, self.where = block, where
        self.loops: list[n.Var] = []
        self.active = False
        # The statement whose accesses are being shifted, and where it runs: a shifted
        # index is checked not to wrap there (:mod:`.box_indices`).
        self._statements = {id(s.stmt): s for s in model.statements}
        self._runs: dict[int, object] = {}
        self.statement = None

    def visit_Block(self, node: n.Block):
        if node is not self.block:
            return self.generic_visit(node)
        self.active = True
        try:
            return self.generic_visit(node)
        finally:
            self.active = False

    def visit_For(self, node: n.For):
        self.loops.append(node.var)
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    def _indices(self, indices) -> tuple[n.Expr, ...]:
        out = []
        for index, corner in zip(indices, self.corner, strict=True):
            shifted = op.sub(self.visit(index), corner)
            if self.statement is None:
                # Outside a statement (a condition, a let's value, a loop bound) there
                # are no runs to check isl's form against (exact_index): keep the plain
                # difference, which lies in the box wherever the access runs, so its
                # arithmetic wraps (if at all) only as the dtype's modular arithmetic.
                out.append(shifted)
                continue
            try:
                space = AffineSpace(list(self.loops), names=self.model.names)
                shifted = pw_aff_to_expr(to_pw_aff(shifted, space), list(self.loops),
                                         self.model.names)
            except NotAffineError:
                pass
            if self.statement is not None:
                shifted = exact_index(shifted, self.statement, self.model,
                                      self._runs_of(self.statement), self.where)
            out.append(shifted)
        return tuple(out)

    def _runs_of(self, s):
        if id(s) not in self._runs:
            self._runs[id(s)] = runs_of(s, assumed(self.model.func, s.stmt, self.model.names))
        return self._runs[id(s)]

    def visit_Evaluate(self, node: n.Evaluate):
        return self._in_statement(node, self.generic_visit)

    def _in_statement(self, node, visit):
        outer = self.statement
        self.statement = self._statements.get(id(node), outer)
        try:
            return visit(node)
        finally:
            self.statement = outer

    def visit_BufferLoad(self, node: n.BufferLoad):
        if not self.active or node.buffer is not self.old:
            return self.generic_visit(node)
        return dataclasses.replace(node, buffer=self.cache, indices=self._indices(node.indices))

    def visit_BufferStore(self, node: n.BufferStore):
        return self._in_statement(node, self._store)

    def _store(self, node: n.BufferStore):
        if not self.active or node.buffer is not self.old:
            return self.generic_visit(node)
        return dataclasses.replace(node, buffer=self.cache, value=self.visit(node.value),
                                   indices=self._indices(node.indices))

