"""``cache_read``: read a buffer through an internal copy (RFC 0077, "cache_read").

Before, with ``cache_read("compute", "A")``::

    def func(A: T.Buffer(14, "float32"), B: T.Buffer(14, "float32")):
        for i in T.serial(14):
            with T.block("compute"):
                B[i] = 2 * A[i]

after::

    def func(A: T.Buffer(14, "float32"), B: T.Buffer(14, "float32")):
        A_cache = T.alloc_buffer(14, "float32")
        for i in T.serial(14):
            with T.block("A_cache"):
                A_cache[i] = A[i]
        for i in T.serial(14):
            with T.block("compute"):
                B[i] = 2 * A_cache[i]

The cache has the buffer's shape and dtype, so its layout can then be
transformed without touching the function's interface.  The copy runs where
the cache then holds exactly what the block would have read: at the start
of the buffer's scope when nothing writes the buffer before the block's
stage, else right before that stage (no write can come in between).  A
block that writes the buffer itself, or shares its stage with a write of
it, would read stale values from the cache: that is refused
(:func:`.legality.check_cache_read`).
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.locate import find_block, replace
from polypad.ir.stages import allocate_from, seq, stage_of, stores_to
from polypad.ir.views import require_unshared
from polypad.ir.visitor import walk

from .cache_common import cache_buffer, copy_stage, describe, require_access, target
from .layout_rewrite import relayout
from .legality import check_cache_read


def cache_read(func: n.PrimFunc, block: str | None, buffer, scope: str = "global",
               name: str | None = None, *,
               at=None) -> tuple[n.PrimFunc, str]:
    """``func`` with ``block``'s reads of ``buffer`` going through a new cache, and the
    cache's name.  ``block=None`` caches every read (the buffer must then never be
    written in the function)."""
    if at is not None:
        # A cache placed at a loop: allocated and filled/flushed in each iteration.
        from .cache_at import cache_at

        return cache_at(func, block, buffer, scope, name, at, "read")
    region, old = target(func, block, buffer)
    require_unshared(func, old, "cache_read")
    where = describe(block)
    require_access(region, old, "read", where)
    cache = cache_buffer(func, old, scope, name)
    check_cache_read(func, block, region, old)
    writers = stores_to(func, old)
    if block is None:
        body = relayout(func.body, old, cache)
        copy = copy_stage(func, cache, old, cache.name)
        return _at_scope_start(func, body, old, cache, copy), cache.name
    stage = stage_of(func, region)
    earlier = _writes_before(func, stage, writers)
    out = replace(func, region, relayout(region, old, cache))
    copy = copy_stage(out, cache, old, cache.name)
    if not earlier:
        return _at_scope_start(out, out.body, old, cache, copy), cache.name
    new_stage = stage_of(out, find_block(out, block))
    return allocate_from(out, new_stage, cache, first=(copy,)), cache.name


def _writes_before(func: n.PrimFunc, stage: n.Stmt, writers) -> list:
    order = {id(node): k for k, node in enumerate(walk(func.body))}
    return [w for w in writers if order[id(w)] < order[id(stage)]]


def _at_scope_start(func: n.PrimFunc, body: n.Stmt, old: n.Buffer, cache: n.Buffer,
                    copy: n.Stmt) -> n.PrimFunc:
    """The copy (and the cache's allocation) first in ``old``'s scope: the function body
    for a parameter, inside ``old``'s own allocation otherwise."""
    if any(p is old for p in func.params):
        return n.PrimFunc(func.name, func.params, n.Allocate(cache, seq(copy, body)),
                          func.attrs)
    func = n.PrimFunc(func.name, func.params, body, func.attrs)
    scope = next(a for a in walk(func.body) if isinstance(a, n.Allocate) and a.buffer is old)
    inner = n.Allocate(cache, seq(copy, scope.body))
    return replace(func, scope, n.Allocate(old, inner, span=scope.span))
