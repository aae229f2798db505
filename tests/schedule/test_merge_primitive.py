"""sch.merge_adjacent_loops: the RFC's merged loops, equal results, and refusals."""

import functools
from pathlib import Path

import numpy as np
import pytest

import codegen
from analyses import Counterexample, Element, Instance, Unknown
from polypad.errors import IllegalTransformError, NotFoundError
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name):
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


@functools.cache
def merged(kind):
    sch = Schedule(load(f"merge_loops_{kind}_before"))
    sch.merge_adjacent_loops("i", "i")
    return sch


@functools.cache
def numba_kernel(kind, which):
    f = load(f"merge_loops_{kind}_before") if which == "before" else merged(kind).func
    return codegen.build(f)


@pytest.mark.parametrize("kind", ["elementwise", "shifted"])
def test_rfc_merge_matches_the_after_function(kind):
    sch = merged(kind)
    assert_structural_equal(sch.func, load(f"merge_loops_{kind}_after"))
    assert str(sch.trace) == "sch.merge_adjacent_loops(loop_a='i', loop_b='i')"
    replayed = sch.trace.apply_to(load(f"merge_loops_{kind}_before"))
    assert_structural_equal(replayed.func, sch.func)


@pytest.mark.parametrize("kind", ["elementwise", "shifted"])
def test_rfc_merge_keeps_results_in_the_reference_executor(kind):
    before = load(f"merge_loops_{kind}_before")
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 16).astype("float32")
    want, got = a.copy(), a.copy()
    codegen.build(before, target="python")(want)
    codegen.build(merged(kind).func, target="python")(got)
    np.testing.assert_array_equal(got, want)
    assert want[5] == (5.0 if kind == "shifted" else 1.0)


@pytest.mark.numba
@pytest.mark.parametrize("kind", ["elementwise", "shifted"])
def test_rfc_merge_keeps_results_in_numba(kind):
    a = np.random.default_rng(2).uniform(-1, 1, 16).astype("float32")
    want, got = a.copy(), a.copy()
    numba_kernel(kind, "before")(want)
    numba_kernel(kind, "after")(got)
    np.testing.assert_array_equal(got, want)


def test_stencil_merge_is_refused_with_the_counterexample():
    sch = Schedule(load("merge_loops_stencil_before"))
    with pytest.raises(IllegalTransformError, match="cannot merge the loops over i and i") as err:
        sch.merge_adjacent_loops("i", "i")
    cex = err.value.evidence
    assert isinstance(cex, Counterexample)
    assert cex.instances == (Instance("S0", {"i": 2}), Instance("S1", {"i": 1}))
    assert cex.element == Element("A", (2,))
    assert len(sch.trace) == 0
    assert_structural_equal(sch.func, load("merge_loops_stencil_before"))


SHIFTED_MIN = """
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(8):
        A[i] = T.Cast("float32", i) * 2.0
    for j in range(2, 10):
        B[j] = A[j - 2] + 1.0
    A[9] = 0.0
"""

SHIFTED_MIN_AFTER = """
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(8):
        A[i] = T.Cast("float32", i) * 2.0
        B[i + 2] = A[i + 2 - 2] + 1.0
    A[9] = 0.0
"""


def test_merge_with_different_minimums_rebases_the_second_variable():
    f = parse(SHIFTED_MIN)
    first, second = f.body.stmts[0], f.body.stmts[1]
    sch = Schedule(f)
    sch.merge_adjacent_loops(first, second)
    assert_structural_equal(sch.func, parse(SHIFTED_MIN_AFTER))
    assert str(sch.trace) == "sch.merge_adjacent_loops(loop_a='i', loop_b='j')"
    b = np.arange(10, dtype="float32")
    want = [np.zeros(10, "float32"), b.copy()]
    got = [np.zeros(10, "float32"), b.copy()]
    codegen.build(f, target="python")(*want)
    codegen.build(sch.func, target="python")(*got)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)


def test_may_dependence_refusal_carries_the_unknown():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(7):
        if B[i] > 0.0:
            A[i] = 1.0
    for j in T.serial(7):
        B[j] = A[j + 1]
""")
    with pytest.raises(IllegalTransformError) as err:
        Schedule(f).merge_adjacent_loops("i", "j")
    assert isinstance(err.value.evidence, Unknown)


def test_loops_that_are_not_adjacent_are_refused():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        A[i] = 0.0
    A[0] = 2.0
    for j in T.serial(8):
        A[j] = 1.0
""")
    with pytest.raises(IllegalTransformError, match="not adjacent"):
        Schedule(f).merge_adjacent_loops("i", "j")
    with pytest.raises(NotFoundError, match="no loop over 'k'"):
        Schedule(f).merge_adjacent_loops("i", "k")


def test_the_handles_get_loops_gives_name_the_loops_to_merge():
    """Two loops over ``i``: ``get_loops`` hands out 'i#0' and 'i#1', which the merge
    takes (it looked for a loop variable named 'i#0')."""
    before = load("merge_loops_elementwise_before")
    sch = Schedule(before)
    first, second = sch.get_loops()
    assert (first, second) == ("i#0", "i#1")
    sch.merge_adjacent_loops(first, second)
    assert_structural_equal(sch.func, merged("elementwise").func)
    by_name = Schedule(before)
    by_name.merge_adjacent_loops("i#0", "i#1")
    assert_structural_equal(by_name.func, merged("elementwise").func)
    with pytest.raises(NotFoundError, match="no loop over 'i#2'"):
        Schedule(before).merge_adjacent_loops("i#0", "i#2")
