"""Conveniences over isl that the model, the schedule primitives and the layouts share.

islpy builds empty unions from a space, unions from one map at a time, and
hands out the maps of a union through a callback; these say each of those
once:

>>> union_all([S0_time, S1_time])          # one isl.UnionMap
>>> maps_of(deps)                          # [isl.Map, ...]
>>> coordinate(point, isl.dim_type.set, 0) # a Python int
>>> fix(domain, (3, 0), {"n": 8})          # the set at one point, n = 8

:func:`time_map` builds the map from a statement's instances to a time
vector of constants, loop counters and quasi-affine pieces, the form of the
2d+1 schedule (:mod:`.program_order`) and of every order a schedule
primitive proposes (:mod:`polypad.schedule.reschedule_plan`).
:func:`involved_positions` finds the few dimensions an affine function or
constraint of a deep nest uses without reading every coefficient.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import islpy as isl

from polypad.ir import nodes as n

from .affine import AffineSpace, to_map


def _no_params() -> isl.Space:
    return isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0)


def empty_union_map() -> isl.UnionMap:
    """An empty ``isl.UnionMap`` without parameters, to union maps into."""
    return isl.UnionMap.empty(_no_params())


def empty_union_set() -> isl.UnionSet:
    """An empty ``isl.UnionSet`` without parameters, to union sets into."""
    return isl.UnionSet.empty(_no_params())


def union_all(maps: Iterable[isl.Map | isl.UnionMap]) -> isl.UnionMap:
    """The union of ``maps`` (maps or union maps); empty for none."""
    out = empty_union_map()
    for m in maps:
        out = out.union(m if isinstance(m, isl.UnionMap) else isl.UnionMap.from_map(m))
    return out


def union_sets(sets: Iterable[isl.Set | isl.UnionSet]) -> isl.UnionSet:
    """The union of ``sets`` (sets or union sets); empty for none."""
    out = empty_union_set()
    for s in sets:
        out = out.union(s if isinstance(s, isl.UnionSet) else isl.UnionSet.from_set(s))
    return out


def maps_of(umap: isl.UnionMap) -> list[isl.Map]:
    """The maps of ``umap``, one per pair of spaces, in isl's order."""
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def coordinate(point: isl.Point, kind: isl.dim_type, k: int) -> int:
    """The ``k``-th coordinate of ``kind`` (``set``, ``param``...) of ``point``, an int."""
    return int(point.get_coordinate_val(kind, k).to_python())


def fix(s: isl.Set, coords, params: dict[str, int]) -> isl.Set:
    """``s`` with its first set dims at ``coords`` and the named parameters at their values."""
    for j, v in enumerate(coords):
        s = s.fix_val(isl.dim_type.set, j, isl.Val(str(int(v))))
    for p in range(s.dim(isl.dim_type.param)):
        name = s.get_dim_name(isl.dim_type.param, p)
        if name in params:
            s = s.fix_val(isl.dim_type.param, p, isl.Val(str(int(params[name]))))
    return s


def time_map(space: AffineSpace, entries: Sequence, domain: isl.Set,
             length: int | None = None) -> isl.Map:
    """``S[...] -> [entries..., 0...]`` on ``domain``: each entry an int (a constant), a
    ``Var`` (a counter of ``space``) or an ``isl.PwAff`` over ``space``; zeros pad the
    vector to ``length`` when it is given."""
    pws = []
    for e in entries:
        if isinstance(e, int):
            pws.append(space.const(e))
        elif isinstance(e, n.Var):
            pws.append(space.var(e))
        else:
            pws.append(e)
    if length is not None:
        pws += [space.const(0)] * (length - len(pws))
    return to_map(space, pws, None).intersect_domain(domain)


#: Dimensions below which :func:`involved_positions` asks for every coefficient.
FEW_DIMS = 8


def involved_positions(obj, dim_type: isl.dim_type) -> list[int] | range:
    """The positions of ``dim_type`` whose coefficient in ``obj`` (an ``isl.Aff`` or
    ``isl.Constraint``) may be nonzero, in order.

    Every position with a nonzero coefficient is there (ISL's ``involves_dims``
    also counts a dimension an integer division uses, which only costs a look
    at a zero coefficient).  The ranges that involve nothing are skipped by
    halves: an instance of a 64-deep nest as a function of another has 129
    dimensions and one or two terms, and reading every coefficient took most of
    the time of writing it as IR.
    """
    count = obj.dim(dim_type)
    if count <= FEW_DIMS:
        return range(count)
    out: list[int] = []

    def visit(first: int, size: int) -> None:
        if not obj.involves_dims(dim_type, first, size):
            return
        if size <= FEW_DIMS // 2:
            out.extend(range(first, first + size))
            return
        half = size // 2
        visit(first, half)
        visit(first + half, size - half)

    visit(0, count)
    return out
