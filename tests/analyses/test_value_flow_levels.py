"""value_flow's last writes, found level by level of the time space, against the
one ``lexmax`` over the whole time space that it replaced.

:func:`analyses.value_flow._last` takes the pairs ``sink -> source`` level by
level (the first time dimension where the source falls below the sink),
deepest first, and one checked ``lexmax`` per level.  Here it must give what
the checked ``lexmax`` of all the pairs at once gives (``_lexmax``, the old
``_last``), and what the definition gives (:func:`latest`, by subtraction):

* on random imperfect nests up to four deep, with guards and indices modulo
  small numbers, as relations (and the whole dataflow against brute force);
* on every question the dataflow asks about random programs of the fuzz's
  generator (the whole answer, with the old ``_last`` put back, is the same);
* on nests 16 and 24 deep, where the old one still finishes in seconds.

A 64-deep nest, where the old one took tens of seconds in single ISL calls,
is in ``tests/transform/test_remove_no_op_budget.py``.
"""

from __future__ import annotations

import random

import islpy as isl
import pytest
from fuzz_programs import Seeded, nest_program, structural_program
from test_value_flow import brute, flow_tuples

import analyses
import polypad as pp
from analyses import dataflow
from analyses import value_flow as vf
from polypad.errors import NotAffineError


def _tree(rng: random.Random, depth: int, max_depth: int, counters: list[str],
          out: list[tuple[list[str], list[int], list[int]]], position: list[int]) -> None:
    """Statements as (counters, extents, positions): each level's position among its
    siblings, for a time map ``[p0, i0, p1, i1, ...]``."""
    for k in range(rng.randint(1, 3 if depth < max_depth else 2)):
        if depth < max_depth and rng.random() < 0.6:
            var = f"i{depth}"
            extent = rng.randint(1, 3)
            out_before = len(out)
            _tree(rng, depth + 1, max_depth, [*counters, var], out, [*position, k])
            for stmt in out[out_before:]:
                stmt[1][depth] = extent
        else:
            out.append((counters, [0] * len(counters), [*position, k]))


def _index(rng: random.Random, counters: list[str]) -> str:
    terms = " + ".join(f"{rng.choice([0, 1, 1, 2, -1])}*{v}" for v in counters) or "0"
    expr = f"{terms} + {rng.randint(0, 5)}"
    return f"(({expr}) mod {rng.choice([2, 3, 4, 6])})" if rng.random() < 0.5 else f"({expr})"


def random_nest(rng: random.Random) -> list[isl.UnionMap]:
    """``sink, must, may, kill, time`` of a random imperfect nest up to four deep, each
    statement with one or two accesses of ``A`` (6,), some under a modulo guard."""
    max_depth = rng.randint(1, 4)
    statements: list = []
    _tree(rng, 0, max_depth, [], statements, [])
    accesses = {"sink": [], "must": [], "may": [], "kill": []}
    times = []
    width = 2 * max_depth + 1
    for s, (counters, extents, position) in enumerate(statements):
        name = f"S{s}[{', '.join(counters)}]"
        domain = " and ".join(f"0 <= {v} < {e}" for v, e in zip(counters, extents)) or "true"
        if counters and rng.random() < 0.3:
            domain += f" and {_index(rng, counters)} {rng.choice(['<', '>=', '='])} 1"
        stamp = [str(position[0])]
        for v, p in zip(counters, position[1:]):
            stamp += [v, str(p)]
        stamp += ["0"] * (width - len(stamp))
        times.append(f"{name} -> [{', '.join(stamp)}] : {domain}")
        for _ in range(rng.randint(1, 2)):
            kind = rng.choice(["sink", "sink", "must", "must", "may", "kill"])
            accesses[kind].append(f"{name} -> A[e] : e = {_index(rng, counters)} "
                                  f"and {domain} and 0 <= e < 6")
    as_map = [isl.UnionMap("{ " + "; ".join(accesses[k]) + " }") for k in accesses]
    return [*as_map, isl.UnionMap("{ " + "; ".join(times) + " }")]


def lasts(sink, must, kill, time) -> tuple[isl.UnionMap, isl.UnionMap, isl.UnionMap]:
    """The last writes before each read: level by level, in one lexmax, by definition."""
    space = vf._time_space(time)
    levels = vf._earlier_by_level(sink.apply_range(must.union(kill).reverse()), time, space)
    times = vf._union(levels, time).apply_range(time)
    return vf._last(levels, time, space), vf._lexmax(times, space), vf.latest(times, space)


@pytest.mark.parametrize("seed", range(60))
def test_random_nests_last_writes_by_level_are_the_lexmax(seed):
    sink, must, _, kill, time = random_nest(random.Random(seed))
    every = sink.union(must).union(kill)
    by_level, one_shot, defined = lasts(sink.range_map(), must.range_map(),
                                        kill.range_map(), every.domain_map().apply_range(time))
    assert by_level.is_equal(one_shot) and by_level.is_equal(defined)


@pytest.mark.parametrize("seed", range(30))
def test_random_nests_agree_with_brute_force(seed):
    problem = random_nest(random.Random(1000 + seed))
    every = problem[0].union(problem[1]).union(problem[2]).union(problem[3])
    problem[4] = problem[4].intersect_domain(every.domain())
    assert flow_tuples(*problem) == brute(*problem)


def test_the_levels_are_exactly_the_earlier_pairs():
    sink, must, _, kill, time = random_nest(random.Random(7))
    pairs = sink.apply_range(must.union(kill).reverse())
    space = vf._time_space(time)
    levels = vf._earlier_by_level(pairs, time, space)
    assert len(levels) == space.dim(isl.dim_type.set)
    assert vf._union(levels, time).is_equal(vf._earlier(pairs, time, space))
    for k, a in enumerate(levels):  # each pair in one level
        assert all(a.intersect(b).is_empty() for b in levels[k + 1:])


def _one_shot_last(levels, time, space):
    """The ``_last`` this module's replaced: one checked lexmax over every level."""
    return vf._lexmax(vf._union(levels, time).apply_range(time), space)


@pytest.fixture
def compared(monkeypatch):
    """Every value_flow the dataflow runs is run again with the old ``_last``: the four
    answers must be the same.  Yields the list of questions compared."""
    asked = []
    real = dataflow.value_flow

    def both(*args):
        got = real(*args)
        by_level = vf._last
        vf._last = _one_shot_last  # value_flow looks it up when it runs
        try:
            old = real(*args)
        finally:
            vf._last = by_level
        for part in ("may_dependence", "must_dependence", "may_no_source", "must_no_source"):
            assert getattr(got, part).is_equal(getattr(old, part)), (part, args)
        asked.append(args)
        return got

    monkeypatch.setattr(dataflow, "value_flow", both)
    return asked


def _every_dependence(f: pp.PrimFunc) -> None:
    deps = analyses.dependences(f)
    for kind in ("flow", "flow_must", "anti", "output", "live_out", "live_in"):
        getattr(deps, kind)


@pytest.mark.parametrize("seed", range(25))
def test_the_dataflow_of_random_programs_is_the_old_one(seed, compared):
    try:  # a few of the generator's programs read a value the model cannot name
        _every_dependence(pp.parse(nest_program(Seeded(seed)).text))
    except NotAffineError:
        pass
    _every_dependence(pp.parse(structural_program(Seeded(seed))))
    assert compared  # questions were asked, and compared


def deep(depth: int, every: int) -> str:
    """An update under ``depth`` loops, of extent 2 every ``every`` levels, reading
    what the previous instances wrote, and a copy after it."""
    lines = ["@T.prim_func",
             'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):']
    for k in range(depth):
        lines.append("    " * (k + 1) + f"for i{k} in T.serial({2 if k % every == 0 else 1}):")
    last = f"i{depth - 1}"
    lines.append("    " * (depth + 1) + f"A[i0 + {last}] = A[i0 + {last}] + B[i{every}]")
    lines += ["    for j in T.serial(4):", "        B[j] = A[j]"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth, every", [(16, 4), (24, 4)])
def test_deep_nests_have_the_old_dataflow(depth, every, compared):
    _every_dependence(pp.parse(deep(depth, every)))
    assert compared
