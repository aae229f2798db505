"""What the dataflow analysis is given: tagged accesses, kills, the END reads, times.

:mod:`.dataflow` asks :func:`analyses.value_flow.value_flow` its questions
with these pieces:

* accesses *tagged* by their element (``[S0[i] -> A[i]] -> A[i]``), so that
  each dependence knows the element it is about (:func:`tag`, :func:`untag`);
* a kill ``K<k>[outer loops] -> Buf[every element]`` at the end of each
  ``Allocate`` (:func:`allocation_kills`);
* an extra instance ``END[]`` after everything, reading every buffer the
  function does not allocate itself: the caller (:func:`end_reads`); and so
  does every assert instance, where the caller sees them if it fails
  (:func:`assert_reads`);
* program order, the model's 2d+1 times, without the dimensions that hold one
  value for every event (:func:`drop_constant_dims`), and backwards
  (:func:`negate_time`) for the questions asked about a few sources.
"""

from __future__ import annotations

import islpy as isl

from polypad.model import AffineSpace, Model
from polypad.model.isl_helpers import empty_union_map, union_all

from . import instances as inst

#: The empty union map (no parameters), and the union of maps: isl's conveniences,
#: under the names this module's users call them by.
empty = empty_union_map
union = union_all


def tag(relation: isl.UnionMap) -> isl.UnionMap:
    """``S[i] -> A[e]`` as ``[S[i] -> A[e]] -> A[e]``: the instance tagged by its element."""
    return relation.range_map()


def untag(tagged: isl.UnionMap) -> isl.UnionMap:
    """``[S -> A] -> [S' -> A]`` as ``S -> S'``."""
    return tagged.domain_factor_domain().range_factor_domain()


def untag_domain(tagged_access: isl.UnionMap) -> isl.UnionMap:
    """``[S -> A] -> A`` as ``S -> A``."""
    return tagged_access.domain_factor_domain()


def statement_of(tagged: isl.Space) -> str:
    """The statement name of a tagged space ``[S -> Buf]``."""
    return tagged.unwrap().get_tuple_name(isl.dim_type.in_)


def keep_maps(relation: isl.UnionMap, keep) -> isl.UnionMap:
    """The maps of ``relation`` that ``keep`` accepts."""
    listed = relation.get_map_list()
    return union(m for m in (listed.get_at(k) for k in range(listed.n_map())) if keep(m))


def from_statements(tagged: isl.UnionMap, names) -> isl.UnionMap:
    """The maps of a tagged relation whose domain is an access of a statement in ``names``."""
    return keep_maps(tagged, lambda m: statement_of(m.get_space().domain()) in names)


def of_statements(relation: isl.UnionMap, names) -> isl.UnionMap:
    """The maps of an untagged relation ``S[i] -> ...`` whose statement is in ``names``."""
    return keep_maps(relation, lambda m: m.get_space().domain().get_tuple_name(
        isl.dim_type.set) in names)


def negate_time(time: isl.UnionMap) -> isl.UnionMap:
    """``time`` with every output dimension negated: program order, backwards."""
    listed = time.get_map_list()
    if listed.n_map() == 0:
        return time
    width = listed.get_at(0).dim(isl.dim_type.out)
    dims = [f"t{k}" for k in range(width)]
    flip = isl.Map(f"{{ [{', '.join(dims)}] -> [{', '.join('-' + d for d in dims)}] }}")
    return time.apply_range(isl.UnionMap.from_map(flip))


def drop_constant_dims(time: isl.UnionMap) -> isl.UnionMap:
    """``time`` without the output dimensions that hold one value for every event.

    Such a dimension orders nothing, so lexicographic order -- program order
    -- is unchanged; but each one costs ISL's dataflow a level of its
    search.  In a deep nest, the 2d+1 schedule's sequence positions are
    mostly such dimensions, and so are the counters of loops of extent 1.

    A dimension counts when each map fixes it by an equality (after
    ``detect_equalities``) to the same value: no optimization problem per
    dimension, which on a 64-deep nest cost more than the dataflow saved.
    """
    listed = time.get_map_list()
    maps = [listed.get_at(k) for k in range(listed.n_map())]
    constant = constant_dims(maps)
    if not constant:
        return time
    runs = _runs(constant)
    out = empty()
    for m in maps:
        for first, count in reversed(runs):  # a run at a time: a copy of the map each
            m = m.project_out(isl.dim_type.out, first, count)
        out = out.union(isl.UnionMap.from_map(m))
    return out


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """``(first, count)`` of each run of consecutive ``positions`` (ascending)."""
    runs: list[tuple[int, int]] = []
    for k in positions:
        if runs and runs[-1][0] + runs[-1][1] == k:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((k, 1))
    return runs


def constant_dims(maps: list[isl.Map]) -> list[int]:
    """The output dimensions that ``maps`` (all with as many) fix to one value each."""
    if not maps:
        return []
    fixed = [m.detect_equalities() for m in maps if not m.plain_is_empty()]
    constant = []
    for k in range(maps[0].dim(isl.dim_type.out)):
        values = {_fixed_value(m, k) for m in fixed}
        if len(values) == 1 and None not in values:
            constant.append(k)
    return constant


def _fixed_value(m: isl.Map, k: int) -> int | None:
    """The value ``m`` plainly fixes its output dimension ``k`` to, or ``None``."""
    value = m.plain_get_val_if_fixed(isl.dim_type.out, k)
    return None if value.is_nan() else value.to_python()


def allocation_kills(model: Model, scopes, kept=lambda buffer: True
                     ) -> tuple[isl.UnionMap, isl.UnionMap]:
    """``K<k>[outer loops] -> Buf[every element]`` at the end of each ``Allocate``
    (of a buffer ``kept`` accepts), and the kills' times."""
    depth = inst.depth_of(model)
    kills, kill_times = empty(), empty()
    for k, scope in enumerate(scopes):
        if not kept(scope.buffer):
            continue
        inside = model.statements[scope.first:scope.stop]
        exact = [s for s in inside if not s.may]
        if not exact or scope.buffer not in model.buffer_names:
            continue  # no kill is the conservative choice
        d = scope.depth
        first = exact[0]
        domain = None
        for s in exact:
            part = s.domain.project_out(isl.dim_type.set, d, s.domain.dim(isl.dim_type.set) - d)
            part = part.set_tuple_name(f"K{k}")
            domain = part if domain is None else domain.union(part)
        space = AffineSpace(first.loop_vars[:d], tuple_name=f"K{k}", names=model.names)
        domain = domain.intersect(space.universe).coalesce()
        box = inst.buffer_box(model, scope.buffer)
        kills = kills.union(isl.UnionMap.from_map(
            isl.Map.from_domain_and_range(domain, box)))
        last = max(s.position[d] for s in inside)
        prefix: list = [2 * first.position[0]]
        for level in range(d):
            prefix += [first.loop_vars[level], 2 * first.position[level + 1]]
        prefix[-1] = 2 * last + 1
        kill_times = kill_times.union(isl.UnionMap.from_map(
            inst.time_map(space, prefix, depth, domain)))
    return kills, kill_times


def end_reads(model: Model, scopes, kept=lambda buffer: True
              ) -> tuple[isl.UnionMap, isl.UnionMap]:
    """``END[] -> Buf[every element]`` for every buffer not allocated inside the function
    (and that ``kept`` accepts), and END's time."""
    local = {id(scope.buffer) for scope in scopes}
    space = AffineSpace((), tuple_name="END", names=model.names)
    last = max((s.position[0] for s in model.statements), default=0)
    reads = empty()
    for buffer in model.buffer_names.objects():
        if id(buffer) in local or not kept(buffer):
            continue
        box = inst.buffer_box(model, buffer)
        reads = reads.union(isl.UnionMap.from_map(
            isl.Map.from_domain_and_range(space.universe, box)))
    time = inst.time_map(space, [2 * last + 2], inst.depth_of(model), space.universe)
    return reads, isl.UnionMap.from_map(time)


def assert_reads(model: Model, scopes, kept=lambda buffer: True) -> isl.UnionMap:
    """``S[i] -> Buf[every element]`` for each assert instance and every buffer not
    allocated inside the function (that ``kept`` accepts): where the assert fails, the
    call ends and the caller sees those buffers, as ``END`` does
    (:mod:`.assert_order`)."""
    local = {id(scope.buffer) for scope in scopes}
    boxes = [inst.buffer_box(model, buffer) for buffer in model.buffer_names.objects()
             if id(buffer) not in local and kept(buffer)]
    reads = empty()
    for s in model.statements:
        if s.is_assert:
            for box in boxes:
                reads = reads.union(isl.UnionMap.from_map(
                    isl.Map.from_domain_and_range(s.domain, box)))
    return reads


def as_union(m) -> isl.UnionMap:
    """``m`` as an ``isl.UnionMap``."""
    return isl.UnionMap.from_map(m) if isinstance(m, isl.Map) else m
