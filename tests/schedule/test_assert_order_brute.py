"""Brute force: on random small nests holding an ``assert``, each legality answer agrees
with running both orders at every small ``n``.

A nest ``for i, j`` stores into ``A`` (its own element, or one another
instance reads) and holds an assert before it, after it, between its loops or
in its body before or after the store, whose condition ``i * a + j * b != n``
fails at the instances on one line (``n < 5`` outside the nest).  Two questions:

* ``reorder(j, i)``: the original and the swapped nest, run at every ``n``;
* ``parallel(i)``: the original and the nest with ``i`` run backwards (one of the
  orders a parallel loop may take).

polypad's answer (the primitive goes ahead, or raises
:class:`IllegalTransformError`) must agree: legal only where every ``n`` gives
the same error (or none) and the same ``A``, refused only where some ``n``
does not.  Every condition here fails at a single line of instances, so a
move of a store across an assert instance always shows at some ``n``.
"""

import numpy as np
import pytest

import codegen
from polypad.errors import AssertionFailedError, IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

PLACES = ("before", "after", "outer", "first", "last")
STORES = {
    "own": "A[{i}, j] = A[{i}, j] * 2.0 + T.Cast(\"float32\", {i} * 4 + j + 1)",
    "diag": "A[{i}, j] = A[{i}, j] + A[({i} + 1) % {I}, (j + 1) % {J}]",
}


def nest(case: dict, order: str = "ij", reverse_i: bool = False) -> str:
    """The case's function text; ``order`` "ji" swaps the loops, ``reverse_i`` runs ``i``
    backwards."""
    I, J = case["I"], case["J"]
    i = f"({I} - 1 - i)" if reverse_i else "i"
    store = STORES[case["store"]].format(i=i, I=I, J=J)
    place = case["place"]
    inside = f"{i} * {case['a']} + j * {case['b']} != n" if place in ("first", "last") \
        else f"{i} * {case['a']} != n"
    check = 'assert {}, "failed"'
    loops = {"i": f"for i in range({I}):", "j": f"for j in range({J}):"}
    outer, inner = (loops[order[0]], loops[order[1]])
    lines = ["@T.prim_func",
             'def f(n: T.int32, A: T.Buffer((3, 3), "float32")):']
    if place == "before":
        lines.append("    " + check.format("n < 5"))
    lines.append("    " + outer)
    if place == "outer":
        lines.append("        " + check.format(inside))
    lines.append("        " + inner)
    body = [store]
    if place == "first":
        body.insert(0, check.format(inside))
    if place == "last":
        body.append(check.format(inside))
    lines += ["            " + x for x in body]
    if place == "after":
        lines.append("    " + check.format("n < 5"))
    return "\n".join(lines) + "\n"


def cases(count: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        case = {"I": int(rng.integers(2, 4)), "J": int(rng.integers(2, 4)),
                "place": PLACES[rng.integers(len(PLACES))],
                "store": sorted(STORES)[rng.integers(len(STORES))],
                "a": int(rng.choice([0, 1, 3])), "b": int(rng.choice([0, 1]))}
        if case["place"] == "outer":
            case["b"] = 0  # j is not in scope there
        if case["place"] in ("outer", "first", "last") and case["a"] + case["b"] == 0:
            continue  # a check of n alone: every order fails at the first instance
        out.append(case)
    return out


def outcomes(text: str) -> list:
    """At each small ``n``: the error's message (or None) and ``A`` after the call."""
    kernel = codegen.build(parse(text), target="python")
    out = []
    for value in range(-1, 12):
        a = np.arange(9, dtype="float32").reshape(3, 3)
        try:
            kernel(value, a)
            error = None
        except AssertionFailedError as err:
            error = err.assert_message
        out.append((value, error, a.tobytes()))
    return out


def legal(text: str, apply) -> bool:
    sch = Schedule(parse(text))
    try:
        apply(sch)
    except IllegalTransformError:
        return False
    return True


CASES = cases(24, 7)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_each_answer_agrees_with_running_both_orders(case):
    text = nest(case)
    runs = outcomes(text)
    if case["place"] != "outer":  # a perfect nest only
        same = outcomes(nest(case, order="ji")) == runs
        assert legal(text, lambda s: s.reorder("j", "i")) == same, (text, "reorder")
    same = outcomes(nest(case, reverse_i=True)) == runs
    assert legal(text, lambda s: s.parallel("i")) == same, (text, "parallel")


def test_the_cases_cover_every_place_and_both_answers():
    answers = set()
    for case in CASES:
        text = nest(case)
        answers.add((case["place"], legal(text, lambda s: s.parallel("i"))))
    assert {place for place, _ in answers} == set(PLACES)
    assert {answer for _, answer in answers} == {True, False}
