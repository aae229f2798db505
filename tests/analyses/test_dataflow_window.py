"""The dataflow of the statements under one loop (``Dependences(..., inside=loop)``,
:mod:`analyses.dataflow_window`): within one run of the loop, exactly the pairs of a run
of the program (brute force) and of the whole function's dataflow; the reduction
dependences and the carried dependence ``vectorize`` asks about, the same both ways."""

from __future__ import annotations

import dataclasses
import random

import pytest
from structural_brute import brute_dependences, pairs, random_args, trace

from analyses import flow_inputs as fi
from analyses.dataflow import Dependences
from analyses.dataflow_cache import _FLOWS
from analyses.dataflow_window import computing_whole, window
from analyses.loop_carried import carried_dependence
from analyses.reductions import reduction_dependences
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.loop_names import loop_name
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.schedule.legality import check_vectorize
from polypad.script import parse

_KINDS = ("flow", "anti", "output")


def _index(rng: random.Random, loops: list[str]) -> str:
    terms = [f"{rng.randint(0, 2)} * {v}" for v in loops] + [str(rng.randint(0, 7))]
    return f"({' + '.join(terms)}) % 8"


def _store(rng: random.Random, loops: list[str]) -> str:
    target, source = rng.choice("AB"), rng.choice("AB")
    at = _index(rng, loops)
    if rng.random() < 0.4:  # an exact (integer) reduction's update
        return f"{target}[{at}] = {target}[{at}] + {source}[{_index(rng, loops)}]"
    return f"{target}[{at}] = {source}[{_index(rng, loops)}] + {rng.randint(1, 3)}"


def random_nest(seed: int) -> str:
    """Statements before, inside and after an inner loop of an outer loop, and after
    the nest; an affine guard here and there (exact instance sets, no may-access)."""
    rng = random.Random(seed)
    lines = [f"for o in range({rng.randint(1, 3)}):"]
    if rng.random() < 0.6:
        lines.append("    " + _store(rng, ["o"]))
    lines.append(f"    for i in range({rng.randint(1, 4)}):")
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.3:
            lines += [f"        if i < {rng.randint(1, 3)}:",
                      "            " + _store(rng, ["o", "i"])]
        else:
            lines.append("        " + _store(rng, ["o", "i"]))
    if rng.random() < 0.6:
        lines.append("    " + _store(rng, ["o"]))
    if rng.random() < 0.6:
        lines.append(_store(rng, []))
    body = "\n".join("    " + line for line in lines)
    return ('@T.prim_func\ndef f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):\n'
            + body + "\n")


def _loops(func: n.PrimFunc) -> list[n.For]:
    return [x for x in walk(func.body) if isinstance(x, n.For)]


def _in_one_run(model, loop: n.For):
    """Whether a pair ``((name, values), (name', values'))`` lies in one run of ``loop``."""
    depth = {s.name: k for s in model.statements for k, x in enumerate(s.loops) if x is loop}

    def inside(pair) -> bool:
        (a, x), (b, y) = pair
        return a in depth and b in depth and x[:depth[a]] == y[:depth[b]]

    return inside


@pytest.mark.parametrize("seed", range(30))
def test_a_run_of_each_loop_has_the_pairs_of_a_run_of_the_program(seed):
    f = parse(random_nest(seed))
    model = extract(f)
    brute = brute_dependences(trace(f, random_args(f, seed)))
    whole = Dependences(model)
    for loop in _loops(f):
        in_run = _in_one_run(model, loop)
        _FLOWS.clear()
        part = Dependences(model, inside=loop)
        assert part._flows is not whole._flows  # the restricted question was asked
        for kind in _KINDS:
            want = {p for p in brute[kind] if in_run(p)}
            assert {p for p in pairs(fi.untag(part.tagged(kind))) if in_run(p)} == want, kind
            assert {p for p in pairs(getattr(whole, kind)) if in_run(p)} == want, kind
        must = {p for p in pairs(part.flow_must) if in_run(p)}
        assert must == {p for p in pairs(whole.flow_must) if in_run(p)}


def _answer(call):
    try:
        return ("answer", call())
    except IllegalTransformError as error:
        return ("refused", str(error), str(error.evidence))


def _carried(f: n.PrimFunc, loop: n.For):
    deps = reduction_dependences(f, exact_only=True, inside=loop)
    found = carried_dependence(f, loop, loop_name(f, loop), deps=deps)
    return None if found is None else str(found)


@pytest.mark.parametrize("seed", range(40, 70))
def test_vectorize_answers_and_refuses_as_with_the_whole_function(seed):
    f = parse(random_nest(seed))
    counts = {"answer": 0, "refused": 0}
    for loop in _loops(f):
        _FLOWS.clear()
        assert window(f, loop) is loop
        fast = (_answer(lambda: check_vectorize(f, loop)),  # noqa: B023 (called now)
                _carried(f, loop))
        with computing_whole():
            assert window(f, loop) is None
            _FLOWS.clear()
            slow = (_answer(lambda: check_vectorize(f, loop)),  # noqa: B023 (called now)
                    _carried(f, loop))
        assert fast == slow
        counts[fast[0][0]] += 1
    assert sum(counts.values()) == len(_loops(f))


def test_the_random_nests_refuse_and_accept():
    """The seeds above see both answers (the comparison is not of two empty sets)."""
    seen = set()
    for seed in range(40, 70):
        f = parse(random_nest(seed))
        for loop in _loops(f):
            seen.add(_carried(f, loop) is None)
    assert seen == {True, False}


def test_a_loop_not_in_the_function_asks_the_whole_function():
    f = parse(random_nest(3))
    other = _loops(parse(random_nest(3)))[0]
    assert window(f, other) is None
    assert window(f, _loops(f)[0]) is _loops(f)[0]


def test_a_loop_at_two_places_asks_the_whole_function():
    # The same node twice in a row: its two runs are not one stretch of program order
    # (S0's writes reach S1's reads across them), so the question is the whole one.
    f = parse(random_nest(3))
    loop = _loops(f)[0]
    twice = dataclasses.replace(f, body=n.SeqStmt((loop, loop)))
    assert window(twice, loop) is None
    model = extract(twice)
    _FLOWS.clear()
    windowed = Dependences(model, inside=loop)
    with computing_whole():
        _FLOWS.clear()
        whole = Dependences(model)
    for kind in _KINDS:
        assert windowed.tagged(kind).is_equal(whole.tagged(kind))
    assert not whole.tagged("flow").is_empty()
