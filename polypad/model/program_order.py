"""Program order: the 2d+1 time map of each statement and the ISL schedule tree.

Each instance of a statement at loop depth ``d`` runs at time
``[p0, l1, p1, l2, ..., ld, pd, 0, ...]``: the loop counters ``l`` interleaved
with the statement's sequence position ``p`` at each level, padded with zeros
to the deepest statement's length.  Lexicographic order on these vectors is
program order.  Sequence positions count the loops and leaf statements
directly in a level, through ``if``/``let``/block/allocation wrappers, so the
then- and else-branches of an ``if`` take consecutive positions.

The schedule tree has a band per loop (over every statement inside it) and a
sequence node wherever a level holds several loops or statements; it is what
``isl.AstBuild.node_from_schedule`` turns back into loops.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir.deep import guarded

from .affine import AffineSpace, to_map
from .isl_helpers import time_map
from .nest import Leaf, LeafItem, LoopItem


def leaf_time(leaf: Leaf, space: AffineSpace, domain: isl.Set, depth: int) -> isl.Map:
    """``S[...] -> [p0, l1, p1, ..., 0...]`` of length ``2 * depth + 1`` on ``domain``."""
    entries: list = [leaf.position[0]]
    for level, var in enumerate(leaf.loop_vars):
        entries += [var, leaf.position[level + 1]]
    return time_map(space, entries, domain, 2 * depth + 1)


def schedule_tree(model) -> isl.Schedule:
    """The schedule tree of ``model`` (a :class:`polypad.model.Model`)."""
    tree = _items_schedule(model.tree, model.statements)
    if tree is None:
        return isl.Schedule.from_domain(model.domain())
    return tree


@guarded
def _items_schedule(items: list, statements) -> isl.Schedule | None:
    parts = []
    for item in items:
        if isinstance(item, LeafItem):
            stmt = statements[item.index]
            parts.append(isl.Schedule.from_domain(isl.UnionSet.from_set(stmt.domain)))
        elif isinstance(item, LoopItem):
            inner = _items_schedule(item.items, statements)
            if inner is None:
                continue
            band = _loop_band(item, statements)
            parts.append(inner.insert_partial_schedule(band))
    if not parts:
        return None
    out = parts[0]
    for part in parts[1:]:
        out = out.sequence(part)
    return out


def _loop_band(item: LoopItem, statements) -> isl.MultiUnionPwAff:
    """``{ S[...] -> [loop var] }`` for every statement under ``item``."""
    var = item.loop.var
    maps = None
    for index in _leaf_indices(item):
        stmt = statements[index]
        # Not restricted to the domain: the tree's domain node does that, and an
        # empty piece would leave ISL unable to tell the band's range space.
        um = isl.UnionMap.from_map(to_map(stmt.space, [stmt.space.var(var)], None))
        maps = um if maps is None else maps.union(um)
    return isl.MultiUnionPwAff.from_union_map(maps)


@guarded
def _leaf_indices(item: LoopItem) -> list[int]:
    out: list[int] = []
    for child in item.items:
        if isinstance(child, LeafItem):
            out.append(child.index)
        else:
            out += _leaf_indices(child)
    return out
