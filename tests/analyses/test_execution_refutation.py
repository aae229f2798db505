"""Refutation by running: when it answers, when it stays silent, and that it agrees
with the prover wherever the prover proves a removal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import analyses
import polypad as pp
from analyses.conditional import Removable
from analyses.execution_refutation import _runnable, refute_by_execution
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk

EXAMPLES = Path(__file__).parents[1] / "examples" / "rfc0077"


def _ifs(f):
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def _without_guard(f):
    (guard,) = _ifs(f)
    return replace(f, guard, guard.then_case)


SUM = '''
@T.prim_func
def f(A: T.Buffer(({m},), "float32"), D: T.Buffer((1,), "float32")):
    for i in T.serial({m}):
        if i < {n}:
            D[0] = D[0] + {value}
'''


@pytest.mark.parametrize(("n_", "m"), [(3, 4), (5, 8), (13, 16)])
def test_several_overcomputed_additions_are_found_together(n_, m):
    f = pp.parse(SUM.format(n=n_, m=m, value="A[i]"))
    cex = refute_by_execution(f, _without_guard(f), "dropping the guard")
    assert cex is not None and cex.element == analyses.Element("D", (0,))
    a = np.array(cex.values["input A"], dtype="float32")
    assert cex.values["D[0] after"] - cex.values["D[0] before"] == a[n_:].sum()
    assert a[n_:].sum() != 0
    assert cex.values["D[0] before"] == cex.values["input D"][0] + a[:n_].sum()


def test_an_equal_result_is_not_a_counterexample():
    # Adding 0.0 where the guard is false changes nothing: no difference, no answer.
    f = pp.parse(SUM.format(n=3, m=8, value="T.float32(0)"))
    assert refute_by_execution(f, _without_guard(f), "dropping the guard") is None


@pytest.mark.parametrize("value", [
    "A[i] / 3.0",          # a division rounds: the run is not exact
    "T.exp(A[i])",         # so does a math function
    "T.undef()",           # an undefined value may differ legitimately
])
def test_inexact_or_undefined_programs_are_not_run(value):
    f = pp.parse(SUM.format(n=3, m=8, value=value))
    assert refute_by_execution(f, _without_guard(f), "dropping the guard") is None


def test_symbolic_and_large_shapes_are_not_run():
    symbolic = pp.parse('''
@T.prim_func
def f(m: T.int32, A: T.Buffer((m,), "float32"), D: T.Buffer((1,), "float32")):
    for i in T.serial(m):
        if i < 3:
            D[0] = D[0] + A[i]
''')
    assert refute_by_execution(symbolic, _without_guard(symbolic), "x") is None
    large = pp.parse(SUM.format(n=3, m=5000, value="A[i]"))
    assert refute_by_execution(large, _without_guard(large), "x") is None


def test_a_result_read_from_unwritten_memory_is_not_one_value():
    # The function returns what an allocation held before any write: any value.  A
    # rewrite that stores 5.0 there first picks one of them, and is not refuted.
    before = pp.parse('''
@T.prim_func
def f(B: T.Buffer((1,), "float32")):
    C = T.alloc_buffer((1,), "float32")
    B[0] = C[0]
''')
    after = pp.parse('''
@T.prim_func
def f(B: T.Buffer((1,), "float32")):
    C = T.alloc_buffer((1,), "float32")
    C[0] = 5.0
    B[0] = C[0]
''')
    assert refute_by_execution(before, after, "x") is None
    # The other way round the rewrite reads what the function never did: refuted,
    # whatever the allocation happens to start as.
    cex = refute_by_execution(after, before, "x")
    assert cex is not None and cex.element == analyses.Element("B", (0,))
    assert cex.values["B[0] before"] == 5.0


def test_inputs_honour_the_assumptions():
    # A's padding is assumed 0: the overcompute adds zeros on every valid input.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((2, 4), "float32"), D: T.Buffer((1,), "float32")):
    for io, ii in T.grid(2, 4):
        T.assume(4 * io + ii < 6 or A[io, ii] == 0.0)
    for io, ii in T.grid(2, 4):
        if 4 * io + ii < 6:
            D[0] = D[0] + A[io, ii]
''')
    assert refute_by_execution(f, _without_guard(f), "x") is None


def _example_conditionals():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            for stmt in _ifs(f):
                yield f, stmt


def test_a_proved_removal_is_never_refuted_by_a_run():
    # Two deciders, one answer: where the rules prove a conditional removable, running
    # the rewrite on exact inputs finds no element that ends differently.
    checked = run = 0
    for f, stmt in _example_conditionals():
        try:
            decided = analyses.can_remove_conditional(f, stmt)
        except pp.PolypadError:
            continue  # refused before deciding (a non-affine index, say)
        if isinstance(decided, Removable):
            kept = stmt.then_case if decided.keep == "then" else stmt.else_case
            assert refute_by_execution(f, replace(f, stmt, kept), "x") is None, f.name
            checked += 1
            run += _runnable(f)
    assert checked >= 20 and run >= 15  # most are exact enough to be run
