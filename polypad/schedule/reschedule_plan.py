"""Where each statement of a rescheduled block runs: the scope, the band, the new times.

The vocabulary shared by :mod:`.reschedule` (the ``distribute`` and
``reorder_by_map`` rewrites) and :mod:`.sequential` (the planner of
``sequential_buffer_access``):

* a :class:`Scope` is a block (or the whole function body) with its leaf
  statements, labelled as evidence labels them (:func:`analyses.instances.labels`:
  ``compute`` for the one statement of block ``compute``, ``compute_0``,
  ``compute_1``, ... for several, ``S<k>`` outside blocks), and its *items*: the
  top-level statements of its body, looking through ``SeqStmt``,
  ``Allocate`` and nested ``Block`` s.  An item is the unit a reorder regenerates;
* a :class:`Placement` puts a statement under a *band* of new outer loops:
  ``m`` quasi-affine functions of its loop counters, outermost first.  A
  statement with fewer band members than the others of its item runs
  before (``side`` 0) or after (2) the deeper loops, as it did in program
  order.  Its original loops that the band (with the loops kept inside it)
  does not determine stay loops (``kept``), picked innermost first, so that
  ``i + f`` as a band keeps ``f`` and recovers ``i = band - f``, as the RFC
  does for conv1d;
* :func:`time_map` gives every statement its time in one layout for the
  whole function, ``[p0, b0, q0, ..., b(r-1), q(r-1), t1, p1, ..., tD, pD]``:
  ``p`` are the model's sequence positions (2d+1 schedule), ``b``/``q`` the
  band values and their sequence positions (zero outside a band), ``t`` the
  original loop counters (zero where a band determines them).  Sorting
  instances by it is the new program order, which :func:`check_legal` holds
  against every dependence.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import IllegalTransformError, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import enclosing_loops, find_block
from polypad.ir.visitor import walk
from polypad.model import Model, StatementModel, extract
from polypad.model.affine import to_map


def empty_union_map() -> isl.UnionMap:
    """An empty ``isl.UnionMap`` without parameters, to union maps into."""
    return isl.UnionMap.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))


@dataclass(eq=False)
class Scope:
    """A block (``block`` None: the function body), its statements and items."""

    func: n.PrimFunc
    model: Model
    block: n.Block | None
    statements: list[StatementModel]  # in program order
    labels: dict[str, StatementModel]
    items: list[n.Stmt]
    item_of: dict[str, int]  # statement name -> index in items

    @property
    def body(self) -> n.Stmt:
        return self.func.body if self.block is None else self.block.body

    @property
    def title(self) -> str:
        return f"block {self.block.name!r}" if self.block is not None else "the function body"

    def label(self, s: StatementModel) -> str:
        """The user-facing name of ``s``: ``compute``, ``compute_0``, ``S2``..."""
        return next(k for k, v in self.labels.items() if v is s)

    def lookup(self, ref: str | int) -> StatementModel:
        """The statement a caller names by label or by index within the scope."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            if 0 <= ref < len(self.statements):
                return self.statements[ref]
        elif ref in self.labels:
            return self.labels[ref]
        known = ", ".join(self.labels) or "none"
        raise NotFoundError(f"no statement {ref!r} in {self.title}; statements: {known}")

    def item_statements(self, index: int) -> list[StatementModel]:
        return [s for s in self.statements if self.item_of[s.name] == index]


def scope_of(func: n.PrimFunc, block: str | n.Block | None) -> Scope:
    """The :class:`Scope` of ``block`` (a name, a node, or None for the body) in ``func``."""
    from analyses.instances import labels  # analyses imports polypad: not at import time

    node = None
    if block is not None:
        node = find_block(func, block if isinstance(block, str) else block.name)
    model = extract(func)
    body = func.body if node is None else node.body
    inside = {id(x) for x in walk(body)}
    statements = [s for s in model.statements if id(s.stmt) in inside]
    named = labels(model)
    scope_labels = {named[s.name]: s for s in statements}
    items = flatten_items(body)
    item_of = {}
    for index, item in enumerate(items):
        under = {id(x) for x in walk(item)}
        for s in statements:
            if id(s.stmt) in under:
                item_of[s.name] = index
    return Scope(func, model, node, statements, scope_labels, items, item_of)


def flatten_items(body: n.Stmt) -> list[n.Stmt]:
    """The top-level statements of ``body``, through ``SeqStmt``, ``Allocate`` and ``Block``."""
    if isinstance(body, n.SeqStmt):
        return [x for s in body.stmts for x in flatten_items(s)]
    if isinstance(body, (n.Allocate, n.Block)):
        return flatten_items(body.body)
    return [body]


def map_items(body: n.Stmt, fn) -> n.Stmt | None:
    """``body`` with each item replaced by ``fn(item)`` (a statement or ``None``)."""
    if isinstance(body, n.SeqStmt):
        parts = []
        for s in body.stmts:
            new = map_items(s, fn)
            if isinstance(new, n.SeqStmt):
                parts.extend(new.stmts)
            elif new is not None:
                parts.append(new)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else n.SeqStmt(tuple(parts), span=body.span)
    if isinstance(body, (n.Allocate, n.Block)):
        inner = map_items(body.body, fn)
        return None if inner is None else dataclasses.replace(body, body=inner)
    return fn(body)


def check_top_level(scope: Scope, primitive: str) -> None:
    """Refuse a block inside a loop: its statements' times would mix with the loop's."""
    if scope.block is not None and enclosing_loops(scope.func, scope.block):
        raise PolypadError(f"{primitive}: {scope.title} sits inside a loop; "
                           "only a block outside every loop can be reordered")


# ---------------------------------------------------------------- placements


@dataclass(eq=False)
class Placement:
    """A statement's band (functions of its loop counters) and the loops it keeps."""

    statement: StatementModel
    band: tuple[isl.PwAff, ...]
    side: int = 1  # sequence position after the last band member: 0 before, 2 after
    kept: tuple[bool, ...] = field(default=())

    @property
    def depth(self) -> int:
        return len(self.band)


def band_map(s: StatementModel, band: tuple[isl.PwAff, ...]) -> isl.Map:
    """``S[x] -> [band(x)]`` on the statement's domain."""
    return to_map(s.space, list(band), None).intersect_domain(s.domain)


def _loop_map(s: StatementModel, dims: list[int]) -> isl.Map:
    return to_map(s.space, [s.space.var(s.loop_vars[j]) for j in dims], None).intersect_domain(
        s.domain)


def kept_loops(s: StatementModel, band: tuple[isl.PwAff, ...]) -> tuple[bool, ...]:
    """Which loops of ``s`` stay loops under ``band``: innermost first, a loop goes
    when the band and the loops kept so far determine its counter."""
    kept: list[int] = []
    key_band = band_map(s, band)
    for j in reversed(range(len(s.loop_vars))):
        key = key_band
        if kept:
            key = key.flat_range_product(_loop_map(s, sorted(kept)))
        if not key.reverse().apply_range(_loop_map(s, [j])).is_single_valued():
            kept.append(j)
    return tuple(j in kept for j in range(len(s.loop_vars)))


def place(s: StatementModel, band: tuple[isl.PwAff, ...], side: int = 1) -> Placement:
    """A :class:`Placement` of ``s`` under ``band``, with its kept loops worked out."""
    return Placement(s, band, side, kept_loops(s, band))


def set_sides(placements: list[Placement], r: int) -> None:
    """Statements with fewer than ``r`` band members go before or after the deeper loops
    of their item, as they did in program order."""
    full = [p.statement.position for p in placements if p.depth == r]
    first = min(full, default=None)
    for p in placements:
        if p.depth < r:
            p.side = 0 if first is None or p.statement.position < first else 2


# ---------------------------------------------------------------- times


def layout_length(r: int, depth: int) -> int:
    return 1 + 2 * r + 2 * depth


def entries(s: StatementModel, placement: Placement | None, r: int, depth: int) -> list:
    """The time of ``s`` as a list of ints (constants), PwAffs (band) and Vars (loops)."""
    out: list = [s.position[0]]
    for k in range(r):
        if placement is not None and k < placement.depth:
            last = k == placement.depth - 1
            out += [placement.band[k], placement.side if last else 1]
        else:
            out += [0, 0]
    for j, var in enumerate(s.loop_vars):
        keep = placement is None or placement.kept[j]
        out += [var if keep else 0, s.position[j + 1]]
    out += [0] * (layout_length(r, depth) - len(out))
    return out


def time_map(s: StatementModel, items: list) -> isl.Map:
    """``S[x] -> [items...]`` on the domain of ``s`` (see :func:`entries`)."""
    sp = s.space
    pws = []
    for e in items:
        if isinstance(e, int):
            pws.append(sp.const(e))
        elif isinstance(e, n.Var):
            pws.append(sp.var(e))
        else:
            pws.append(e)
    return to_map(sp, pws, None).intersect_domain(s.domain)


def function_schedule(model: Model, placements: dict[str, Placement], r: int) -> isl.UnionMap:
    """Every statement of ``model`` at its new time; unplaced ones keep their order."""
    from analyses.instances import depth_of

    depth = depth_of(model)
    out = empty_union_map()
    for s in model.statements:
        out = out.union(isl.UnionMap.from_map(
            time_map(s, entries(s, placements.get(s.name), r, depth))))
    return out


def check_legal(func: n.PrimFunc, schedule: isl.UnionMap, primitive: str) -> None:
    """Raise :class:`IllegalTransformError` when ``schedule`` breaks a dependence of ``func``."""
    import analyses

    found = analyses.dependences(func).violations(schedule)
    if found is not None:
        raise IllegalTransformError(f"{primitive} would break a dependence: {found}", found)


def parse_band(scope: Scope, text: str, primitive: str) -> dict[str, tuple[isl.PwAff, ...]]:
    """``{ <label>[loop counters] -> [band...]; ... }`` as band functions by statement name."""
    try:
        umap = isl.UnionMap(text)
    except isl.Error as err:
        raise PolypadError(f"{primitive}: cannot read the band {text!r} as an ISL map: "
                           f"{err}") from None
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    out: dict[str, tuple[isl.PwAff, ...]] = {}
    for m in maps:
        s = scope.lookup(m.get_tuple_name(isl.dim_type.in_))
        count = m.dim(isl.dim_type.in_)
        if count != len(s.loop_vars):
            raise PolypadError(f"{primitive}: {scope.label(s)} has {len(s.loop_vars)} loops "
                               f"but the band gives it {count} counters")
        m = m.set_tuple_name(isl.dim_type.in_, s.name)
        for k in range(count):
            m = m.set_dim_name(isl.dim_type.in_, k, s.space.space.get_dim_name(
                isl.dim_type.set, k))
        if m.has_tuple_name(isl.dim_type.out):
            m = m.reset_tuple_id(isl.dim_type.out)
        m = m.intersect_domain(s.domain)
        if not m.is_single_valued() or not m.domain().is_equal(s.domain):
            raise PolypadError(f"{primitive}: the band of {scope.label(s)} must be a function "
                               "defined on every instance")
        pma = isl.PwMultiAff.from_map(m)
        band = tuple(pma.get_at(k) for k in range(m.dim(isl.dim_type.out)))
        if not band:
            raise PolypadError(f"{primitive}: the band of {scope.label(s)} is empty")
        out[s.name] = band
    return out


def item_label(scope: Scope, index: int) -> str:
    names = ", ".join(scope.label(s) for s in scope.item_statements(index))
    return f"the loop nest of {names}"


__all__ = [
    "Placement", "Scope", "band_map", "check_legal", "check_top_level", "empty_union_map",
    "entries", "flatten_items", "function_schedule", "item_label", "kept_loops",
    "layout_length", "map_items", "parse_band", "place", "scope_of", "set_sides", "time_map",
]
