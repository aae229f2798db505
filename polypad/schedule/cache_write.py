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
before the copy-out, so they are refused too
(:func:`.legality.check_cache_write`).
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.locate import find_block, replace
from polypad.ir.stages import allocate_from, seq, stage_of
from polypad.ir.views import require_unshared

from .cache_common import cache_buffer, copy_stage, describe, require_access, target
from .layout_rewrite import relayout
from .legality import check_cache_write


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
    require_unshared(func, old, "cache_write")
    where = describe(block)
    require_access(region, old, "write", where)
    cache = cache_buffer(func, old, scope, name)
    check_cache_write(func, block, region, old)
    if block is None:
        body = relayout(func.body, old, cache)
        copy = copy_stage(func, old, cache, cache.name)
        return n.PrimFunc(func.name, func.params, n.Allocate(cache, seq(body, copy)),
                          func.attrs), cache.name
    out = replace(func, region, relayout(region, old, cache))
    copy = copy_stage(out, old, cache, cache.name)
    new_stage = stage_of(out, find_block(out, block))
    return allocate_from(out, new_stage, cache, then=(copy,)), cache.name
