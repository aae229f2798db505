"""``isl_helpers.involved_positions``: every dimension with a nonzero coefficient, found
by halves (the linear forms ``to_ir`` reads are the same as read coefficient by
coefficient)."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from polypad.model.isl_helpers import FEW_DIMS, involved_positions


def nonzero(obj, dim_type) -> list[int]:
    return [k for k in range(obj.dim(dim_type))
            if not obj.get_coefficient_val(dim_type, k).is_zero()]


@pytest.mark.parametrize("seed", range(30))
def test_every_nonzero_coefficient_is_found(seed):
    rng = random.Random(seed)
    dims = rng.choice([1, FEW_DIMS, FEW_DIMS + 1, 40, 129])
    names = [f"x{k}" for k in range(dims)]
    used = rng.sample(range(dims), rng.randint(0, min(dims, 4)))
    terms = [f"{rng.choice([-3, -1, 1, 2])}*x{k}" for k in used]
    if used and rng.random() < 0.5:  # a division: its dims count as involved too
        terms.append(f"floor(({names[used[0]]} + 1)/3)")
    body = " + ".join(terms) or "7"
    aff = isl.Aff(f"[n] -> {{ [{', '.join(names)}] -> [({body} + n)] }}")
    found = involved_positions(aff, isl.dim_type.in_)
    assert list(found) == sorted(found)
    assert set(nonzero(aff, isl.dim_type.in_)) <= set(found)
    if not used and dims > FEW_DIMS:
        assert not found  # a constant: no coefficient read
    assert list(involved_positions(aff, isl.dim_type.param)) == [0]
    # a constraint of a basic set in as many dimensions
    bset = isl.BasicSet(f"[n] -> {{ [{', '.join(names)}] : {body} + n >= 0 }}")
    for c in bset.get_constraints():
        assert set(nonzero(c, isl.dim_type.set)) <= set(involved_positions(c, isl.dim_type.set))
