"""``analyses.reducer_laws``: Z3's answer for a combiner is remembered by the
combiner's form, not by its variables, and a refutation names the combiner's own
parameters."""

from __future__ import annotations

from analyses import reducer_laws as laws
from analyses.evidence import Proved, Refuted
from polypad.ir import nodes as n


def _combiner(make, names=("x", "y"), dtype="float32") -> n.CommReducer:
    """A one-value combiner ``make(x, y)`` over fresh variables named ``names``."""
    x, y = n.Var(names[0], dtype), n.Var(names[1], dtype)
    return n.CommReducer((x,), (y,), (make(x, y),), (n.FloatImm(0.0, dtype),))


def test_a_combiner_read_again_with_new_variables_is_decided_once():
    # A block's combiner is read afresh at each build and bind: the second asks Z3
    # nothing (one Z3 cannot decide took its whole 5 s timeout each time).
    first = _combiner(lambda x, y: n.Add(n.Mul(x, y), n.Add(x, y)), ("p", "q"))
    again = _combiner(lambda x, y: n.Add(n.Mul(x, y), n.Add(x, y)), ("old", "offer"))
    assert first != again  # variables compare by identity
    laws._laws.cache_clear()
    assert laws.reducer_laws(first) == Proved("z3")
    assert laws.reducer_laws(again) == Proved("z3")
    info = laws._laws.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_a_refutation_names_the_combiners_own_parameters():
    for names in (("x0", "y0"), ("B_old", "B_offer")):
        decision = laws.reducer_laws(_combiner(lambda x, y: n.Sub(x, y), names))
        assert isinstance(decision, Refuted)
        values = decision.counterexample.values
        assert sorted(values) == sorted(f"{names[0]}_{t}" for t in "ab")
        a, b = (float(values[f"{names[0]}_{t}"].as_fraction()) for t in "ab")
        assert a - b != b - a
