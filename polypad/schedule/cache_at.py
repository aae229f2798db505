"""``cache_read`` / ``cache_write`` placed at a loop: a tile-local copy of a buffer.

Given ``at=loop``, the cache is allocated inside the loop, shaped as the box
of the elements the block touches in one iteration of the loop (and the
loops around it), and filled or flushed inside each iteration over exactly
that iteration's region (ISL, :mod:`.location_placement`).  The block's
accesses are shifted to the box's corner (:mod:`.location_box`).  A register
tile:

Before (``C`` tiled by ``io``/``jo``)::

    for io, jo in T.grid(2, 2):
        for ii, ji in T.grid(4, 4):
            with T.block("C"):
                C[4 * io + ii, 4 * jo + ji] = T.float32(0)
                for k in T.serial(8):
                    C[4 * io + ii, 4 * jo + ji] = C[4 * io + ii, 4 * jo + ji] + A[...] * B[...]

``cache_write("C", "C", "local", at="jo")``::

    for io, jo in T.grid(2, 2):
        C_local = T.alloc_buffer((4, 4), "float32", scope="local")
        for ii, ji in T.grid(4, 4):
            with T.block("C"):
                C_local[ii, ji] = T.float32(0)
                for k in T.serial(8):
                    C_local[ii, ji] = C_local[ii, ji] + A[...] * B[...]
        with T.block("C_local"):
            for ax0, ax1 in T.grid(4, 4):
                C[4 * io + ax0, 4 * jo + ax1] = C_local[ax0, ax1]

``cache_write`` flushes the elements the iteration writes; it fills first
(block ``C_local_in``) the elements the block reads before writing them in
the same iteration (flow dependences, :mod:`analyses.dataflow`) -- all it
touches when a write is data-dependent, so that flushing an unwritten
element writes back its own value.  ``cache_read`` fills what the iteration
reads.  This is exact as long as nothing else in the loop accesses the
buffer, which is checked: another statement that does, or (for
``cache_read``) a write of the buffer in the loop, is refused with an
:class:`IllegalTransformError` naming it.  The box must have a constant size.
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from analyses.evidence import Counterexample
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.locate import ancestors, find_block, find_buffer, find_loop, replace
from polypad.ir.naming import fresh_block_name
from polypad.ir.opaque import check_text
from polypad.ir.stages import seq
from polypad.ir.views import require_unshared
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, extract, pw_aff_to_expr
from polypad.model.isl_helpers import empty_union_map, union_sets

from .cache_common import cache_buffer, describe, require_access
from .checked_ast import checked_loops
from .exact_bounds import assumed
from .exact_bounds import bound as exact_bound
from .legality import refuse_crossed_check
from .location_ast import ExactLoops
from .location_box import ShiftToBox, box_around, one_map, relation_of
from .location_legality import refuse_access
from .location_placement import Placement, at_iteration, context


def cache_at(func: n.PrimFunc, block: str, buffer, scope: str, name: str | None, at,
             kind: str) -> tuple[n.PrimFunc, str]:
    """``func`` with ``block``'s accesses of ``buffer`` under loop ``at`` going to a
    cache allocated in that loop, and the cache's name; ``kind`` is read or write."""
    from analyses.instances import leaf_range

    primitive = f"cache_{kind}"
    where = f"{primitive} of {buffer if isinstance(buffer, str) else buffer.name} " \
            f"for {describe(block)} at loop {at if isinstance(at, str) else at.var.name!r}"
    if block is None:
        raise PolypadError(f"{where}: name the block whose accesses the cache serves")
    loop = find_loop(func, at)
    found = find_block(func, block)
    old = find_buffer(func, buffer)
    require_unshared(func, old, primitive)
    if not any(a is loop for a in ancestors(func, found)):
        raise PolypadError(f"{where}: the block is not inside loop {at!r}")
    require_access(found, old, kind, describe(block))
    model = extract(func)
    first, stop = leaf_range(func.body, found)
    # The block's T.assume loads go to the cache with its other accesses (the rewrite
    # shifts every load in the block), so the region counts them.
    inside = list(model.statements[first:stop])
    l_first, l_stop = leaf_range(func.body, loop)
    for s in model.statements[l_first:l_stop]:
        if s in inside:
            continue
        for a in s.accesses:
            if a.buffer is old:
                refuse_access(model, s, a, f"{where}: {{who}} also {a.kind}s {old.name} in the "
                              "loop, where the cache would hide it")
    if kind == "read":
        for s in inside:
            for a in s.accesses:
                if a.buffer is old and a.kind == "write":
                    refuse_access(model, s, a, f"{where}: {{who}} writes {old.name}, so the "
                                  "block's reads would see a stale copy")
    if kind == "write":
        refuse_crossed_check(loop.body, where, "the copy-out at the end of each iteration")
    else:
        _refuse_loads_before_check(loop.body, found, old, where)
    depth = next(k for k, lp in enumerate(inside[0].loops) if lp is loop) + 1
    p = Placement(func, model, found, found, [], loop, inside, depth, where)
    touched = one_map(at_iteration(p, [relation_of(s, old) for s in inside]))
    lo, shape = box_around(p, touched)
    cache = cache_buffer(func, old, scope, name)
    cache = n.Buffer(cache.name, tuple(shape), old.dtype, (), scope)
    ctx = context(p)
    # The T.assume facts before the loop let a bound keep its counter's dtype.
    known = assumed(func, loop, model.names)
    corner = [_corner(p, pa, ctx, known) for pa in lo]
    body = ShiftToBox(model, old, cache, corner, found, where).visit(loop.body)
    stages = []
    if kind == "read":
        stages.append(_copy(p, touched, lo, old, cache, corner, ctx, known,
                            fresh_block_name(func, cache.name), into_cache=True))
        stages.append(body)
    else:
        filled = _exposed(p, old, touched)
        if filled is not None:
            stages.append(_copy(p, filled, lo, old, cache, corner, ctx, known,
                                fresh_block_name(func, f"{cache.name}_in"), into_cache=True))
        stages.append(body)
        written = one_map(at_iteration(p, [relation_of(s, old, "write") for s in inside]))
        stages.append(_copy(p, written, lo, old, cache, corner, ctx, known,
                            fresh_block_name(func, cache.name), into_cache=False))
    new_loop = dataclasses.replace(loop, body=n.Allocate(cache, seq(*stages)))
    return replace(func, loop, new_loop), cache.name


def _refuse_loads_before_check(body: n.Stmt, block: n.Stmt, buffer: n.Buffer,
                               where: str) -> None:
    """Refuse a copy-in that would load ``buffer`` before an assert that ran before the
    load in the original iteration: the assert is a fact for the load's bounds (and
    where it fails, nothing after it ran), so no load moves above one either.

    An assert comes before a load of ``block`` in one iteration of the loop where the
    load follows it in the text, or where both are in one inner loop of ``body`` (a
    later inner iteration's load follows the assert).  The assert's own loads do not
    count: it does not guard them."""
    from polypad.ir.show import show

    order = {id(x): k for k, x in enumerate(walk(body))}
    loads = [x for x in walk(block) if isinstance(x, n.BufferLoad) and x.buffer is buffer]
    inner = [x for x in walk(body) if isinstance(x, n.For)]
    for check in (x for x in walk(body) if isinstance(x, n.Assert)):
        own = {id(x) for x in walk(check)}
        around = next((lp for lp in inner if any(x is check for x in walk(lp))), None)
        shared = {id(x) for x in walk(around)} if around is not None else set()
        late = [x for x in loads if id(x) not in own
                and (order[id(x)] > order[id(check)] or id(x) in shared)]
        if late:
            text = check_text(check)
            raise IllegalTransformError(
                f"{where}: the copy-in at the start of each iteration would load "
                f"{show(late[0])} before {text}, which guards it (no load moves above an "
                "assert: it is a fact for the load's bounds)",
                Counterexample(f"{show(late[0])} is loaded after {text} in the iteration, "
                               "and the copy-in would load it before"))


def _corner(p: Placement, pa: isl.PwAff, ctx: isl.Set, known: isl.Set) -> n.Expr:
    """The box's corner ``pa`` over the loop variables around the cache, in a form
    that does not wrap where the loops run (:mod:`.exact_bounds`)."""
    vars = list(p.outer_vars)
    e = pw_aff_to_expr(pa, vars, p.model.names)
    space = AffineSpace([], names=p.model.names)
    return exact_bound(e, [], p.model.names, space, space.universe.intersect_params(ctx), known)


def _exposed(p: Placement, buffer: n.Buffer, touched: isl.Map) -> isl.Map | None:
    """``_at[c] -> Buf[e]``: what the block reads at iteration ``c`` before writing it there
    (all it touches where a write may not happen); ``None`` for nothing."""
    from analyses.dataflow import Dependences

    if any(a.may for s in p.under for a in s.accesses if a.buffer is buffer):
        return touched
    reads = union_sets(a.relation.wrap() for s in p.under for a in s.accesses
                       if a.buffer is buffer and a.kind == "read")
    if reads.is_empty():
        return None
    iteration = empty_union_map()
    for s in p.under:
        project = isl.Map.from_domain_and_range(s.domain, s.domain)
        project = isl.Map.identity(project.get_space()).intersect_domain(s.domain)
        project = project.project_out(isl.dim_type.out, p.depth,
                                      len(s.loop_vars) - p.depth).set_tuple_name(
            isl.dim_type.out, "_at")
        iteration = iteration.union(isl.UnionMap.from_map(project))
    same = iteration.apply_range(iteration.reverse())
    # Pairs within one iteration of the loop: asked of the statements under it.
    flow = Dependences(p.model, buffers=[buffer], inside=p.loop).tagged("flow")
    inner = flow.zip().intersect_domain(same.wrap()).zip()
    exposed = reads.subtract(inner.range())
    if exposed.is_empty():
        return None
    return one_map(at_iteration(p, [exposed.unwrap()]))


def _copy(p: Placement, region: isl.Map, lo: list[isl.PwAff], old: n.Buffer, cache: n.Buffer,
          corner: list[n.Expr], ctx: isl.Set, known: isl.Set, name: str, *,
          into_cache: bool) -> n.Stmt:
    """``with T.block(name): for ax...: cache[ax] = old[corner + ax]`` (or back) over the
    elements of ``region`` at the current iteration, bounds and guards in forms that do
    not wrap there (``known``: :func:`.exact_bounds.assumed`)."""
    tuple_name = region.get_tuple_name(isl.dim_type.out)
    corner_map = isl.PwMultiAff.from_pw_aff(lo[0])
    for pa in lo[1:]:
        corner_map = corner_map.flat_range_product(isl.PwMultiAff.from_pw_aff(pa))
    shift = isl.Map.from_pw_multi_aff(corner_map).set_tuple_name(isl.dim_type.out, tuple_name)
    local = region.sum(shift.neg())
    count = local.dim(isl.dim_type.in_)
    local = local.move_dims(isl.dim_type.param, local.dim(isl.dim_type.param),
                            isl.dim_type.in_, 0, count).range().set_tuple_name("copy")
    schedule = isl.Map.identity(local.get_space().map_from_set()).intersect_domain(local)
    size = local.dim(isl.dim_type.set)
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, size)
    for k in range(size):
        ids = ids.add(isl.Id(f"ax{k}"))
    build = isl.AstBuild.from_context(ctx).set_iterators(ids)

    def user(_, args):
        outer = tuple(a if isinstance(c, n.IntImm) and c.value == 0 else op.add(c, a)
                      for c, a in zip(corner, args, strict=True))
        inner = tuple(args)
        if into_cache:
            return n.BufferStore(cache, n.BufferLoad(old, outer), inner)
        return n.BufferStore(old, n.BufferLoad(cache, inner), outer)

    # The copy's counters add to the corner: they count in its dtype (and the loop's).
    dtype = p.loop.var.dtype
    for c in corner:
        if not isinstance(c, n.IntImm):
            dtype = dtypes.wider(dtype, c.dtype)
    # Checked to copy exactly the region's elements (ISL can lose strided ones).
    loops = checked_loops(build, isl.UnionMap.from_map(schedule), size,
                          lambda: ExactLoops(p.model, ctx, dtype, known, user, as_built=True),
                          {"copy": local}, f"{p.where}: the copy {name!r}")
    return n.Block(name, loops)
