"""Where a compute-location primitive puts a block: the block, the loop, and what one
iteration of the loop touches.

``compute_at``, ``reverse_compute_at``, ``store_at`` and the caches placed at
a loop (``cache_read``/``cache_write`` with ``at=``) share one vocabulary: a
:class:`Placement` holds the function's model, the moved block's nest and
statements, the target loop and the statements under it.  An iteration of
the loop (and of the loops around it) is the isl tuple ``_at[c0, ..., ck]``,
named by the loop variables; :func:`at_iteration` gives the elements the
statements under the loop touch at each iteration, and :func:`new_times`
the program order after a move, for the legality checks
(:mod:`.location_legality`).
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, find_block, find_loop
from polypad.ir.opaque import check_text
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model import Model, StatementModel, extract
from polypad.model.conditions import condition_set
from polypad.model.domains import loop_bounds
from polypad.model.isl_helpers import empty_union_map, maps_of, time_map

AT = "_at"  # tuple name of an iteration of the target loop (and the loops around it)


@dataclasses.dataclass
class Placement:
    """What the compute-location primitives share: the model, the moved block's nest and
    statements, the target loop and the statements under it."""

    func: n.PrimFunc
    model: Model
    block: n.Block
    nest: n.Stmt
    moved: list[StatementModel]
    loop: n.For
    under: list[StatementModel]
    depth: int  # the target loop and the loops around it
    where: str

    @property
    def outer_vars(self) -> tuple[n.Var, ...]:
        return self.under[0].loop_vars[:self.depth]


def placement(func: n.PrimFunc, block: str, loop, primitive: str) -> Placement:
    """Find and check the block and the loop that ``primitive`` is about."""
    from analyses.instances import leaf_range

    where = f"{primitive}({block!r}, {loop if isinstance(loop, str) else loop.var.name!r})"
    found = find_block(func, block)
    target = find_loop(func, loop)
    nest = nest_of(func, found)
    if any(isinstance(a, n.For) for a in ancestors(func, nest)[:-1]):
        raise PolypadError(f"{where}: block {block!r} sits inside a loop; only a block whose "
                           "loop nest is at the function's top level can be moved")
    model = extract(func)
    first, stop = leaf_range(func.body, nest)
    moved = list(model.statements[first:stop])
    others = sorted({s.block for s in moved if s.block != block}, key=str)
    if others:
        raise PolypadError(f"{where}: the loop nest of block {block!r} also runs "
                           f"{', '.join(map(repr, others))}; distribute it first")
    u_first, u_stop = leaf_range(func.body, target)
    if first < u_stop and u_first < stop:
        raise PolypadError(f"{where}: loop {loop!r} is a loop of block {block!r} itself")
    # A T.assume under the loop reads like any statement there (its fact is about the
    # values at its point): the region and the dependence check count it.
    under = list(model.statements[u_first:u_stop])
    if not under:
        raise PolypadError(f"{where}: loop {loop!r} runs no statement")
    for s in moved:
        # A let of loop counters (a block's axes) is inlined where the loops are
        # regenerated; a let that loads would read at another time.
        loads = any(isinstance(x, n.BufferLoad) for value in s.lets.values() for x in walk(value))
        if loads or s.may:
            raise PolypadError(f"{where}: {s.block}'s statement {show(s.stmt)} uses a let "
                               "that loads or a data-dependent guard, which cannot be "
                               "regenerated")
        if s.is_assume:
            # Its instances follow no write, so no iteration is the one to run them at;
            # dropping the fact silently would lose what the user stated.
            raise PolypadError(f"{where}: block {block!r} holds {show(s.stmt.value)}, which "
                               "cannot be placed in the loop; move it out of the block first "
                               "(or drop it with pp.transform.remove_assume)")
        if s.is_assert:
            # Run once per iteration of the loop it would move into, it would run where
            # nothing said it runs; run at one iteration only, stores of the others
            # would cross it (no effect moves across an assert: analyses.dataflow).
            raise PolypadError(f"{where}: block {block!r} holds {check_text(s.stmt)}, which "
                               "cannot be placed in the loop; move it out of the block first")
    depth = next(k for k, lp in enumerate(under[0].loops) if lp is target) + 1
    return Placement(func, model, found, nest, moved, target, under, depth, where)


def nest_of(func: n.PrimFunc, node: n.Stmt) -> n.Stmt:
    """The outermost statement around ``node`` that holds nothing else: up through the
    loops, ifs, lets and blocks that have ``node`` as their only content."""
    path = ancestors(func, node)
    k = len(path) - 1
    while k > 0 and isinstance(path[k - 1], (n.For, n.IfThenElse, n.LetStmt, n.Block)):
        k -= 1
    return path[k]


# ---------------------------------------------------------------- the region


def at_iteration(p: Placement, relations) -> isl.UnionMap:
    """``_at[c] -> Buf[e]``: the elements the statements under the loop touch through
    ``relations`` (maps from their instances) at iteration ``c`` of the loop and the
    loops around it."""
    out = empty_union_map()
    for rel in relations:
        if isinstance(rel, isl.Map):
            rel = isl.UnionMap.from_map(rel)
        for m in maps_of(rel):
            m = m.project_out(isl.dim_type.in_, p.depth, m.dim(isl.dim_type.in_) - p.depth)
            out = out.union(isl.UnionMap.from_map(name_at(p, m)))
    return out


def name_at(p: Placement, m: isl.Map) -> isl.Map:
    m = m.set_tuple_name(isl.dim_type.in_, AT)
    for k, var in enumerate(p.outer_vars):
        m = m.set_dim_name(isl.dim_type.in_, k, p.model.names.name(var))
    return m


def parameterised(p: Placement, m: isl.Map) -> isl.Set:
    """The range of ``_at[c] -> S[x]`` with ``c`` as parameters (the loop variables)."""
    count = m.dim(isl.dim_type.in_)
    if m.get_tuple_name(isl.dim_type.in_) != AT:
        m = name_at(p, m)
    return m.move_dims(isl.dim_type.param, m.dim(isl.dim_type.param),
                       isl.dim_type.in_, 0, count).range()


def context(p: Placement) -> isl.Set:
    """What holds of the loop and the loops around it, as a parameter set: their
    bounds.

    Only the bounds: a guard of the statements under the loop may rule out whole
    iterations of it (``if 128 * j_0 + 32 * j_1 + j_2 < 64`` leaves ``j_1 >= 2``
    empty), but what is emitted there (a copy, a producer) runs at every iteration,
    so the code built for it must test such conditions itself.  A guard around the
    loop is left out too: the statements' guards do not say which of them stand
    outside it, and a weaker context only costs a redundant test.
    """
    s = p.under[0]
    outer = s.space.universe
    for loop in s.loops[:p.depth]:
        for bound in loop_bounds(loop):
            try:
                outer = outer.intersect(condition_set(bound, s.space))
            except NotAffineError:
                continue  # an unknown bound: the context says less, which is safe
    outer = outer.project_out(isl.dim_type.set, p.depth, outer.dim(isl.dim_type.set) - p.depth)
    outer = outer.set_tuple_name(AT)
    for k, var in enumerate(p.outer_vars):
        outer = outer.set_dim_name(isl.dim_type.set, k, p.model.names.name(var))
    return outer.move_dims(isl.dim_type.param, outer.dim(isl.dim_type.param),
                           isl.dim_type.set, 0, p.depth).params().coalesce()


# ---------------------------------------------------------------- the order after a move


def new_times(p: Placement, places: dict[str, isl.Map], slot: int) -> isl.UnionMap:
    """Every statement's time after the move, for the dependence check: a moved
    instance ``S[x]`` at the iteration ``places[S]`` maps it to (``S[x] -> _at[c]``),
    at position ``slot`` in the loop's body (-1: first; large: last), in its original
    order there; instances not placed, and every other statement, where they were."""
    prefix = _prefix(p)
    size = max(s.time.dim(isl.dim_type.out) for s in p.model.statements)
    size = max(size, 2 * p.depth + 1 + size)
    out = empty_union_map()
    for s in p.model.statements:
        place = places.get(s.name)
        if place is None:
            out = out.union(isl.UnionMap.from_map(_pad(s.time, size)))
            continue
        head = place.apply_range(prefix)
        at_slot = isl.Map.from_domain_and_range(
            s.domain, isl.Set(f"{{ [{slot}] }}")).intersect_domain(place.domain())
        moved = head.flat_range_product(at_slot).flat_range_product(
            s.time.intersect_domain(place.domain()))
        kept = s.time.subtract_domain(place.domain())
        out = out.union(isl.UnionMap.from_map(_pad(moved, size)))
        out = out.union(isl.UnionMap.from_map(_pad(kept, size)))
    return out


def _prefix(p: Placement) -> isl.Map:
    """``_at[c] -> [t0, ..., t(2k-1)]``: the loop's iteration in program time.

    Built on the universe, not from a statement's time: that holds only the
    iterations where the statement runs, and the first statement under the loop
    may be guarded (a ``T.init()``'s store runs at ``k == 0`` only), which would
    leave the moved instances of the other iterations with no time at all."""
    s = p.under[0]
    entries: list = []
    for level in range(p.depth):
        entries += [s.position[level], s.loop_vars[level]]
    time = time_map(s.space, entries, s.space.universe)
    time = time.project_out(isl.dim_type.in_, p.depth, len(s.loop_vars) - p.depth)
    return name_at(p, time)


def _pad(m: isl.Map, size: int) -> isl.Map:
    extra = size - m.dim(isl.dim_type.out)
    m = m.add_dims(isl.dim_type.out, extra)
    for d in range(size - extra, size):
        m = m.fix_val(isl.dim_type.out, d, isl.Val(0))
    return m

