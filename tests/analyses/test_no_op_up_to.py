"""``no_op._times_before`` (the times before one point, and at or before it) written
out level by level, against ``lex_lt_set``/``lex_le_set`` as ``_not_decisive`` asked
them before; and ``no_op._instances_in`` (a preimage) against the projection it
replaces."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from analyses.no_op import _instances_in, _times_before


def by_isl(times: isl.Set, when: isl.Set, strict: bool) -> isl.Set:
    return (times.lex_lt_set(when) if strict else times.lex_le_set(when)).domain()


def check(times: isl.Set, when: isl.Set) -> None:
    strictly, at_or = _times_before(when)
    assert strictly.intersect(times).is_equal(by_isl(times, when, True))
    assert at_or.intersect(times).is_equal(by_isl(times, when, False))


@pytest.mark.parametrize("seed", range(40))
def test_level_by_level_is_isls_lexicographic_order(seed):
    rng = random.Random(seed)
    dims = rng.randint(1, 5)
    names = ", ".join(f"t{k}" for k in range(dims))
    point = ", ".join(str(rng.randint(-1, 2)) for _ in range(dims))
    box = " and ".join(f"-2 <= t{k} <= 3" for k in range(dims))
    params = "[n] -> " if rng.random() < 0.3 else ""
    check(isl.Set(f"{params}{{ [{names}] : {box} }}"), isl.Set(f"{params}{{ [{point}] }}"))


def test_a_time_that_depends_on_a_parameter_is_isls_order_too():
    check(isl.Set("[n] -> { [t0, t1] : 0 <= t0, t1 <= 3 }"),
          isl.Set("[n] -> { [1, n] : 0 <= n <= 3 }"))


@pytest.mark.parametrize("seed", range(20))
def test_instances_at_some_times_are_the_preimage_of_the_times(seed):
    # A statement's time function (constants, counters, a floor division) on its
    # domain, and the times before a point: the instances the projection gives.
    rng = random.Random(seed)
    domain = isl.Set("[n] -> { S[i, j] : 0 <= i < n and 0 <= j <= i and n <= 6 }")
    entries = rng.choice([["0", "i", "1", "j"], ["2", "floor(i/2)", "j", "i"],
                          ["1", "i + j", "0", "n - j"]])
    schedule = isl.Map(f"[n] -> {{ S[i, j] -> [{', '.join(entries)}] }}").intersect_domain(
        domain)
    point = ", ".join(str(rng.randint(0, 4)) for _ in entries)
    strictly, at_or = _times_before(isl.Set(f"[n] -> {{ [{point}] }}"))
    for times in (strictly, at_or):
        assert _instances_in(schedule, times).is_equal(
            schedule.intersect_range(times).domain())
