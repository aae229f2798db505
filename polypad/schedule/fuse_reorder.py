"""Perfectly nested loop chains, and the rewrites on them: ``fuse`` and ``reorder``.

A *chain* is a run of loops each of which is the whole body of the one
before (``for i: for j: ...``), or of a ``with T.block`` that is (blocks are
named regions, with no iteration variables: a loop moves across one and the
block stays where it was in the nest).  ``fuse`` turns a chain into one loop;
``reorder`` permutes the loops of a chain.  Both are pure functions
``PrimFunc -> PrimFunc``; fuse keeps the order of every instance, so it is
always legal, and :func:`reorder_schedule` gives the new order of the
instances for the primitive to hold against the dependences.
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, replace
from polypad.ir.naming import fresh_name, var_names
from polypad.ir.ranges import dtype_range, value_range
from polypad.ir.show import show
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import walk
from polypad.model.isl_helpers import empty_union_map, time_map
from polypad.model.overflow import set_ranges
from polypad.transform.facts_at import facts_at

from .reschedule_plan import entries
from .split import extent_never_negative


def chain_of(func: n.PrimFunc, loops: list[n.For], primitive: str) -> list[n.For]:
    """The chain from the outermost of ``loops`` down to the innermost of them.

    Refuses (``PolypadError``) loops that are not all on one path, or a path
    where some loop's body is more than the next loop (or a block around it).
    """
    if len({id(x) for x in loops}) != len(loops):
        raise PolypadError(f"{primitive}: a loop is named twice")
    depth = {id(x): len(ancestors(func, x)) for x in loops}
    top = min(loops, key=lambda x: depth[id(x)])
    wanted = {id(x) for x in loops}
    chain = [top]
    while len(wanted - {id(x) for x in chain}) > 0:
        body = through_blocks(chain[-1].body)
        if not isinstance(body, n.For):
            missing = [x.var.name for x in loops if not any(x is c for c in chain)]
            _refuse_across_scope(chain[-1], [x for x in loops if x.var.name in missing],
                                 loops, primitive)
            raise PolypadError(
                f"{primitive}: the loops {', '.join(_names(loops))} are not perfectly nested: "
                f"the body of the loop over {chain[-1].var.name} is a "
                f"{type(body).__name__}, not the next loop (looking for "
                f"{', '.join(missing)})")
        chain.append(body)
    for x in chain:
        # A loop kind is a claim about the order around it; set kinds after tiling.
        if x.kind is not n.ForKind.SERIAL:
            raise PolypadError(f"{primitive}: the loop over {x.var.name} is {x.kind.value}; "
                               f"{primitive} serial loops, then set the kind")
    for inner in chain:
        used = {v for x in (inner.min, inner.extent) for v in free_vars(x)}
        for outer in chain:
            if outer is not inner and outer.var in used:
                raise PolypadError(
                    f"{primitive}: the bounds of the loop over {inner.var.name} use "
                    f"{outer.var.name}; only rectangular nests are rewritten")
    return chain


def _refuse_across_scope(outer: n.For, missing: list[n.For], loops: list[n.For],
                        primitive: str) -> None:
    """Refuse, naming it, a block with ``T.axis`` bindings between ``outer`` and the
    loops still looked for.

    Such a block is a scope of its own, as in TVM (whose ``reorder`` says "the loops
    are not in a chain because they are not under the same scope"): its axes are
    bound to the loops outside it, and a loop inside it may only move among the
    loops inside it.  A block without axes (this syntax's own) is crossed instead.
    """
    stmt = outer.body
    while isinstance(stmt, n.Block):
        axes = stmt.header.axes if stmt.header is not None else ()
        inside = {id(x) for x in walk(stmt.body) if isinstance(x, n.For)}
        if axes and any(id(x) in inside for x in missing):
            bound = ", ".join(a.var.name for a in axes)
            raise PolypadError(
                f"{primitive}: the loops {', '.join(_names(loops))} are not under one "
                f"block scope: block {stmt.name!r} (axes {bound}, bound with T.axis) lies "
                f"between the loop over {outer.var.name} and the loop over "
                f"{', '.join(_names(missing))} inside it; as in TVM, a loop moves only "
                "among the loops of its own scope: name the loops inside the block, or "
                "those around it")
        stmt = stmt.body


def _names(loops) -> list[str]:
    return [x.var.name for x in loops]


def through_blocks(stmt: n.Stmt) -> n.Stmt:
    """``stmt``, or the first statement inside the blocks it opens with."""
    while isinstance(stmt, n.Block):
        stmt = stmt.body
    return stmt


def _blocks_between(outer: n.For, inner: n.Stmt) -> list[n.Block]:
    """The blocks from ``outer``'s body down to ``inner``, outermost first."""
    out, stmt = [], outer.body
    while stmt is not inner:
        out.append(stmt)
        stmt = stmt.body
    return out


def _wrapped(blocks: list[n.Block], body: n.Stmt) -> n.Stmt:
    for b in reversed(blocks):
        body = dataclasses.replace(b, body=body)  # keeps what of its header fits
    return body


# ---------------------------------------------------------------- fuse


def fuse(func: n.PrimFunc, loops: list[n.For]) -> tuple[n.PrimFunc, n.For]:
    """``func`` with the chain ``loops`` (outermost first) fused into one loop, and that loop.

    Before::

        for i, j in T.grid(4, 6):
            B[i, j] = A[i, j]

    After (``i_j_fused``)::

        for i_j_fused in T.serial(24):
            B[i_j_fused // 6, i_j_fused % 6] = A[i_j_fused // 6, i_j_fused % 6]

    The fused counter counts in ``int64`` where the product of the extents may leave
    the loops' dtype (:func:`_counter_dtype`), each old counter cast back.
    """
    if len(loops) < 2:
        raise PolypadError("fuse: name two or more loops")
    chain = chain_of(func, loops, "fuse")
    if any(a is not b for a, b in zip(chain, loops, strict=False)) or len(chain) != len(loops):
        raise PolypadError(f"fuse: name adjacent loops outermost first; the nest runs "
                           f"{', '.join(_names(chain))}")
    dtype = loops[0].var.dtype
    if any(x.var.dtype != dtype for x in loops):
        raise PolypadError("fuse: the loop counters have different dtypes")
    factors = _fused_extents(func, loops)
    try:
        counter = _counter_dtype(func, loops, factors, dtype)
    except IllegalTransformError:
        # One extent that may be negative makes the product at most 0, but computed
        # it may leave even int64 (``n * 10`` for an int64 ``n`` near -2**63) and wrap
        # to a positive count: every such extent clamped at 0 keeps it exact.
        factors = _fused_extents(func, loops, clamp=True)
        counter = _counter_dtype(func, loops, factors, dtype)
    fused = n.Var(fresh_name(var_names(func), "_".join(_names(loops)) + "_fused"), counter)
    extents = [_widened(x.extent, counter) for x in loops]
    mapping = {}
    for k, x in enumerate(loops):
        inner = _product(extents[k + 1:], counter)
        value: n.Expr = fused
        if k > 0:  # the outermost needs no modulo: fused // inner stays below its extent
            value = n.FloorMod(value, _product(extents[k:], counter))
        if inner is not None:
            value = n.FloorDiv(value, inner)
        if counter != dtype:  # a value in [0, extent): it fits the loop's own dtype
            value = n.Cast(dtype, value)
        if not (isinstance(x.min, n.IntImm) and x.min.value == 0):
            value = n.Add(value, x.min)
        mapping[x.var] = value
    # Blocks between the fused loops move inside the fused loop, in their order.
    blocks = [b for outer, inner in zip(loops, loops[1:], strict=False)
              for b in _blocks_between(outer, inner)]
    body = _wrapped(blocks, substitute(loops[-1].body, mapping))
    new = n.For(fused, n.IntImm(0, counter),
                _product([_widened(f, counter) for f in factors], counter),
                n.ForKind.SERIAL, body, span=loops[0].span)
    return replace(func, loops[0], new), new


def _fused_extents(func: n.PrimFunc, loops: list[n.For], clamp: bool = False) -> list[n.Expr]:
    """The factors of the fused loop's extent: each loop's extent, or ``T.max(e, 0)``
    for one that isl does not prove ``>= 0`` where its loop stands, when two or more
    may be negative (or, with ``clamp``, one).  A loop with a negative extent runs
    nothing, but the product of two negative extents is positive (``-2 * -3 == 6``);
    with at most one negative factor the product is at most 0 and the fused loop runs
    nothing too."""
    unproved = [k for k, x in enumerate(loops) if not extent_never_negative(func, x)]
    extents = [x.extent for x in loops]
    if len(unproved) < (1 if clamp else 2):
        return extents
    for k in unproved:
        extents[k] = n.Max(extents[k], n.IntImm(0, extents[k].dtype))
    return extents


def _counter_dtype(func: n.PrimFunc, loops: list[n.For], factors: list[n.Expr],
                   dtype: str) -> str:
    """The dtype of the fused counter: the loops' own ``dtype`` where the product of
    ``factors`` (the fused extent) cannot leave it, else ``int64``.

    The product of two int32 extents reaches ``(2**31 - 1)**2``: computed in int32 it
    wraps, and the fused loop would run a wrong number of iterations, possibly many
    where the nest ran none (``-1073741825 * 3`` wraps to ``1073741821``).  Each
    factor's range comes from interval arithmetic over the ranges isl finds for the
    variables where the outermost loop stands (its loops, branches and
    ``T.assume``\\ s), so constant extents and extents the assumptions bound keep the
    plain product.  A product that may leave int64 too (three unbounded extents) is
    refused: no counter can hold it.
    """
    facts = None
    ranges = []
    for f in factors:
        if isinstance(f, n.IntImm):
            ranges.append((f.value, f.value))
            continue
        if facts is None:
            facts = facts_at(func, loops[0], assumptions=True)
            box = set_ranges(facts.ctx, (), facts.facts.names)
        ranges.append(value_range(f, box))
    lo, hi = 1, 1
    for a, b in ranges:
        corners = [x * y for x in (lo, hi) for y in (a, b)]
        lo, hi = min(corners), max(corners)
    for candidate in (dtype, "int64"):
        low, high = dtype_range(candidate)
        if low <= lo and hi <= high:
            return candidate
    raise IllegalTransformError(
        f"fuse: the fused loop over {', '.join(_names(loops))} would run up to {hi} "
        f"iterations ({' * '.join(show(f) for f in factors)}), more than an int64 counter "
        "holds; bound the extents with T.assume first")


def _widened(e: n.Expr, dtype: str) -> n.Expr:
    """``e`` as a ``dtype`` value: a constant retyped, anything else cast."""
    if e.dtype == dtype:
        return e
    if isinstance(e, n.IntImm):
        return n.IntImm(e.value, dtype)
    return n.Cast(dtype, e)


def _product(extents: list[n.Expr], dtype: str) -> n.Expr | None:
    """The product of ``extents`` (folded where constant); ``None`` for none."""
    if not extents:
        return None
    out: n.Expr | None = None
    constant = 1
    for e in extents:
        if isinstance(e, n.IntImm):
            constant *= e.value
        else:
            out = e if out is None else n.Mul(out, e)
    if out is None:
        return n.IntImm(constant, dtype)
    return out if constant == 1 else n.Mul(out, n.IntImm(constant, dtype))


# ---------------------------------------------------------------- reorder


def reorder(func: n.PrimFunc, loops: list[n.For]) -> tuple[n.PrimFunc, list[n.For], list[n.For]]:
    """``func`` with ``loops`` put in the given order, in the places they take in their chain.

    Returns (new function, the old chain, the old loops in their new order).
    Loops of the chain that are not named stay where they are.  No legality
    check here: see :func:`reorder_schedule`.
    """
    if len(loops) < 2:
        raise PolypadError("reorder: name two or more loops")
    chain = chain_of(func, loops, "reorder")
    named = {id(x) for x in loops}
    order = iter(loops)
    new_order = [next(order) if id(x) in named else x for x in chain]

    def rebuilt(k: int) -> n.Stmt:
        """The nest from the ``k``-th loop place down, blocks kept in their places."""
        if k == len(chain):
            return chain[-1].body
        x = new_order[k]
        body = rebuilt(k + 1)
        if k + 1 < len(chain):
            body = _wrapped(_blocks_between(chain[k], chain[k + 1]), body)
        return n.For(x.var, x.min, x.extent, x.kind, body, span=x.span)

    return replace(func, chain[0], rebuilt(0)), chain, new_order


def reorder_schedule(model, chain: list[n.For], new_order: list[n.For]) -> isl.UnionMap:
    """Every statement of ``model`` at its time after the reorder: the counters of the
    chain's loops trade places, the rest of program order (the 2d+1 schedule) stays.

    Inside a chain every sequence position is 0, so permuting the counters is
    exactly the new order.
    """
    from analyses.instances import depth_of

    depth = depth_of(model)
    out = empty_union_map()
    for s in model.statements:
        items = entries(s, None, 0, depth)
        levels = [next((j for j, x in enumerate(s.loops) if x is c), None) for c in chain]
        if levels[0] is not None:
            moved = {id(c): s.loop_vars[j] for c, j in zip(chain, levels, strict=True)}
            for c, j in zip(new_order, levels, strict=True):
                items[1 + 2 * j] = moved[id(c)]
        out = out.union(isl.UnionMap.from_map(time_map(s.space, items, s.domain)))
    return out
