"""The legality rules of the compute-location primitives, each a named check.

* :func:`check_compute_at`: the first computation of each moved instance keeps
  every dependence (:meth:`analyses.Dependences.violations` on the new order);
  no instance that is no longer computed wrote a value that is used; where
  iterations overlap, computing an instance again gives the same value;
* :func:`check_reverse_compute_at`: each moved instance, at the end of the
  iteration that completes its inputs, keeps every dependence;
* :func:`check_store_at`: no value of the buffer flows from one iteration of
  the loop to another;
* :func:`refuse_access`: the refusal of an access the caches placed at a loop
  and ``store_at`` cannot serve, naming its first instance.

Each raises :class:`~polypad.errors.IllegalTransformError` whose
``evidence`` names the instances and the element; the rewrites
(:mod:`.compute_at`, :mod:`.reverse_compute_at`, :mod:`.store_at`,
:mod:`.cache_at`) call them before they change anything.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.model import StatementModel
from polypad.model.isl_helpers import empty_union_map, maps_of, union_all

from .location_placement import Placement, new_times

# Where the consumer goes in the loop's body for reverse_compute_at's dependence
# check: after every statement position there.
_LAST = 1 << 20


def check_compute_at(p: Placement, required: dict[str, isl.Map], need: isl.UnionMap) -> None:
    """``compute_at``: refuse the move of ``p``'s producer, computing the ``required``
    instances (``_at[c] -> S[x]``) at each iteration, where it changes a result."""
    from analyses.dataflow import Dependences

    deps = Dependences(p.model)
    _check_dropped(p, required, deps)
    found = deps.violations(_first_times(p, required))
    if found is not None:
        raise IllegalTransformError(f"{p.where} would break a dependence: {found}", found)
    if any(not m.reverse().is_single_valued() for m in required.values()):
        _check_recompute(p, required, need)
        _check_recomputed_sources(p, required, deps)


def check_reverse_compute_at(p: Placement, places: dict[str, isl.Map]) -> None:
    """``reverse_compute_at``: refuse running each moved instance at the iteration
    ``places`` gives it (``S[x] -> _at[c]``), at the end of the loop's body, where that
    breaks a dependence."""
    from analyses.dataflow import Dependences

    found = Dependences(p.model).violations(new_times(p, places, _LAST))
    if found is not None:
        raise IllegalTransformError(f"{p.where} would break a dependence: {found}", found)


def _first_times(p: Placement, required: dict[str, isl.Map]) -> isl.UnionMap:
    """The new order, for the dependence check: each moved instance at the first
    iteration that needs it, just before the loop's body."""
    return new_times(p, {name: m.reverse().lexmin() for name, m in required.items()}, -1)


def _check_dropped(p: Placement, required: dict[str, isl.Map], deps) -> None:
    """Refuse when an instance no iteration needs wrote a value that is used."""
    from analyses.evidence import Counterexample
    from analyses.instances import first_point

    for s in p.moved:
        dropped = isl.UnionSet.from_set(s.domain.subtract(required[s.name].range()))
        for relation, what in ((deps.tagged("flow"), "read by"),
                               (deps.tagged("live_out"), "left in")):
            used = relation.intersect_domain(
                isl.UnionMap.from_domain_and_range(dropped, _all_buffers(s)).wrap())
            if used.is_empty():
                continue
            src, dst, element, params = deps.decode(first_point(used))
            whom = f"{dst}" if what == "read by" else "the function's output"
            raise IllegalTransformError(
                f"{p.where}: {src} writes {element}, {what} {whom}, but no iteration of "
                f"loop {p.loop.var.name!r} needs it, so it would no longer be computed",
                Counterexample(f"{src} is no longer computed but {element} is used",
                               instances=(src,) if dst.statement == "END" else (src, dst),
                               element=element, params=params))


def _all_buffers(s: StatementModel) -> isl.UnionSet:
    return s.writes.range()


def _check_recompute(p: Placement, required: dict[str, isl.Map], need: isl.UnionMap) -> None:
    """Refuse recomputation (overlapping regions) that could give another value."""
    from analyses.evidence import Counterexample, Element
    from analyses.instances import first_point, instance, point_coordinates

    model = p.model
    later = [s for s in model.statements
             if s.position > p.moved[-1].position and s not in p.moved
             and s.position <= p.under[-1].position]
    for s in p.moved:
        req = required[s.name]
        # The instances computed more than once: at their later computations.
        again = req.reverse().subtract(req.reverse().lexmin()).domain()
        for a in s.accesses:
            elements = a.relation.intersect_domain(again).range()
            for w in later:
                for b in w.accesses:
                    if b.kind != "write" or b.buffer is not a.buffer:
                        continue
                    clash = b.relation.intersect_range(elements)
                    if clash.is_empty():
                        continue
                    coords, params = point_coordinates(clash.wrap().lexmin().sample_point())
                    count = len(w.loop_vars)
                    writer = instance(model, w, coords[:count])
                    element = Element(a.buffer.name, tuple(coords[count:]))
                    raise IllegalTransformError(
                        f"{p.where}: block {p.block.name!r} is computed again at later "
                        f"iterations and {a.kind}s {element}, which {writer} writes in "
                        "between", Counterexample(
                            f"{writer} writes {element} before {p.block.name} is computed "
                            "again", instances=(writer,), element=element, params=params))
            if a.kind != "read":
                continue
            own = isl.UnionMap.from_map(a.relation).intersect_range(
                union_all([m.writes for m in p.moved]).range())
            if own.is_empty():
                continue
            outside = isl.UnionMap.from_map(req).apply_range(own).subtract(need)
            if outside.is_empty():
                continue
            at_point = first_point(outside)
            coords, params = point_coordinates(at_point)
            at = coords[:p.depth]
            element_at = coords[p.depth:]
            buf = at_point.get_space().unwrap().get_tuple_name(isl.dim_type.out)
            element = Element(model.buffer(buf).name, tuple(element_at))
            pick = a.relation.intersect_domain(_fix(req, at).range()).intersect_range(
                isl.Set(f"{{ {buf}[{', '.join(map(str, element_at))}] }}"))
            reader_coords, _ = point_coordinates(pick.wrap().lexmin().sample_point())
            reader = instance(model, s, reader_coords[:len(s.loop_vars)])
            iteration = ", ".join(f"{v.name}={c}" for v, c in zip(p.outer_vars, at,
                                                                     strict=True))
            raise IllegalTransformError(
                f"{p.where}: iterations overlap, so block {p.block.name!r} is computed "
                f"again, but {reader} (needed at {iteration}) reads {element}, which that "
                "iteration does not compute: recomputing it could read another value",
                Counterexample(f"{reader} is recomputed from {element} outside its region",
                               instances=(reader,), element=element, params=params))


def _check_recomputed_sources(p: Placement, required: dict[str, isl.Map], deps) -> None:
    """Refuse recomputing an instance that reads an element the producer writes but
    that, in the function, read a value no instance of the producer wrote (an
    input's, the buffer's first, or a separate init stage's): computed again, it
    reads what its earlier computation left there instead.  ``C[vi, vj] = C[vi, vj] +
    B[vk]`` with no ``T.init()`` (or with an init block of its own before it),
    computed at two iterations, would add ``B`` twice."""
    from analyses.evidence import Counterexample, Element
    from analyses.instances import first_point, instance, point_coordinates

    own = union_all([m.writes for m in p.moved]).range()
    # Sources the recomputation computes again: instances of the moved statements (an
    # init outside them, a separate stage, runs once and is not there the second time).
    moved_writes = empty_union_map()
    for m in p.moved:
        moved_writes = moved_writes.union(isl.UnionMap.from_domain_and_range(
            isl.UnionSet.from_set(m.domain), m.writes.range()))
    sourced = deps.tagged("flow_must").intersect_domain(moved_writes.wrap()).range()
    for s in p.moved:
        req = required[s.name]
        again = req.reverse().subtract(req.reverse().lexmin()).domain()
        for a in s.accesses:
            if a.kind != "read":
                continue
            reads = isl.UnionMap.from_map(a.relation.intersect_domain(again)).intersect_range(
                own)
            unsourced = reads.wrap().subtract(sourced)
            if unsourced.is_empty():
                continue
            point = first_point(unsourced.unwrap())
            coords, params = point_coordinates(point)
            count = len(s.loop_vars)
            reader = instance(p.model, s, coords[:count])
            buf = point.get_space().unwrap().get_tuple_name(isl.dim_type.out)
            element = Element(p.model.buffer(buf).name, tuple(coords[count:]))
            raise IllegalTransformError(
                f"{p.where}: iterations overlap, so block {p.block.name!r} is computed "
                f"again, but {reader} reads {element}, which the block does not write "
                "before it: computed again it would read what its earlier computation "
                "wrote",
                Counterexample(f"{reader} reads the value {element} held before the block "
                               "ran, which its earlier computation overwrote",
                               instances=(reader,), element=element, params=params))


def _fix(m: isl.Map, values) -> isl.Map:
    for k, v in enumerate(values):
        m = m.fix_val(isl.dim_type.in_, k, isl.Val(int(v)))
    return m



def check_store_at(p: Placement, buffer: n.Buffer) -> None:
    """``store_at``: refuse a value of ``buffer`` that flows between two iterations of the
    loop (or of the loops around it)."""
    from analyses.dataflow import Dependences
    from analyses.evidence import Counterexample, Element
    from analyses.instances import instance, point_coordinates

    where = p.where
    flow = Dependences(p.model, buffers=[buffer]).tagged("flow")
    same = _same_iteration(p)
    crossing = flow.zip().subtract_domain(same.wrap()).zip()
    if crossing.is_empty():
        return
    pair = maps_of(crossing)[0]
    point = pair.wrap().lexmin().sample_point()
    source, sink = pair.domain().unwrap(), pair.range().unwrap()
    coords, params = point_coordinates(point)
    count_src = source.dim(isl.dim_type.in_) + source.dim(isl.dim_type.out)
    src_coords, sink_coords = coords[:count_src], coords[count_src:]
    by_name = {s.name: s for s in p.model.statements}
    writer = by_name[source.get_tuple_name(isl.dim_type.in_)]
    reader = by_name[sink.get_tuple_name(isl.dim_type.in_)]
    count_w = len(writer.loop_vars)
    first = instance(p.model, writer, src_coords[:count_w])
    second = instance(p.model, reader, sink_coords[:len(reader.loop_vars)])
    element = Element(buffer.name, tuple(src_coords[count_w:]))
    message = (f"{where}: {second} reads {element}, which {first} wrote in another "
               f"iteration of the loop; a buffer stored in the loop would not keep it")
    raise IllegalTransformError(message, Counterexample(
        message.split(": ", 1)[1], instances=(first, second), element=element, params=params))


def _same_iteration(p: Placement) -> isl.UnionMap:
    """``S[i] -> S'[j]`` for the statements under the loop whose first ``depth`` loop
    values agree: the same iteration of the loop and of the loops around it."""
    at = empty_union_map()
    for s in p.under:
        project = isl.Map.identity(isl.Map.from_domain_and_range(s.domain, s.domain)
                                   .get_space()).intersect_domain(s.domain)
        project = project.project_out(isl.dim_type.out, p.depth,
                                      len(s.loop_vars) - p.depth)
        at = at.union(isl.UnionMap.from_map(project.set_tuple_name(isl.dim_type.out, "_at")))
    return at.apply_range(at.reverse())



def refuse_access(model, s, access, message: str):
    """Raise :class:`IllegalTransformError` for the first instance of ``s`` that makes
    ``access``; ``message`` names it where it says ``{who}``."""
    from analyses.evidence import Counterexample, Element
    from analyses.instances import instance, point_coordinates

    coords, params = point_coordinates(access.relation.wrap().lexmin().sample_point())
    count = len(s.loop_vars)
    who = instance(model, s, coords[:count])
    element = Element(access.buffer.name, tuple(coords[count:]))
    raise IllegalTransformError(message.format(who=who), Counterexample(
        message.format(who=who).split(": ", 1)[1], instances=(who,), element=element,
        params=params))

