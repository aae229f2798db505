"""Where each statement of a rescheduled block runs: the band, the new times.

The vocabulary shared by :mod:`.reschedule` (the ``distribute`` and
``reorder_by_map`` rewrites) and :mod:`.sequential` (the planner of
``sequential_buffer_access``), on a :class:`.reschedule_scope.Scope` (a
block, its statements and items, and the ``e`` loops around it):

* a :class:`Placement` puts a statement under a *band* of new outer loops:
  ``m`` quasi-affine functions of its loop counters, outermost first.  A
  statement with fewer band members than the others of its item runs
  before (``side`` 0) or after (2) the deeper loops, as it did in program
  order.  Its original loops that the band (with the loops kept inside it)
  does not determine stay loops (``kept``), picked innermost first, so that
  ``i + f`` as a band keeps ``f`` and recovers ``i = band - f``, as the RFC
  does for conv1d.  The ``e`` loops around the block are always kept: the
  band orders the block's work at one iteration of them;
* :func:`entries` gives every statement its time in one layout for the
  whole function, ``[p0, t1, p1, ..., te, pe, b0, q0, ..., b(r-1), q(r-1),
  t(e+1), p(e+1), ..., tD, pD]``: ``p`` are the model's sequence positions
  (2d+1 schedule), ``t`` the original loop counters (zero where a band
  determines them), ``b``/``q`` the band values and their sequence positions
  (zero outside a band).  The enclosing counters come first, so an instance
  never leaves its iteration of the loops around the block.  Sorting
  instances by it is the new program order (:func:`function_schedule`), which
  :func:`.legality.check_order` holds against every dependence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import PolypadError
from polypad.isl_failure import rise_if_exhausted
from polypad.model import Model, StatementModel
from polypad.model.affine import to_map
from polypad.model.isl_helpers import maps_of, time_map, union_all

from .reschedule_scope import Scope

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


def kept_loops(s: StatementModel, band: tuple[isl.PwAff, ...],
               fixed: int = 0) -> tuple[bool, ...]:
    """Which loops of ``s`` stay loops under ``band``: the ``fixed`` outer ones, then,
    innermost first, a loop goes when the band and the loops kept so far determine
    its counter."""
    kept: list[int] = list(range(fixed))
    key_band = band_map(s, band)
    for j in reversed(range(fixed, len(s.loop_vars))):
        key = key_band
        if kept:
            key = key.flat_range_product(_loop_map(s, sorted(kept)))
        if not key.reverse().apply_range(_loop_map(s, [j])).is_single_valued():
            kept.append(j)
    return tuple(j in kept for j in range(len(s.loop_vars)))


def place(s: StatementModel, band: tuple[isl.PwAff, ...], side: int = 1,
          fixed: int = 0) -> Placement:
    """A :class:`Placement` of ``s`` under ``band``, with its kept loops worked out;
    ``fixed`` loops around the block stay."""
    return Placement(s, band, side, kept_loops(s, band, fixed))


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


def entries(s: StatementModel, placement: Placement | None, r: int, depth: int,
            fixed: int = 0) -> list:
    """The time of ``s`` as a list of ints (constants), PwAffs (band) and Vars (loops);
    the band goes after the first ``fixed`` loop levels (see the module docstring)."""
    loops: list = []
    for j, var in enumerate(s.loop_vars):
        keep = placement is None or placement.kept[j]
        loops += [var if keep else 0, s.position[j + 1]]
    # The counters and positions of the loops around the block, zero where
    # ``s`` (outside the block) has fewer loops: program order decides there.
    head = loops[:2 * fixed] + [0] * max(0, 2 * fixed - len(loops))
    band: list = []
    for k in range(r):
        if placement is not None and k < placement.depth:
            last = k == placement.depth - 1
            band += [placement.band[k], placement.side if last else 1]
        else:
            band += [0, 0]
    out = [s.position[0], *head, *band, *loops[2 * fixed:]]
    return out + [0] * (layout_length(r, depth) - len(out))


def function_schedule(model: Model, placements: dict[str, Placement], r: int,
                      fixed: int = 0) -> isl.UnionMap:
    """Every statement of ``model`` at its new time, the band after ``fixed`` loop
    levels; unplaced ones keep their order."""
    from analyses.instances import depth_of

    depth = depth_of(model)
    return union_all(
        time_map(s.space, entries(s, placements.get(s.name), r, depth, fixed), s.domain)
        for s in model.statements)


def parse_band(scope: Scope, text: str, primitive: str) -> dict[str, tuple[isl.PwAff, ...]]:
    """``{ <label>[loop counters] -> [band...]; ... }`` as band functions by statement name."""
    try:
        umap = isl.UnionMap(text)
    except isl.Error as err:
        rise_if_exhausted(err)  # the budget ran out, not the user's typo
        raise PolypadError(f"{primitive}: cannot read the band {text!r} as an ISL map: "
                           f"{err}") from None
    maps = maps_of(umap)
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
    "Placement", "band_map", "entries",
    "function_schedule", "item_label", "kept_loops", "layout_length", "parse_band", "place",
    "set_sides",
]
