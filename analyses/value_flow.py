"""Value-based dataflow, from memory-based pairs and program time.

This is what :mod:`.dataflow` asks of ISL, answered without
``isl.UnionAccessInfo.compute_flow``.  That function is unsound in the ISL
that islpy bundles (checked with islpy 2024.2 and 2026.2.2): its search for
the last write before each read calls ``isl_map_partial_lexmax``, whose
"no solution here" part comes back too small on some relations with integer
divisions (a ``% 6`` index beside an equated loop counter), so the reads it
drops there get no source at all and are not reported as reading an input
either.  The dependence of such a read vanishes, and a decider that trusts
it proves that a live store is dead.  For example

    { S[l, m] -> W[l', m'] : l' = l and (-1 - m + l' + 2m') mod 4 = 0
                             and 0 <= m' <= 1 }

maximised over ``0 <= l <= 2 and 0 <= m <= 1`` reports no point without a
solution, though ``S[0, 0]``, ``S[1, 1]`` and ``S[2, 0]`` have none.

Here every step is a set operation ISL does exactly (composition,
intersection, subtraction), and each lexicographic maximum taken is
checked against its definition before it is used:

* ``pairs``: each sink with each must-source or kill that touches the same
  element strictly earlier (accesses are tagged by their element, so "the
  same element" is "the same tag");
* ``last``: for each sink, the latest time among those, which is a write
  that no other must-source or kill follows before the sink (found level
  by level of the time space, deepest first: see :func:`_last`);
* the dependences from must-sources are the pairs at that time; those from
  may-sources are every may-source after it (or every earlier one, where no
  must-source came before) and before the sink;
* a dependence from a must-source is *certain* unless a may-source lies
  between;
* kills are must-sources whose dependences are not reported, as in ISL
  (``isl_union_flow_drop_kill_source``): a may-source that is also a kill
  counts as a kill while the search runs and keeps its dependences.

The answers are ISL's (``get_may_dependence``, ``get_must_dependence``,
``get_may_no_source``, ``get_must_no_source``), ordered by the time map
alone, as ISL's schedule-tree path orders them.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.budget import check as check_deadline
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected


@dataclass(frozen=True)
class Flow:
    """The answer of :func:`value_flow`, named as ISL names the parts of a union flow.

    ``may_dependence`` and ``must_dependence`` map each source access to the
    sink access that reads its value (tagged spaces, as given);
    ``may_no_source`` holds the sink accesses (``sink -> element``) that no
    must-source or kill reaches, ``must_no_source`` those that no source at
    all reaches.
    """

    may_dependence: isl.UnionMap
    must_dependence: isl.UnionMap
    may_no_source: isl.UnionMap
    must_no_source: isl.UnionMap


def value_flow(sink: isl.UnionMap, must: isl.UnionMap, may: isl.UnionMap,
               kill: isl.UnionMap, time: isl.UnionMap) -> Flow:
    """The value-based dataflow from ``must``/``may`` sources to ``sink``, through ``kill``.

    Every argument but ``time`` is an access relation ``instance -> element``;
    ``time`` maps every instance to a point of one space, and the earlier
    point runs first (lexicographic order).  Instances with the same time
    are not ordered: none is a source for another.
    """
    if time.is_empty():  # no instance runs: nothing reaches anything
        nothing = isl.UnionMap.empty(sink.get_space().params())
        return Flow(nothing, nothing, sink, sink)
    killers = must.union(kill)
    may_only = may.subtract(killers)  # a must access trumps a may access of the same element
    space = _time_space(time)
    # Each step below is one or a few isl calls that can take seconds on relations
    # with many integer divisions; isl's operation limit bounds each only roughly
    # (its operations differ in cost), so the deadline is checked between them.
    levels = _earlier_by_level(sink.apply_range(killers.reverse()), time, space)
    check_deadline()
    pairs = _union(levels, sink)
    last = _last(levels, time, space)
    check_deadline()
    found = _pairs_at(pairs, time, last, killers)
    later = _earlier(sink.apply_range(may_only.reverse()), time, space)
    check_deadline()
    # A may-source counts where no must-source (or kill) came before, or after the last.
    both = later.range_map().apply_range(time).range_product(
        later.domain_map().apply_range(last))  # [sink -> source] -> [t(source) -> last]
    after_last = isl.UnionSet.from_set(isl.Map.lex_gt(space).wrap())
    # last's domain coalesced: the same set, but subtracting it as lexmax leaves it
    # (many pieces with their own divisions) took 6 s where this takes 0.2 s.
    later = later.subtract_domain(last.domain().coalesce()).union(
        both.intersect_range(after_last).domain().unwrap())
    check_deadline()
    # Two must-sources at the last time: ISL cannot tell which wrote last, nor can we.
    tied = _tied(found)
    certain = found.subtract_domain(later.domain()).subtract_domain(tied)
    reported = must.domain().union(may.domain())
    may_dep = found.union(later).intersect_range(reported).reverse()
    must_dep = certain.intersect_range(must.domain()).reverse()
    no_must = sink.subtract_domain(pairs.domain().coalesce())  # coalesced: as above
    return Flow(may_dep, must_dep, no_must, no_must.subtract_domain(later.domain()))


def _time_space(time: isl.UnionMap) -> isl.Space:
    """The set space every instance's time lies in."""
    listed = time.get_map_list()
    if listed.n_map() == 0:
        return isl.Space.set_alloc(isl.DEFAULT_CONTEXT, 0, 0)
    return listed.get_at(0).get_space().range()


def _earlier(pairs: isl.UnionMap, time: isl.UnionMap, space: isl.Space) -> isl.UnionMap:
    """The pairs ``sink -> source`` of ``pairs`` whose source runs strictly before the sink.

    Both times side by side, ``[sink -> source] -> [t -> t']``, against ``t > t'``:
    several times faster in ISL than ``lex_gt_at_multi_union_pw_aff`` with the times.
    """
    both = pairs.domain_map().apply_range(time).range_product(
        pairs.range_map().apply_range(time))
    after = isl.UnionSet.from_set(isl.Map.lex_gt(space).wrap())
    return both.intersect_range(after).domain().unwrap()


def _earlier_by_level(pairs: isl.UnionMap, time: isl.UnionMap,
                      space: isl.Space) -> list[isl.UnionMap]:
    """:func:`_earlier`'s pairs, split by the first time dimension where the source's
    time falls below the sink's, deepest level first.

    Level ``k`` holds the pairs whose times agree on dimensions ``0 .. k - 1``
    and differ at ``k``: together the levels are exactly :func:`_earlier`'s
    pairs, each in one level.  A source at a deeper level runs after every
    source of the same sink at a shallower one (it agrees with the sink where
    those fall below it), which is what :func:`_last` builds on.
    """
    both = pairs.domain_map().apply_range(time).range_product(
        pairs.range_map().apply_range(time))
    levels = []
    for k in reversed(range(space.dim(isl.dim_type.set))):
        at = isl.UnionSet.from_set(_falls_at(space, k).wrap())
        levels.append(both.intersect_range(at).domain().unwrap())
        check_deadline()
    return levels


def _falls_at(space: isl.Space, level: int) -> isl.Map:
    """``{ t -> t' : t and t' agree before level and t[level] > t'[level] }``."""
    order = isl.Map.universe(isl.Space.map_from_set(space))
    for k in range(level):
        order = order.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    return order.order_gt(isl.dim_type.in_, level, isl.dim_type.out, level)


def _union(maps: list[isl.UnionMap], like: isl.UnionMap) -> isl.UnionMap:
    """The union of ``maps`` (empty, in ``like``'s parameters, when there are none)."""
    out = isl.UnionMap.empty(like.get_space().params())
    for m in maps:
        out = out.union(m)
    return out


def _last(levels: list[isl.UnionMap], time: isl.UnionMap, space: isl.Space) -> isl.UnionMap:
    """For each sink, the latest time of a source that :func:`_earlier_by_level` gives it.

    The latest source lies at the deepest level where the sink has one (any
    source there runs after all at shallower levels), so each level answers
    for the sinks no deeper level reached, by the lexicographic maximum of
    its own times: many small ``lexmax`` calls, with the deadline checked
    between them.  One ``lexmax`` over all the levels at once is exact too,
    but on a deep nest ISL splits its answer into a piece per combination of
    loop counters at their bounds (127 pieces for a 64-deep nest with eight
    loops of extent 2, where these levels give 8), and checking it, then
    :func:`_tied` on the pairs it picks, took single ISL calls of 3 to 6 s
    that no deadline can interrupt (value_flow: 11 s then, 0.3 s now).
    """
    found = []
    reached = None  # the sinks a deeper level answered for
    for pairs in levels:
        times = pairs.apply_range(time)
        if reached is not None:
            times = times.subtract_domain(reached)
        if not times.is_empty():
            found.append(_lexmax(times, space))
        check_deadline()
        reached = pairs.domain() if reached is None else reached.union(pairs.domain()).coalesce()
    return _union(found, time)


def _lexmax(times: isl.UnionMap, space: isl.Space) -> isl.UnionMap:
    """For each sink, the latest of the times ``times`` gives it.

    ISL's ``lexmax`` answers, checked against the definition: a function on
    the whole domain of ``times``, inside it, and followed by no time of
    ``times``.  Where the check fails (ISL's ``lexmin`` has returned an empty
    optimum of a non-empty set), :func:`latest` answers instead: exact, but
    on relations with integer divisions its subtraction can take minutes
    where ``lexmax`` and the check take a second.
    """
    try:
        best = times.lexmax()
        check_deadline()
        later_than = isl.UnionMap.from_map(isl.Map.lex_lt(space))
        if (best.is_single_valued() and best.is_subset(times)
                and _covers(best.domain(), times.domain())):
            check_deadline()
            if times.intersect(best.apply_range(later_than)).is_empty():
                return best
    except isl.Error as err:
        rise_unless_expected(err, DIVISIONS_REFUSED)  # the known refusal: latest answers
    return latest(times, space)


def _covers(outer: isl.UnionSet, inner: isl.UnionSet) -> bool:
    """Whether ``inner`` is a subset of ``outer``, both coalesced first.

    The same sets, so the same answer as ``inner.is_subset(outer)``; but on
    the domains ``lexmax`` leaves (many pieces, each with its own integer
    divisions) that call can be slower by a factor of ten or more: on the
    fuzzer's case 1787 of seed 6007 (a reorder's legality) it took 18 s
    where this takes 1 s, and isl's operation limit, which counts its
    operations and not their cost, let it run far past the budget.
    """
    return inner.coalesce().is_subset(outer.coalesce())


def latest(times: isl.UnionMap, space: isl.Space) -> isl.UnionMap:
    """For each sink, the one time of ``times`` that no other of its times follows."""
    earlier_than = isl.UnionMap.from_map(isl.Map.lex_gt(space))
    return times.subtract(times.apply_range(earlier_than))


def _pairs_at(pairs: isl.UnionMap, time: isl.UnionMap, last: isl.UnionMap,
              sources: isl.UnionMap) -> isl.UnionMap:
    """The pairs ``sink -> source`` whose source runs at the sink's ``last`` time.

    Through the sources that run at that time (the inverse of the time map,
    cut to ``sources``' instances so ISL composes little).
    """
    at = time.intersect_domain(sources.domain()).reverse()
    return pairs.intersect(last.apply_range(at))


def _tied(found: isl.UnionMap) -> isl.UnionSet:
    """The sinks that ``found`` gives more than one source."""
    if found.is_single_valued():
        return isl.UnionSet.empty(found.get_space().params())
    both = found.range_product(found)  # sink -> [source -> source']
    same = found.range().identity().wrap()
    return both.subtract_range(same).domain()
