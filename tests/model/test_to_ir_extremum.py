"""``to_ir._extremum`` (is a piecewise function the min or max of its pieces?) asked
piece by piece, against the question as it was asked before: ``pa.is_equal`` of
the min (max) of the distinct functions on ``pa``'s domain."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from polypad.ir import nodes as n
from polypad.model import to_ir


def folded_whole(pa: isl.PwAff, affs: list[isl.Aff]):
    """The reference: the whole min (max) of the same candidates built and compared
    with ``pa``."""
    distinct = to_ir.extremum_candidates(affs)
    if distinct is None:
        return None
    whole = [isl.PwAff.from_aff(aff).intersect_domain(pa.domain()) for aff in distinct]
    for node, combine in ((n.Min, isl.PwAff.min), (n.Max, isl.PwAff.max)):
        folded = whole[0]
        for other in whole[1:]:
            folded = combine(folded, other)
        if folded.is_equal(pa):
            return node, distinct
    return None


def _aff(rng: random.Random) -> str:
    return (f"{rng.randint(-2, 2)}i + {rng.randint(-2, 2)}j + {rng.randint(-1, 1)}n "
            f"+ {rng.randint(-3, 3)}")


def random_pw_aff(rng: random.Random) -> isl.PwAff:
    """The min or max of two or three functions on a box (which folds), or pieces of
    them cut by a random line (which mostly does not), or one of those changed on a
    corner."""
    box = f"0 <= i <= {rng.randint(0, 4)} and 0 <= j <= {rng.randint(0, 4)} and 0 <= n <= 3"
    affs = [isl.PwAff(f"[n] -> {{ [i, j] -> [({_aff(rng)})] : {box} }}")
            for _ in range(rng.randint(2, 3))]
    shape = rng.choice(["min", "max", "cut", "corner"])
    if shape in ("min", "max", "corner"):
        out = affs[0]
        for other in affs[1:]:
            out = out.min(other) if shape != "max" else out.max(other)
        if shape == "corner":
            corner = isl.Set(f"[n] -> {{ [i, j] : i = 0 and j = 0 and {box} }}")
            out = out.subtract_domain(corner).union_max(affs[-1].intersect_domain(corner))
        return out
    line = isl.Set(f"[n] -> {{ [i, j] : {_aff(rng)} >= 0 and {box} }}")
    return affs[0].intersect_domain(line).union_max(affs[1].subtract_domain(line))


@pytest.mark.parametrize("seed", range(150))
def test_piece_by_piece_is_the_whole_comparison(seed):
    pa = random_pw_aff(random.Random(seed)).coalesce()
    affs = [aff for _, aff in pa.get_pieces()]
    got, want = to_ir._extremum(pa, affs), folded_whole(pa, affs)
    if want is None:
        assert got is None
    else:
        assert got is not None and got[0] is want[0]
        assert all(a.plain_is_equal(b) for a, b in zip(got[1], want[1], strict=True))


def test_the_examples_fold_as_before():
    both = isl.PwAff("[n] -> { [i] -> [(4)] : n >= 4; [i] -> [(n)] : n < 4 }")
    folded = to_ir._extremum(both, [aff for _, aff in both.get_pieces()])
    assert folded is not None and folded[0] is n.Min
    cut = isl.PwAff("{ [i] -> [(i)] : i >= 2; [i] -> [(-i)] : i < 2 }")
    assert to_ir._extremum(cut, [aff for _, aff in cut.get_pieces()]) is None
