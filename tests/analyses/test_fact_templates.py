"""The templates of stored facts: ``facts._one_piece`` (is one piece's function right
on the whole domain?) asked piece by piece, against the question as it was asked
before (``is_equal`` of that function on the whole domain and the piecewise one);
and ``make_templates`` stopping at the deadline instead of leaving a template out."""

from __future__ import annotations

import random

import islpy as isl
import pytest

import polypad as pp
from analyses import facts
from analyses.program import program_of
from polypad import budget
from polypad.errors import BudgetExceeded
from polypad.ir import nodes as n


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


STORED_THEN_READ = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
      C: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = A[i] + T.float32(1)
    for j in T.serial(4):
        C[j] = B[3 - j]
"""


def _stored_fact_at_the_read():
    program = program_of(pp.parse(STORED_THEN_READ))
    target = next(s for s in program.sites
                  if isinstance(s.stmt, n.BufferStore) and s.stmt.buffer.name == "C")
    inst = facts.Instantiator(program, target)
    (fact,) = [f for f in inst.facts() if f.kind == "stored" and f.loads[0].buffer.name == "B"]
    return inst, fact


def test_a_template_names_the_writer_of_the_element():
    inst, fact = _stored_fact_at_the_read()
    (t,) = inst.make_templates(fact, 0)
    assert [pp.script(y) if not isinstance(y, n.Var) else y.name for y in t.ys] == ["e0"]


def test_making_templates_past_the_deadline_stops_instead_of_dropping_them():
    inst, fact = _stored_fact_at_the_read()
    # The outer budget sets ISL's operation limit, the inner one the deadline: past it,
    # the writer's counters are not turned into IR (a deep nest has many).
    with budget.within(60), budget.within(1e-6):
        while not budget.expired():
            pass
        with pytest.raises(BudgetExceeded):
            inst.make_templates(fact, 0)
