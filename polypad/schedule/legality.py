"""The legality rules of the schedule primitives, each a named check.

A check returns nothing when its primitive may go ahead, and otherwise
raises :class:`~polypad.errors.IllegalTransformError` whose ``evidence`` is
the counterexample (the two instances and the element they share) or the
``Unknown``.  The questions are asked of the deciders in :mod:`analyses`;
:mod:`.primitives` says which check each primitive runs.

* :func:`check_order` -- ``reorder``, ``tile``, ``distribute``,
  ``reorder_by_map``: the new order keeps every dependence;
* :func:`check_independent_iterations` -- ``parallel``: the loop carries no
  dependence (:func:`analyses.loop_carried.carried_dependence`);
* :func:`check_vectorize` -- ``vectorize``: that, and no floating-point
  reduction inside the loop for fast-math to reassociate;
* :func:`check_merge` -- ``merge_adjacent_loops``
  (:func:`analyses.can_merge_loops`);
* :func:`check_rfactor`, :func:`check_decompose_reduction` -- the reduction
  rewrites stay in bounds and keep the init before what reads it;
* :func:`check_cache_read`, :func:`check_cache_write` -- the copy holds what
  the block reads, and the copy-out writes back only what the block wrote.

``split(tail="pad")`` has its own in :mod:`.split_pad_legality`; the
compute-location primitives (and the caches placed at a loop) have
theirs in :mod:`.location_legality`, beside the placement they share;
``transform_layout`` has the index map's own checks
(:meth:`polypad.layout.relation.LayoutRelation.check_injective`) and
:func:`.interface.check_interface`.
"""

from __future__ import annotations

import functools

import islpy as isl

from analyses.evidence import Counterexample, Element
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors
from polypad.ir.loop_names import loop_name
from polypad.ir.opaque import check_text, first_check
from polypad.ir.stages import loads_of, stage_of, stores_to
from polypad.ir.visitor import walk
from polypad.model import extract

from .cache_common import describe

# ---------------------------------------------------------------- order


def check_order(func: n.PrimFunc, schedule: isl.UnionMap, primitive: str, *,
                reassociate: bool = False, moved: n.Stmt | None = None,
                inside: n.For | None = None) -> None:
    """``reorder``, ``tile``, ``distribute``, ``reorder_by_map``: refuse the new order
    ``schedule`` (every instance of ``func`` at its new time) where it breaks a dependence.

    Two updates of one element by one exact reduction (integers, any
    combiner) may swap: that changes no bit.  With ``reassociate``, so may those
    of a floating-point sum or product (:mod:`analyses.reductions`).

    ``moved``, where given, is the statement (a loop) outside which ``schedule``
    keeps every instance's order: two instances change order only when both run
    in one of its iterations, and a dependence between them is on an element one
    of them writes.  Only the dataflow of the buffers written inside it is then
    computed (exact for those buffers: their accesses elsewhere count as kills):
    a GPU copy's reorder asks about its shared tile, not about the whole kernel.
    ``inside``, where given, is a loop outside whose runs ``schedule`` keeps every
    instance's order: the dataflow of the statements under it is asked
    (:mod:`analyses.dataflow_window`), exact for every pair the new order may break.
    """
    import analyses
    from analyses.dataflow import Dependences
    from analyses.reductions import reduction_dependences

    if inside is None and isinstance(moved, n.For):  # its runs keep their order too
        inside = moved
    if reassociate:
        found = reduction_dependences(func, inside=inside).violations(schedule)
    else:
        # The order of stores against an assert is in the whole question only
        # (analyses.assert_order): a moved loop holding an assert asks it.
        if moved is None or first_check(moved) is not None:
            deps = analyses.dependences(func, inside=inside)
        else:
            written = {id(s.buffer): s.buffer for s in walk(moved)
                       if isinstance(s, n.BufferStore)}
            deps = Dependences(extract(func), buffers=written.values(), inside=inside)
        found = deps.violations(schedule)
        if found is not None:  # perhaps only exact reductions' updates swap
            exact = reduction_dependences(func, exact_only=True, inside=inside)
            broken = exact.violations(schedule)
            # The value-based pair reads best, unless it is one the reduction frees.
            found = None if broken is None else broken if _frees(exact, found) else found
    if found is None:
        return
    hint = ""
    if not reassociate and reduction_dependences(func, inside=inside).violations(
            schedule) is None:
        hint = ("; only a floating-point reduction's terms would combine in another order: "
                "accept that with sch.rfactor, or with reassociate=True "
                "(reorder_by_map, sequential_buffer_access)")
    raise IllegalTransformError(f"{primitive} would break a dependence: {found}{hint}", found)


def _frees(deps, cex: Counterexample) -> bool:
    """Whether ``cex``'s two instances are updates of one reduction that ``deps``
    (:class:`analyses.reductions.ReductionDependences`) lets swap."""
    from analyses.instances import labels

    names = labels(deps.model)
    free = {names[r.statement.name] for r in deps.reductions}
    first, second = cex.instances
    return first.statement == second.statement and first.statement in free


# ---------------------------------------------------------------- loop kinds


def check_independent_iterations(func: n.PrimFunc, node: n.For, primitive: str) -> None:
    """``parallel``: refuse a loop that carries a dependence, two of its iterations
    touching one element and one of them writing it.  Where only reductions make it
    carry one, the refusal suggests ``rfactor`` of the loop."""
    from analyses.loop_carried import carried_dependence

    name = loop_name(func, node)
    found = carried_dependence(func, node, name)
    if found is not None:
        hint = _rfactor_hint(func, node, name) or _store_at_hint(func, node, name, found)
        raise IllegalTransformError(f"{primitive} would break a dependence: {found}{hint}",
                                    found)


def _store_at_hint(func: n.PrimFunc, node: n.For, name: str, found: Counterexample) -> str:
    """The suggestion to ``store_at`` a buffer the function allocates outside ``node``
    and accesses only inside it (a producer computed at the loop shares it), else
    nothing."""
    if found.element is None:
        return ""
    inside = {id(x) for x in walk(node)}
    for x in walk(func.body):
        if isinstance(x, n.Allocate) and x.buffer.name == found.element.buffer:
            accesses = [a for a in walk(func.body) if isinstance(a, (n.BufferLoad,
                        n.BufferStore)) and a.buffer is x.buffer]
            if not any(id(y) in inside for y in walk(x.body)) or not all(
                    id(a) in inside for a in accesses):
                return ""
            return (f"; every access of {x.buffer.name} is in the loop: "
                    f"sch.store_at({x.buffer.name!r}, {name!r}) gives each iteration a "
                    f"{x.buffer.name} of its own")
    return ""


def check_vectorize(func: n.PrimFunc, node: n.For) -> None:
    """``vectorize``: refuse a floating-point reduction carried by a loop that the lanes
    stay around (fast-math would reassociate it), then a dependence ``node`` carries.

    The lanes go below the loops inside ``node`` where they can
    (:func:`polypad.semantics.vector_lanes.lanes_innermost`): each lane then
    reduces its own element in order, so a loop around a reduction (max-pool's
    channels) vectorizes.  Two updates of one element by an exact reduction
    (integers, any combiner) may swap, so a loop carrying only those
    vectorizes too (:func:`analyses.reductions.reduction_dependences` with
    ``exact_only``).
    """
    from analyses.loop_carried import carried_dependence, floating_reduction_inside
    from analyses.reductions import reduction_dependences
    from polypad.semantics.vector_lanes import lanes_innermost

    name = loop_name(func, node)
    _, stuck = lanes_innermost(node)
    found = floating_reduction_inside(func, node, stuck)
    if found is not None:
        raise IllegalTransformError(
            "vectorize would let fast-math reassociate a floating-point reduction "
            f"inside the loop over {name}, whose lanes cannot move below the loops "
            f"inside it (a let, guard or loop bound there uses {node.var.name}, or an "
            f"allocation); rfactor the reduction first (sch.rfactor) or vectorize a "
            f"loop inside it: {found}", found)
    # A dependence the loop carries lies within one run of it: asked of its statements.
    found = carried_dependence(func, node, name, deps=reduction_dependences(
        func, exact_only=True, inside=node))
    if found is not None:
        raise IllegalTransformError(f"vectorize would break a dependence: {found}"
                                    f"{_rfactor_hint(func, node, name)}", found)


def _rfactor_hint(func: n.PrimFunc, node: n.For, name: str) -> str:
    """What would let ``node`` carry nothing, where a reduction is what it carries:
    ``rfactor`` of the loop, or first ``decompose_reduction`` of an init inside it."""
    from analyses.loop_carried import carried_dependence
    from analyses.reductions import reduction_dependences

    from .reduction_nest import find_init

    deps = reduction_dependences(func)
    if carried_dependence(func, node, name, deps=deps) is None:
        inside = {id(x) for x in walk(node)}
        carried = [r for r in deps.reductions if id(r.statement.stmt) in inside]
        what = ", ".join(f"{r.buffer.name} ({r.op})" for r in carried) or "a reduction"
        return (f"; only the reduction into {what} makes {name} carry it: "
                f"sch.rfactor({name!r}) gives each iteration of {name} a partial result of "
                f"its own, after which {name} carries nothing")
    init = find_init(func, None, node)
    if init is None:
        return ""
    blocks = [x for x in ancestors(func, init) if isinstance(x, n.Block)]
    block = blocks[-1].name if blocks else None
    return (f"; the init of {init.buffer.name} runs inside {name}: "
            f"sch.decompose_reduction({block!r}, {name!r}) moves it out first")


# ---------------------------------------------------------------- merge


def check_merge(func: n.PrimFunc, a: n.For, b: n.For) -> None:
    """``merge_adjacent_loops``: refuse merging ``b`` into ``a`` unless
    :func:`analyses.can_merge_loops` proves that no dependence is reversed."""
    from analyses import Proved, Refuted
    from analyses.merge import can_merge_loops

    decision = can_merge_loops(func, a, b)
    if not isinstance(decision, Proved):
        evidence = decision.counterexample if isinstance(decision, Refuted) else decision
        raise IllegalTransformError(
            f"merge_adjacent_loops: cannot merge the loops over {a.var.name} and "
            f"{b.var.name} in {func.name}: {decision}", evidence=evidence)


# ---------------------------------------------------------------- reductions


def check_rfactor(func: n.PrimFunc, where: str) -> None:
    """``rfactor``, on the rewritten ``func``: the write-back runs for every value of
    the spatial loops, even those for which a dropped guard ran no reduction: refuse
    when that leaves a buffer."""
    import analyses

    found = analyses.check_bounds(func)
    if isinstance(found, analyses.Refuted):
        cex = found.counterexample
        raise IllegalTransformError(f"{where}: the rewrite would access outside a buffer: "
                                    f"{cex}", cex)


def check_decompose_reduction(func: n.PrimFunc, init: n.BufferStore | list, loop: n.For
                              ) -> None:
    """``decompose_reduction``: refuse when an instance under ``loop`` (other than the
    init's own) must run before an init instance of the same iterations of the loops
    around ``loop``.  ``init`` may be the stores of one init, moved together in their
    order (an argmax's ``T.init()``): none of them counts against another."""
    import analyses
    from analyses import instances as inst
    from analyses.assert_order import is_order

    # The pairs asked about lie within one run of the loop: asked of its statements.
    deps = analyses.dependences(func, inside=loop)
    model = deps.model
    inits = init if isinstance(init, list) else [init]
    targets = [s for s in model.statements if any(s.stmt is x for x in inits)]
    sources = None
    for target in targets:
        depth = next(k for k, x in enumerate(target.loops) if x is loop)
        for s in model.statements:
            if s in targets or not any(x is loop for x in s.loops):
                continue
            pairs = isl.Map.from_domain_and_range(s.domain, target.domain)
            for d in range(depth):
                pairs = pairs.equate(isl.dim_type.in_, d, isl.dim_type.out, d)
            part = isl.UnionMap.from_map(pairs)
            sources = part if sources is None else sources.union(part)
    if sources is None:
        return
    for kind in ("flow", "output", "anti"):
        found = deps.tagged(kind).zip().intersect_domain(sources.wrap()).zip()
        if not found.is_empty():
            point = inst.first_point(found)
            src, dst, element, params = deps.decode(point)
            what = (deps.pair_text(kind, point, src, dst, element) if is_order(element.buffer)
                    else f"{src} touches {element} before the init {dst}")
            cex = Counterexample(
                f"{kind} dependence: {what}; moving the init before the loop over "
                f"{loop.var.name} would reverse them",
                instances=(src, dst), element=element, params=params)
            raise IllegalTransformError(f"decompose_reduction would break a dependence: "
                                        f"{cex}", cex)


# ---------------------------------------------------------------- caches


def check_cache_read(func: n.PrimFunc, block: str | None, region: n.Stmt,
                     buffer: n.Buffer) -> None:
    """Refuse a copy that would not hold what ``region`` (``block``'s, or the whole
    function's for ``None``) reads: ``buffer`` is written in the function (for
    ``None``), in the block, or in the stage around the block."""
    where = describe(block)
    if block is None:
        if stores_to(func, buffer):
            raise IllegalTransformError(
                f"cache_read of {buffer.name} for the whole function: {func.name} also "
                f"writes {buffer.name}, so one copy cannot serve every read; name the "
                "reading block", evidence=buffer.name)
        return
    if stores_to(region, buffer):
        raise IllegalTransformError(
            f"cache_read of {buffer.name} for {where}: the block also writes {buffer.name}, "
            f"so its reads would see a stale copy; use cache_write for a buffer a block "
            "writes", evidence=buffer.name)
    if stores_to(stage_of(func, region), buffer):
        raise IllegalTransformError(
            f"cache_read of {buffer.name} for {where}: the stage around the block also "
            f"writes {buffer.name}, so no single copy before it holds what the block reads",
            evidence=buffer.name)



def check_cache_write(func: n.PrimFunc, block: str | None, region: n.Stmt,
                      buffer: n.Buffer) -> None:
    """Refuse a copy-out that would not write back what ``region`` (``block``'s, or the
    whole function's for ``None``) leaves in ``buffer``: the region writes all of it and
    reads only what it wrote (:func:`_check_cache_values`), and nothing in the block's
    stage outside the block accesses it before the copy-out runs."""
    where = describe(block)
    stage = func.body if block is None else stage_of(func, region)
    refuse_crossed_check(stage, f"cache_write of {buffer.name} for {where}",
                         "the copy-out after it")
    _check_cache_values(func, region, buffer, where)
    if block is None:
        return
    inside = {id(node) for node in walk(region)}
    outside = [a for a in (*loads_of(stage, buffer), *stores_to(stage, buffer))
               if id(a) not in inside]
    if outside:
        raise IllegalTransformError(
            f"cache_write of {buffer.name} for {where}: the stage around the block also "
            f"accesses {buffer.name} outside the block, before the copy-out would run",
            evidence=buffer.name)


def refuse_crossed_check(scope: n.Stmt, where: str, late: str) -> None:
    """Refuse a rewrite that moves stores of ``scope`` to ``late`` (a copy-out after
    it) where ``scope`` holds an assert: where the assert fails, the stores before it
    would not have happened (no store moves across an assert, :mod:`analyses.assert_order`;
    conservatively, wherever in ``scope`` the assert stands)."""
    found = first_check(scope)
    if found is None:
        return
    text = check_text(found)
    cex = Counterexample(f"{text} may fail after a store that {late} would make instead, "
                         "after it")
    raise IllegalTransformError(
        f"{where}: {late} would write back stores made before {text}, which no store "
        "moves across (where it fails, they must have happened)", cex)


def _check_cache_values(func: n.PrimFunc, region: n.Stmt, buffer: n.Buffer,
                        where: str) -> None:
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



# ---------------------------------------------------------------- a nest made perfect


def check_sunk(before: n.PrimFunc, after: n.PrimFunc, moved, primitive: str) -> None:
    """:func:`.sink.perfect_nest`: refuse unless each moved statement runs in ``after``
    exactly the instances it ran in ``before`` -- its domain there, the loop it went
    into projected out, is its domain here: the loop runs at least once wherever the
    statement ran.  ``moved`` pairs each moved statement with that loop's variable."""
    from analyses import instances as inst

    old, new = extract(before), extract(after)
    inside: dict[int, list[n.Var]] = {}
    for stmt, var in moved:
        for node in walk(stmt):
            inside.setdefault(id(node), []).append(var)
    checked = 0
    for s in old.statements:
        into = inside.get(id(s.stmt))
        if into is None:
            continue
        checked += 1
        t = next(t for t in new.statements if t.stmt is s.stmt)
        ran = t.domain
        for at in sorted((k for k, x in enumerate(t.loops) if x.var in into), reverse=True):
            ran = ran.project_out(isl.dim_type.set, at, 1)
        lost = s.domain.subtract(ran.set_tuple_name(s.domain.get_tuple_name()))
        if lost.is_empty():
            continue
        var = into[0]
        coords, params = inst.point_coordinates(lost.sample_point())
        instance = inst.instance(old, s, coords[:len(s.loop_vars)])
        cex = Counterexample(
            f"{instance} runs before the loop over {var.name}, which runs no iteration "
            f"there: moved into its first iteration, it would not run",
            instances=(instance,), params=params)
        raise IllegalTransformError(
            f"{primitive}: the loops are not perfectly nested, and the statements beside "
            f"the loop over {var.name} cannot move into its first (or last) iteration: "
            f"{cex}; a reduction's init moves out of the nest instead with "
            "sch.decompose_reduction", cex)
    leaves = {id(x) for stmt, _ in moved for x in walk(stmt)
              if isinstance(x, (n.BufferStore, n.Evaluate))}
    if checked < len(leaves):  # pragma: no cover - a statement the model did not see
        raise PolypadError(f"{primitive}: {len(leaves) - checked} moved statements were "
                           "not checked")
