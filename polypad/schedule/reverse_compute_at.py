"""The rewrite behind ``Schedule.reverse_compute_at``: a consumer computed inside its
producer's loop, each iteration what that iteration completed.

Before::

    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B"):
                B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
    for i in T.serial(14):
        with T.block("C"):
            C[i] = B[i] + B[i + 1] + B[i + 2]

``reverse_compute_at(f, "C", "io")``::

    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B"):
                B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
        with T.block("C"):
            for i in T.serial(T.max(4 * io - 2, 0), ...):
                C[i] = B[i] + B[i + 1] + B[i + 2]

A consumer instance runs, at the end of the loop's body, in the first
iteration after which every element it reads from the statements under the
loop has its final value there (the iteration of the last write of each
element, in ISL); each instance runs once, so no recomputation.  The new
order must keep every dependence of the function
(:meth:`analyses.Dependences.violations`,
:func:`.location_legality.check_reverse_compute_at`), else
:class:`IllegalTransformError` with the two instances and the element.  A
consumer instance that reads nothing the loop writes goes with its block
instance (a ``T.init()``'s store goes where the update at the same loop
values goes, just before it, as TVM moves a block with its init); one with
no such instance has no iteration to go to and is refused.  Such a
reduction block (one update, its loops outside it) then stays whole under
the regenerated loops, its axes bound to them and its ``T.init()`` kept,
as TVM 0.27 prints the same schedule: each instance runs its init at the
reduce axes' start and then its update, the order of the placement.  Shapes as for
:mod:`.compute_at`: the consumer's block holds a loop nest of its own at the
function's top level, after the loop.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.block_header import layout
from polypad.ir.visitor import walk
from polypad.model.isl_helpers import maps_of, union_all

from .compute_at import rewrite
from .location_legality import check_reverse_compute_at
from .location_placement import AT, name_at, placement


def reverse_compute_at(func: n.PrimFunc, block: str, loop) -> n.PrimFunc:
    """``func`` with consumer ``block`` computed inside ``loop``; see the module docstring."""
    from analyses.instances import instance, point_coordinates

    p = placement(func, block, loop, "reverse_compute_at")
    if p.moved[0].position < p.under[-1].position:
        raise PolypadError(f"{p.where}: block {block!r} runs before loop {loop!r}; "
                           "use compute_at to move a producer")
    ready = _completed_at(p)
    places, required = {}, {}
    for s in p.moved:
        reads = s.reads.intersect_range(union_all([u.writes for u in p.under]).range())
        maps = maps_of(reads.apply_range(ready))
        places[s.name] = maps[0].lexmax() if maps else None
    for s in p.moved:
        place = _with_its_block_instance(p, s, places)
        missing = s.domain if place is None else s.domain.subtract(place.domain())
        if not missing.is_empty():
            coords, _ = point_coordinates(missing.lexmin().sample_point())
            raise PolypadError(f"{p.where}: {instance(p.model, s, coords)} reads nothing "
                               f"that loop {loop!r} writes, so no iteration can run it")
        places[s.name] = place
        required[s.name] = name_at(p, place.reverse())
    check_reverse_compute_at(p, places)
    update = _update_with_its_init(p, required)
    if update is not None:
        return rewrite(p, {update: required[update]}, before=False, block_inside=True)
    return rewrite(p, required, before=False)


def _update_with_its_init(p, required: dict[str, isl.Map]) -> str | None:
    """The name of the update of a reduction block ``with T.init()`` whose init runs,
    in every iteration, exactly at the instances of its update where the reduce axes
    start: then the block stays whole under the new loops, as TVM 0.27 prints it,
    each instance running ``if vk == 0: init`` and its update just as the placement
    orders them (the init just before its update).  ``None`` for any other block."""
    header = p.block.header
    if header is None or not header.init or len(p.moved) != 2:
        return None
    parts = layout(p.block.body, header)
    if (len(parts.after) != 1 or not isinstance(parts.after[0], n.BufferStore)
            or any(isinstance(x, n.For) for x in walk(p.block.body))):
        return None  # loops inside the block, or more than one update
    init, update = p.moved
    if init.stmt is not parts.init.then_case or update.stmt is not parts.after[0]:
        return None
    same_place = required[update.name].set_tuple_name(isl.dim_type.out, init.name)
    if not same_place.intersect_range(init.domain).is_equal(required[init.name]):
        return None
    return update.name


def _with_its_block_instance(p, s, places: dict) -> isl.Map | None:
    """``s``'s place, and for its instances that read nothing the loop writes (a
    ``T.init()``'s store, ``C[vi, vj] = 0`` at ``vk == 0``) the place of the same block
    instance -- another statement of the block at the same loop values -- as TVM moves
    a block with its init.  The earliest such place, so the init runs no later than the
    update it starts; the dependence check decides whether that order is legal."""
    own = places[s.name]
    missing = s.domain if own is None else s.domain.subtract(own.domain())
    if missing.is_empty():
        return own
    found = own
    for other in p.moved:
        place = places[other.name]
        if other is s or place is None or other.loop_vars != s.loop_vars:
            continue
        borrowed = place.set_tuple_name(isl.dim_type.in_, s.name).intersect_domain(missing)
        found = borrowed if found is None else found.union(borrowed)
    return None if found is None else found.lexmin()


def _completed_at(p) -> isl.UnionMap:
    """``Buf[e] -> _at[c]``: the iteration of the loop (and the loops around it) whose
    statements write each element last."""
    times = union_all(s.time for s in p.under)
    writers = union_all([s.writes for s in p.under]).reverse()
    last = writers.apply_range(times).lexmax()
    size = max(s.time.dim(isl.dim_type.out) for s in p.under)
    dims = ", ".join(f"t{k}" for k in range(size))
    picked = ", ".join(f"t{2 * k + 1}" for k in range(p.depth))
    return last.apply_range(isl.UnionMap(f"{{ [{dims}] -> {AT}[{picked}] }}"))
