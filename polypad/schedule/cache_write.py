"""``cache_write``: write a buffer through an internal copy (RFC 0077, "cache_write").

Before, with ``cache_write("compute", "B")``::

    for i in T.serial(14):
        with T.block("compute"):
            B[i] = 2 * A[i]

after::

    B_cache = T.alloc_buffer(14, "float32")
    for i in T.serial(14):
        with T.block("compute"):
            B_cache[i] = 2 * A[i]
    for i in T.serial(14):
        with T.block("B_cache"):
            B[i] = B_cache[i]

Every access of the buffer in the block moves to the cache, allocated from
the block's stage on, and a copy-out stage right after it writes the whole
buffer back.  That is exact only when the block writes every element of
the buffer (its certain writes cover the buffer's box, in isl) — else the
copy-out would overwrite elements the block never wrote — and the block
reads the buffer only where it wrote it before (no flow dependence from
outside the block, :func:`analyses.dependences`) — else the cache would
lack the value.
Accesses of the buffer in the block's stage outside the block would run
before the copy-out, so they are refused too.
"""

from __future__ import annotations

import functools

import islpy as isl

from analyses.evidence import Counterexample, Element
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, replace
from polypad.ir.visitor import walk
from polypad.model import extract

from .cache_common import cache_buffer, copy_stage, describe, require_access, target
from .layout_rewrite import relayout
from .layout_stages import allocate_from, loads_of, seq, stage_of, stores_to


def cache_write(func: n.PrimFunc, block: str | None, buffer, scope: str = "global",
                name: str | None = None, *,
                at=None) -> tuple[n.PrimFunc, str]:
    """``func`` with ``block``'s accesses of ``buffer`` going to a new cache that is
    copied out after the block's stage, and the cache's name.  ``block=None`` caches
    every access in the function and copies out at its end."""
    if at is not None:
        # A cache placed at a loop: allocated and filled/flushed in each iteration.
        from .cache_at import cache_at

        return cache_at(func, block, buffer, scope, name, at, "write")
    region, old = target(func, block, buffer)
    where = describe(block)
    require_access(region, old, "write", where)
    cache = cache_buffer(func, old, scope, name)
    check_cache_write(func, region, old, where)
    if block is None:
        body = relayout(func.body, old, cache)
        copy = copy_stage(func, old, cache, cache.name)
        return n.PrimFunc(func.name, func.params, n.Allocate(cache, seq(body, copy)),
                          func.attrs), cache.name
    stage = stage_of(func, region)
    inside = {id(node) for node in walk(region)}
    outside = [a for a in (*loads_of(stage, old), *stores_to(stage, old)) if id(a) not in inside]
    if outside:
        raise IllegalTransformError(
            f"cache_write of {old.name} for {where}: the stage around the block also accesses "
            f"{old.name} outside the block, before the copy-out would run", evidence=old.name)
    out = replace(func, region, relayout(region, old, cache))
    copy = copy_stage(out, old, cache, cache.name)
    new_stage = stage_of(out, find_block(out, block))
    return allocate_from(out, new_stage, cache, then=(copy,)), cache.name


def check_cache_write(func: n.PrimFunc, region: n.Stmt, buffer: n.Buffer, where: str) -> None:
    """Refuse unless ``region`` writes all of ``buffer`` and reads only what it wrote.

    Decided on the polyhedral model: the region's certain writes (a write
    under a data-dependent guard may not happen) must cover the buffer's box;
    and no read of the buffer in the region may see a value from outside the
    region -- a flow dependence (:func:`analyses.dependences`) from a write
    elsewhere, a value from before the function (``live_in``), or no write at
    all.
    """
    # analyses imports polypad, so its deciders are imported on use.
    from analyses import instances as inst
    from analyses.dataflow import Dependences

    model = extract(func)
    first, stop = inst.leaf_range(func.body, region)
    accesses = [a for s in model.statements[first:stop] for a in s.accesses
                if a.buffer is buffer]
    missing = inst.buffer_box(model, buffer)
    for a in accesses:
        if a.kind == "write" and not a.may:
            missing = missing.subtract(a.relation.range())
    if not missing.is_empty():
        coords, params = inst.point_coordinates(missing.sample_point())
        element = Element(buffer.name, tuple(coords))
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: the block does not write {element}, "
            f"and the copy-out would overwrite it with the cache's unwritten value",
            evidence=Counterexample(f"{where} never (surely) writes {element}",
                                    element=element, params=params))
    reads = _tags(a for a in accesses if a.kind == "read")
    if reads is None:
        return
    deps = Dependences(model)
    sourced = deps.tagged("flow").intersect_range(reads)
    writes = _tags(a for a in accesses if a.kind == "write")
    elsewhere = sourced if writes is None else sourced.subtract_domain(writes)
    if not elsewhere.is_empty():
        src, dst, element, params = deps.decode(inst.first_point(elsewhere))
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: {dst} reads {element}, which {src} "
            f"writes outside the block before it, a value the cache would not hold",
            evidence=Counterexample(f"{where} reads {element} from {src}",
                                    instances=(src, dst), element=element, params=params))
    before = reads.intersect(deps.live_in.wrap()).union(reads.subtract(sourced.range()))
    if not before.is_empty():
        point = inst.first_point(before.unwrap())
        coords, params = inst.point_coordinates(point)
        s = model.statement(point.get_space().unwrap().get_tuple_name(isl.dim_type.in_))
        count = len(s.loop_vars)
        reader = inst.instance(model, s, coords[:count])
        element = Element(buffer.name, tuple(coords[count:]))
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: {reader} reads {element} before the "
            f"block writes it, a value the cache would not hold",
            evidence=Counterexample(f"{where} reads {element} from before the block",
                                    instances=(reader,), element=element, params=params))


def _tags(accesses) -> isl.UnionSet | None:
    """The accesses as tagged instances ``[S[i] -> Buf[e]]``; ``None`` for none."""
    tags = [isl.UnionSet.from_set(a.relation.wrap()) for a in accesses]
    return functools.reduce(isl.UnionSet.union, tags) if tags else None
