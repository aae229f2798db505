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
buffer back.  That is exact only when (checked with isl on the polyhedral
model) the block writes every element of the buffer — else the copy-out
would overwrite elements the block never wrote — and the block reads the
buffer only where it wrote it before — else the cache would lack the value.
Accesses of the buffer in the block's stage outside the block would run
before the copy-out, so they are refused too.
"""

from __future__ import annotations

import islpy as isl

from analyses.evidence import Counterexample, Element, Instance
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, replace
from polypad.ir.operators import ge, logical_and, lt
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.model.affine import AffineSpace
from polypad.model.conditions import to_set

from .cache_common import cache_buffer, copy_stage, describe, require_access, target
from .layout_rewrite import relayout
from .layout_stages import allocate_from, loads_of, seq, stage_of, stores_to


def cache_write(func: n.PrimFunc, block: str | None, buffer, scope: str = "global",
                name: str | None = None) -> tuple[n.PrimFunc, str]:
    """``func`` with ``block``'s accesses of ``buffer`` going to a new cache that is
    copied out after the block's stage, and the cache's name.  ``block=None`` caches
    every access in the function and copies out at its end."""
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

    Decided with isl: the union of the region's exact write relations must
    cover the buffer's box, and the dataflow from those writes to the
    region's reads (``compute_flow``) must leave no read without a source.
    A write whose domain over-approximates (a dropped guard) counts as a
    "may" write: it neither covers nor surely sources.
    """
    model = extract(func)
    inside = {id(node) for node in walk(region)}
    tuple_name = model.buffer_name(buffer)
    must, may, reads = _empty(), _empty(), _empty()
    for s in model.statements:
        if id(s.stmt) not in inside:
            continue
        for access in s.accesses:
            if access.buffer is not buffer:
                continue
            rel = isl.UnionMap.from_map(access.relation)
            if access.kind == "read":
                reads = reads.union(rel)
            elif access.may or s.may:
                may = may.union(rel)
            else:
                must = must.union(rel)
    box = isl.UnionSet.from_set(_box(buffer, tuple_name, model))
    missing = box.subtract(must.range())
    if not missing.is_empty():
        point = _first(missing).sample_point()
        element = Element(buffer.name, _coords(point, isl.dim_type.set))
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: the block does not write {element}, "
            f"and the copy-out would overwrite it with the cache's unwritten value",
            evidence=Counterexample(f"{where} never (surely) writes {element}",
                                    element=element, params=_params(point)))
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(must).set_may_source(may)
    exposed = info.set_schedule_map(model.schedule).compute_flow().get_may_no_source()
    if not exposed.is_empty():
        relation = _first(exposed)
        point = relation.wrap().sample_point()
        stmt = model.statement(relation.get_tuple_name(isl.dim_type.in_))
        coords = _coords(point, isl.dim_type.set)
        count = len(stmt.loop_vars)
        instance = Instance(stmt.block or stmt.name,
                            {v.name: c for v, c in zip(stmt.loop_vars, coords[:count])})
        element = Element(buffer.name, coords[count:])
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: {instance} reads {element} before the "
            f"block writes it, a value the cache would not hold",
            evidence=Counterexample(f"{where} reads {element} from before the block",
                                    instances=(instance,), element=element,
                                    params=_params(point)))


def _box(buffer: n.Buffer, tuple_name: str, model) -> isl.Set:
    dims = [n.Var(f"d{k}") for k in range(buffer.ndim)]
    space = AffineSpace(dims, tuple_name=tuple_name, names=model.names)
    if not dims:
        return space.universe
    return to_set(logical_and(*(logical_and(ge(d, 0), lt(d, extent))
                                for d, extent in zip(dims, buffer.shape))), space)


def _empty() -> isl.UnionMap:
    return isl.UnionMap.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))


def _first(union):
    """One non-empty piece of a union set or map."""
    pieces = []
    (union.foreach_map if isinstance(union, isl.UnionMap) else union.foreach_set)(
        pieces.append)
    return next(p for p in pieces if not p.is_empty())


def _coords(point: isl.Point, kind) -> tuple[int, ...]:
    count = point.get_space().dim(kind)
    return tuple(point.get_coordinate_val(kind, k).to_python() for k in range(count))


def _params(point: isl.Point) -> dict[str, int]:
    space = point.get_space()
    return {space.get_dim_name(isl.dim_type.param, k):
            point.get_coordinate_val(isl.dim_type.param, k).to_python()
            for k in range(space.dim(isl.dim_type.param))}
