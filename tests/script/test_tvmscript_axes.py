"""Block axis domains: a binding must stay in its domain on every instance of its block.

``vi = T.axis.spatial(dom, value)`` is checked once the function is read
(polypad/model/block_axes.py): the values the binding takes, for the loop
counters around the block where its ``T.where`` holds, must lie in ``dom``.
The check is exact where the model is (affine bindings, checked here
against enumeration) and refuses nothing it cannot decide.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both

from polypad.ir import nodes as n
from polypad.ir.visitor import walk


def _kernel(loops: str, axis: str, extra: str = "", size: int = 256) -> str:
    """A block under ``for ... in T.grid(...)`` whose axis line is line 6, column 18."""
    return f"""
        @T.prim_func
        def f(A: T.Buffer(({size},), "float32")):
            for {loops}:
                with T.block("B"):
                    vi = {axis}
                    {extra or "T.evaluate(0)"}
                    A[vi] = A[vi] + 1.0
        """


@pytest.mark.parametrize("loops, axis", [
    ("io, ii in T.grid(4, 32)", "T.axis.spatial(128, io * 32 + ii)"),  # split
    ("i, j in T.grid(8, 16)", "T.axis.S(128, i * 16 + j)"),  # fused
    ("i, j in T.grid(8, 16)", "T.axis.reduce(128, j * 8 + i)"),
    ("i in T.serial(16)", "T.axis.spatial((4, 20), i + 4)"),
    ("i in T.serial(16)", "T.axis.spatial((-4, 12), i - 4)"),  # a negative start
    ("i in T.serial(2, 10)", "T.axis.scan(10, i)"),
    ("i in T.serial(16)", "T.axis.opaque(64, i * 4 + 3)"),
    ("i in T.serial(16)", "T.axis.R(16, 15 - i)"),
    ("i in T.serial(16)", "T.axis.S(8, i // 2)"),  # quasi-affine
    ("i in T.serial(16)", "T.axis.S(4, i % 4)"),
])
def test_bindings_inside_their_domain_are_accepted(loops, axis):
    f = roundtrip(_kernel(loops, axis))
    assert [s.var.name for s in walk(f.body) if isinstance(s, n.LetStmt)] == ["vi"]


@pytest.mark.parametrize("loops, axis, message", [
    ("i in T.serial(9)", "T.axis.spatial(16, i * 2)",
     "T.axis.spatial(16, i * 2) binds vi to 16 at i = 8, outside its domain [0, 16)"),
    ("io, ii in T.grid(4, 33)", "T.axis.spatial(128, io * 32 + ii)",
     "T.axis.spatial(128, io * 32 + ii) binds vi to 128 at io = 3, ii = 32, "
     "outside its domain [0, 128)"),
    ("i in T.serial(16)", "T.axis.reduce((4, 20), i + 5)",
     "T.axis.reduce((4, 20), i + 5) binds vi to 20 at i = 15, outside its domain [4, 20)"),
    ("i in T.serial(16)", "T.axis.spatial((4, 20), i + 3)",
     "T.axis.spatial((4, 20), i + 3) binds vi to 3 at i = 0, outside its domain [4, 20)"),
    ("i in T.serial(16)", "T.axis.S((-4, 12), i - 5)",
     "T.axis.S((-4, 12), i - 5) binds vi to -5 at i = 0, outside its domain [-4, 12)"),
    ("i in T.serial(16)", "T.axis.opaque(16, 15 - i + 1)",
     "T.axis.opaque(16, 15 - i + 1) binds vi to 16 at i = 0, outside its domain [0, 16)"),
    ("i in T.serial(2, 10)", "T.axis.scan(8, i)",
     "T.axis.scan(8, i) binds vi to 8 at i = 8, outside its domain [0, 8)"),
])
def test_a_binding_that_leaves_its_domain_is_an_error(loops, axis, message):
    err = parse_error(_kernel(loops, axis))
    assert (err.lineno, err.col, err.message) == (6, 18, message)


def test_a_binding_without_loops_is_checked_too():
    err = parse_error("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            with T.block("B"):
                vi = T.axis.spatial(4, 4)
                A[vi] = 0.0
        """)
    assert (err.lineno, err.col, err.message) == (
        5, 14, "T.axis.spatial(4, 4) binds vi to 4, outside its domain [0, 4)")


def test_the_second_axis_is_named_when_it_is_the_one_out_of_domain():
    err = parse_error("""
        @T.prim_func
        def f(A: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(7, j)
                    A[vi, vj] = 0.0
        """)
    assert (err.lineno, err.col, err.message) == (
        7, 18, "T.axis.spatial(7, j) binds vj to 7 at i = 0, j = 7, outside its domain [0, 7)")


# ------------------------------------------------------------ T.where

PADDED = """
@T.prim_func
def f(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for io, ii in T.grid(4, 32):
        with T.block("B"):
            vi = T.axis.spatial(100, io * 32 + ii)
            T.where(PREDICATE)
            B[vi] = A[vi] * 2.0
"""


@pytest.mark.numba
@pytest.mark.parametrize("predicate", ["io * 32 + ii < 100", "vi < 100"])
def test_a_binding_out_of_domain_only_where_the_predicate_fails_is_accepted(predicate):
    # io * 32 + ii reaches 127, but only the instances below 100 run.
    f = roundtrip(PADDED.replace("PREDICATE", predicate))
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_array_equal(out[1], args[0] * 2.0)


def test_a_predicate_too_weak_leaves_the_binding_out_of_domain():
    err = parse_error(PADDED.replace("PREDICATE", "io * 32 + ii < 101"))
    assert (err.lineno, err.col, err.message) == (
        6, 18, "T.axis.spatial(100, io * 32 + ii) binds vi to 100 at io = 3, ii = 4, "
               "outside its domain [0, 100)")


def test_a_predicate_before_the_axis_limits_it_too():
    roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((100,), "float32")):
            for io, ii in T.grid(4, 32):
                with T.block("B"):
                    T.where(io * 32 + ii < 100)
                    vi = T.axis.spatial(100, io * 32 + ii)
                    A[vi] = 0.0
        """)


def test_a_predicate_on_a_later_axis_limits_the_earlier_one():
    roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((10, 10), "float32")):
            for i, j in T.grid(12, 10):
                with T.block("B"):
                    vi = T.axis.spatial(10, i)
                    vj = T.axis.spatial(10, j)
                    T.where(vi < 10 and vj >= 0)
                    A[vi, vj] = 0.0
        """)


def test_an_enclosing_if_limits_the_instances():
    roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((10,), "float32")):
            for i in T.serial(12):
                if i < 10:
                    with T.block("B"):
                        vi = T.axis.spatial(10, i)
                        A[vi] = 0.0
        """)


# ------------------------------------------------------------ what is not decided


@pytest.mark.parametrize("loops, axis, extra", [
    ("i in T.serial(16)", "T.axis.spatial(4, i * i)", ""),  # not quasi-affine
    ("i in T.serial(16)", "T.axis.spatial(4, T.Cast('int32', A[i]))", ""),  # data-dependent
    ("i in T.serial(16)", "T.axis.spatial(4, i)", "T.where(A[i] > 0.0)"),  # dropped guard
    ("i in T.serial(16)", "T.axis.spatial(4, i + 2147483647)", ""),  # wraps around int32
])
def test_an_undecided_binding_is_accepted(loops, axis, extra):
    roundtrip(_kernel(loops, axis, extra))


def test_remap_has_no_domain_to_check():
    roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = 0.0
        """)


def test_symbolic_domains():
    text = """
        @T.prim_func
        def f(n: T.int32, A: T.Buffer((n,), "float32")):
            for i in T.serial(n):
                with T.block("B"):
                    vi = T.axis.spatial(DOM, i)
                    A[vi] = 0.0
        """
    roundtrip(text.replace("DOM", "n"))
    err = parse_error(text.replace("DOM", "n - 1"))
    assert err.message == ("T.axis.spatial(n - 1, i) binds vi to 0 at i = 0, n = 1, "
                           "outside its domain [0, n - 1)")


# ------------------------------------------------------------ against enumeration


def _cases(count: int):
    rng = random.Random(13)
    for _ in range(count):
        a, b, c = rng.randint(-3, 3), rng.randint(-3, 3), rng.randint(-6, 6)
        lo = rng.randint(-8, 4)
        hi = lo + rng.randint(0, 20)
        yield a, b, c, lo, hi, rng.randint(1, 5), rng.randint(1, 5)


@pytest.mark.parametrize("a, b, c, lo, hi, ni, nj", list(_cases(40)))
def test_the_verdict_and_the_instance_agree_with_enumeration(a, b, c, lo, hi, ni, nj):
    """``vi = a*i + b*j + c`` over ``i < ni, j < nj``, where ``i + j != 3`` (T.where)."""
    text = f"""
        @T.prim_func
        def f(A: T.Buffer((64,), "float32")):
            for i, j in T.grid({ni}, {nj}):
                with T.block("B"):
                    vi = T.axis.spatial(({lo}, {hi}), i * {a} + j * {b} + {c})
                    T.where(i + j != 3)
                    A[vi + 32] = 0.0
        """
    bad = [(i, j, a * i + b * j + c)
           for i, j in itertools.product(range(ni), range(nj))
           if i + j != 3 and not lo <= a * i + b * j + c < hi]
    if not bad:
        roundtrip(text)
        return
    i, j, value = min(bad)
    err = parse_error(text)
    assert err.message.endswith(f"binds vi to {value} at i = {i}, j = {j}, "
                                f"outside its domain [{lo}, {hi})")
