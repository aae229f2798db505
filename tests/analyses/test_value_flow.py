"""value_flow: value-based dataflow without ISL's compute_flow, against brute force.

Brute force enumerates every sink instance and, for the element it reads,
every must-source, kill and may-source that touches the element earlier:
the last must-source (or kill) is its source unless it is a kill, and so is
every may-source after it.  ISL's ``compute_flow`` misses sources of the
programs below (a ``% 4`` or ``% 6`` index beside a loop counter both
accesses share); ``value_flow`` must not.
"""

import random

import islpy as isl
import pytest

from analyses import instances as inst
from analyses.value_flow import latest, value_flow


def tuples(umap: isl.UnionMap) -> set:
    """``(name, coords, name', coords')`` for every pair of a finite union map."""
    out: set = set()

    def add_map(m: isl.Map) -> None:
        src, dst = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
        n_in = m.dim(isl.dim_type.in_)

        def add_point(p: isl.Point) -> None:
            c, _ = inst.point_coordinates(p)
            out.add((src, tuple(c[:n_in]), dst, tuple(c[n_in:])))

        m.wrap().foreach_point(add_point)

    umap.foreach_map(add_map)
    return out


def brute(sink, must, may, kill, time) -> tuple[set, set, set]:
    """Instance-level may and must dependences ``(src, coords, sink, coords)`` and the
    sinks ``(name, coords, element)`` no must-source or kill reaches."""
    at = {(a, b): t for a, b, _, t in tuples(time)}
    writes = {(a, b, e) for a, b, _, e in tuples(must)}
    kills = {(a, b, e) for a, b, _, e in tuples(kill)}
    maybe = {(a, b, e) for a, b, _, e in tuples(may)}
    may_dep, must_dep, unreached = set(), set(), set()
    for name, coords, _, element in tuples(sink):
        now = at[(name, coords)]
        before = [(at[(a, b)], a, b) for a, b, e in writes | kills
                  if e == element and at[(a, b)] < now]
        last = max((t for t, _, _ in before), default=None)
        if last is None:
            unreached.add((name, coords, element))
        between = [(a, b) for a, b, e in maybe - writes - kills
                   if e == element and at[(a, b)] < now and (last is None or at[(a, b)] > last)]
        lasts = [(a, b) for t, a, b in before if t == last]
        for a, b in lasts:
            if (a, b, element) in writes | maybe:
                may_dep.add((a, b, name, coords))
            if (a, b, element) in writes and not between and len(lasts) == 1:
                must_dep.add((a, b, name, coords))
        may_dep.update((a, b, name, coords) for a, b in between)
    return may_dep, must_dep, unreached


def flow_tuples(sink, must, may, kill, time) -> tuple[set, set, set]:
    """:func:`value_flow` on the accesses tagged by their element, as :func:`brute` gives."""
    every = sink.union(must).union(may).union(kill)
    got = value_flow(sink.range_map(), must.range_map(), may.range_map(), kill.range_map(),
                     every.domain_map().apply_range(time))

    def untag(umap):
        return umap.domain_factor_domain().range_factor_domain()

    unreached = {(a, b, e) for a, b, _, e in tuples(got.may_no_source.domain_factor_domain())}
    return tuples(untag(got.may_dependence)), tuples(untag(got.must_dependence)), unreached


def check(sink, must, may, kill, time):
    args = [isl.UnionMap(x) for x in (sink, must, may, kill, time)]
    every = args[0].union(args[1]).union(args[2]).union(args[3])
    args[4] = args[4].intersect_domain(every.domain())  # finite, for brute force
    assert flow_tuples(*args) == brute(*args)
    return flow_tuples(*args)


def test_the_write_two_iterations_back_reaches_the_read():
    # compute_flow gave S[1, 1] and S[2, 0] no source and no "no source" either: the
    # partial lexmax over the level l' = l dropped them from the sinks left to match.
    got = check("{ S[l, m] -> A[1 + m] : 0 <= l < 3 and 0 <= m < 2 }",
                "{ W[l, m] -> A[i] : (i - l - 2m) mod 4 = 0 and 0 <= l < 3 and 0 <= m < 2 "
                "and 0 <= i < 4 }", "{ }", "{ }",
                "{ W[l, m] -> [l, m, 0]; S[l, m] -> [l, m, 1] }")
    assert ("W", (0, 1), "S", (1, 1)) in got[1] and ("W", (1, 0), "S", (2, 0)) in got[1]


def test_time_reversed_with_a_may_source_between():
    # remove_no_op's question about issue 21's if/else, in the form it asks it:
    # time runs backwards, the reads are may-sources, the writes kill.
    check("{ S[l, m] -> A[1 + m] : 0 <= l <= 5 and 0 <= m <= 1 }",
          "{ W[l, m] -> A[i] : (i - l - 2m) mod 6 = 0 and 0 <= l <= 5 and 0 <= m <= 1 "
          "and 0 <= i <= 5 }",
          "{ R[l] -> A[i] : 0 <= l <= 5 and 4 - l <= 2i <= 5 - l }", "{ }",
          "{ R[l] -> [-l, -4, 0, 0]; W[l, m] -> [-l, 0, -m, 0]; S[l, m] -> [-l, 0, -m, -4] }")


def test_a_kill_ends_the_flow_and_a_may_source_that_is_a_kill_keeps_its_own():
    check("{ S[i] -> A[0] : 0 <= i < 4 }", "{ W[i] -> A[0] : i = 0 }",
          "{ S[i] -> A[0] : 0 <= i < 4 }", "{ K[i] -> A[0] : i = 2; S[i] -> A[0] : i = 3 }",
          "{ W[i] -> [i, 0]; S[i] -> [i, 2]; K[i] -> [i, 1] }")


def test_no_instance_runs():
    got = value_flow(*(isl.UnionMap("{ }") for _ in range(5)))
    assert got.may_dependence.is_empty() and got.may_no_source.is_empty()


def _expression(rng: random.Random, variables: list[str]) -> str:
    terms = " + ".join(f"{rng.choice([0, 1, 1, 2, -1])}*{v}" for v in variables)
    expr = f"{terms} + {rng.randint(0, 5)}"
    return f"(({expr}) mod {rng.choice([2, 3, 4, 6])})" if rng.random() < 0.6 else f"({expr})"


def random_problem(rng: random.Random) -> list[isl.UnionMap]:
    """Four statements in loops over ``l < 4`` (and ``m < 2``), some guarded by a modulo,
    each with one or two accesses of ``A`` (6,) of a random kind."""
    accesses = {"sink": [], "must": [], "may": [], "kill": []}
    times = []
    for k in range(4):
        variables = ["l", "m"][:rng.choice([1, 2])]
        domain = "0 <= l < 4" + (" and 0 <= m < 2" if len(variables) == 2 else "")
        if rng.random() < 0.4:
            domain += f" and {_expression(rng, variables)} {rng.choice(['<', '>=', '='])} 1"
        name = f"S{k}[{', '.join(variables)}]"
        inner = "0, m" if len(variables) == 2 else "1, 0"
        times.append(f"{name} -> [l, {inner}, {k}] : {domain}")
        for _ in range(rng.randint(1, 2)):
            kind = rng.choice(["sink", "must", "must", "may", "kill"])
            accesses[kind].append(f"{name} -> A[i] : i = {_expression(rng, variables)} "
                                  f"and {domain} and 0 <= i < 6")
    as_map = [isl.UnionMap("{ " + "; ".join(accesses[k]) + " }") for k in accesses]
    return [*as_map, isl.UnionMap("{ " + "; ".join(times) + " }")]


@pytest.mark.parametrize("seed", range(40))
def test_random_problems_agree_with_brute_force(seed):
    problem = random_problem(random.Random(seed))
    assert flow_tuples(*problem) == brute(*problem)


@pytest.mark.parametrize("seed", range(10))
def test_latest_is_the_lexicographic_maximum(seed):
    sink, must, _, kill, time = random_problem(random.Random(seed))
    writers = must.union(kill)
    times = sink.apply_range(writers.reverse()).apply_range(time)
    space = isl.Set.from_union_set(time.range()).get_space()
    assert latest(times, space).is_equal(times.lexmax())


def test_first_point_survives_an_empty_lexmin():
    # The set of the issue 21 (b) crash, as ISL's dataflow built it: its lexmin was
    # empty though the set holds S1(i=3) -> END; sampling that gave a void point.
    sink = isl.UnionMap("{ [S1[i, j = 0] -> A[0, i3]] -> A[0, i3] : (2 + i3) mod 4 = 0 "
                        "and 0 <= i <= 3 and 0 <= i3 <= 3 }")
    reads = isl.UnionMap("{ [S3[i, j = 0] -> A[0, i3]] -> A[0, i3] : (-1 - i + i3) mod 4 = 0 "
                         "and 0 <= i <= 2 and 0 <= i3 <= 3; [END[] -> A[e0, e1]] -> "
                         "A[e0, e1] : 0 <= e0 <= 2 and 0 <= e1 <= 3 }")
    time = isl.UnionMap("{ [S1[i, j = 0] -> A[0, i3]] -> [-2, -i, 0] : (2 + i3) mod 4 = 0 "
                        "and 0 <= i <= 3 and 0 <= i3 <= 3; [END[] -> A[e0, e1]] -> [-4, 0, 0] "
                        ": 0 <= e0 <= 2 and 0 <= e1 <= 3; [S3[i, j = 0] -> A[0, i3]] -> "
                        "[-2, -i, -4] : (1 + i - i3) mod 4 = 0 and 0 <= i <= 2 and "
                        "0 <= i3 <= 3 }")
    info = isl.UnionAccessInfo.from_sink(sink).set_must_source(isl.UnionMap("{ }"))
    info = info.set_may_source(reads).set_kill(sink).set_schedule_map(time)
    maps = []
    info.compute_flow().get_may_dependence().reverse().foreach_map(maps.append)
    firsts = {}
    for m in maps:
        found = inst.safe_lexmin(m.wrap())
        assert not found.is_empty() and found.is_subset(m.wrap())
        point = inst.first_point(isl.UnionMap.from_map(m))
        assert isl.Set.from_point(point).is_subset(m.wrap())
        firsts[m.range_factor_domain().get_tuple_name(isl.dim_type.out)] = \
            inst.point_coordinates(point)[0]
    assert firsts["END"][:2] == [3, 0]  # S1(i=3, j=0) leaves A[0, 2] to the caller
