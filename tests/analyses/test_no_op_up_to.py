"""``no_op._up_to`` (the times at or before one point) written out level by level,
against ``lex_le_set``/``lex_lt_set`` as ``_not_decisive`` asked them before."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from analyses.no_op import _up_to


def by_isl(times: isl.Set, when: isl.Set, strict: bool) -> isl.Set:
    return (times.lex_lt_set(when) if strict else times.lex_le_set(when)).domain()


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("strict", [False, True])
def test_level_by_level_is_isls_lexicographic_order(seed, strict):
    rng = random.Random(seed)
    dims = rng.randint(1, 5)
    names = ", ".join(f"t{k}" for k in range(dims))
    point = ", ".join(str(rng.randint(-1, 2)) for _ in range(dims))
    box = " and ".join(f"-2 <= t{k} <= 3" for k in range(dims))
    params = "[n] -> " if rng.random() < 0.3 else ""
    times = isl.Set(f"{params}{{ [{names}] : {box} }}")
    when = isl.Set(f"{params}{{ [{point}] }}")
    assert _up_to(when, strict=strict).intersect(times).is_equal(by_isl(times, when, strict))


@pytest.mark.parametrize("strict", [False, True])
def test_a_time_that_depends_on_a_parameter_is_isls_order_too(strict):
    times = isl.Set("[n] -> { [t0, t1] : 0 <= t0, t1 <= 3 }")
    when = isl.Set("[n] -> { [1, n] : 0 <= n <= 3 }")
    assert _up_to(when, strict=strict).intersect(times).is_equal(by_isl(times, when, strict))
