"""``facts._one_piece`` (is one piece's function right on the whole domain?) asked
piece by piece, against the question as it was asked before: ``is_equal`` of
that function on the whole domain and the piecewise one."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from analyses import facts


def one_piece_whole(pa: isl.PwAff) -> isl.PwAff:
    """The reference: each piece's function on the whole domain, compared with ``pa``."""
    domain = pa.domain()
    for _, aff in pa.get_pieces():
        whole = isl.PwAff.from_aff(aff).intersect_domain(domain)
        if whole.is_equal(pa):
            return whole
    return pa


def _aff(rng: random.Random) -> str:
    return f"{rng.randint(-1, 2)}i + {rng.randint(-1, 1)}j + {rng.randint(-2, 2)}"


def random_pw_aff(rng: random.Random) -> isl.PwAff:
    """Pieces as ISL makes them: ``y = 3 if i = 3 else i`` (one function right
    everywhere), a floor division beside its value, or two functions that differ."""
    box = f"0 <= i <= {rng.randint(1, 5)} and 0 <= j <= {rng.randint(0, 3)}"
    f = _aff(rng)
    shape = rng.choice(["point", "line", "floor", "differ"])
    if shape == "point":  # f at one point written as its value there
        i, j = rng.randint(0, 1), rng.randint(0, 1)
        text = (f"{{ [i, j] -> [({f})] : {box} and not (i = {i} and j = {j}); "
                f"[i, j] -> [({f.replace('i', str(i)).replace('j', str(j))})] : "
                f"i = {i} and j = {j} and {box} }}")
    elif shape == "line":  # f on a line written with the line's equation put in
        text = (f"{{ [i, j] -> [({f})] : {box} and i != j; "
                f"[i, j] -> [({f.replace('j', 'i')})] : i = j and {box} }}")
    elif shape == "floor":
        text = (f"{{ [i, j] -> [(floor(i/2))] : {box} and i >= 2; "
                f"[i, j] -> [({rng.choice(['0', 'i', 'j'])})] : {box} and i < 2 }}")
    else:
        text = f"{{ [i, j] -> [({f})] : {box} and i <= j; [i, j] -> [({_aff(rng)})] : " \
               f"{box} and i > j }}"
    return isl.PwAff(text)


@pytest.mark.parametrize("seed", range(120))
def test_piece_by_piece_is_the_whole_comparison(seed):
    pa = random_pw_aff(random.Random(seed))
    got, want = facts._one_piece(pa), one_piece_whole(pa)
    assert got.is_equal(pa)  # the same function, however written
    assert got.n_piece() == want.n_piece()
    if want.n_piece() == 1:
        assert got.get_pieces()[0][1].plain_is_equal(want.get_pieces()[0][1])
