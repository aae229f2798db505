"""Hypothesis: every pass keeps the results of random small loop nests.

Programs are built as script text: loops within [0, 4) (two levels at most),
``if``/``else`` on affine and data-dependent conditions, lets, stores and
loads at affine indices that stay in bounds (loop counters with offsets, or
an affine expression taken modulo the extent), and assumptions on the scalar
``n`` and on ``A[0]`` that the inputs then satisfy.  Each pass must give
verified IR that the reference executor runs to the same buffers as the
original on random inputs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pass_support import assert_same_results, checked

from polypad.script import parse
from polypad.transform import hoist_expression, reduce_loop_extents, remove_no_op, simplify

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
# Derandomized: the same examples on every run, so the suite's time is stable (a few
# programs make the value deciders take tens of seconds); explore more by running
# with --hypothesis-seed=<n> and a larger max_examples.
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=_HEALTH,
                    derandomize=True)
ISL_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=_HEALTH,
                        derandomize=True)


class _Program:
    """Builds one random function body, line by line."""

    def __init__(self, draw, budget: int) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.counter = 0
        self.budget = budget  # statements left to place

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def affine(self, scope: list[str]) -> str:
        d = self.draw
        terms = []
        for v in d(st.lists(st.sampled_from([*scope, "n"]), max_size=2, unique=True)):
            c = d(st.integers(-2, 3).filter(bool))
            terms.append(v if c == 1 else f"{c} * {v}")
        expr = " + ".join([*terms, str(d(st.integers(-3, 3)))])
        if d(st.integers(0, 3)) == 0:
            expr = f"({expr}) // {d(st.integers(2, 4))}"
        return expr

    def index(self, scope: list[str], size: int) -> str:
        """An index into an axis of ``size``: loop counters stay in [0, 4), so these
        forms stay in bounds; a rare wrapped affine index adds floor modulo."""
        d = self.draw
        loops = [v for v in scope if v.startswith("i")]
        forms = ["const", "wrapped"] + (["var", "var", "offset"] if loops else [])
        if size == 8 and loops:
            forms += ["double", "pair"]
        form = d(st.sampled_from(forms))
        if form == "const":
            return str(d(st.integers(0, size - 1)))
        if form == "wrapped":
            return f"({self.affine(scope)}) % {size}"
        v = d(st.sampled_from(loops))
        if form == "var":
            return v
        if form == "offset":
            return f"{v} + {d(st.integers(0, size - 4))}" if size > 4 else f"3 - {v}"
        if form == "double":
            return f"2 * {v}"
        return f"{v} + {d(st.sampled_from(loops))}"

    def load(self, scope: list[str]) -> str:
        if self.draw(st.booleans()):
            return f"A[{self.index(scope, 8)}]"
        return f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"

    def cond(self, scope: list[str], depth: int = 0) -> str:
        d = self.draw
        kind = d(st.sampled_from(["affine", "affine", "data", "and", "or", "not"]
                                 if depth < 2 else ["affine", "data"]))
        if kind == "affine":
            op = d(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]))
            return f"{self.affine(scope)} {op} {d(st.integers(-2, 4))}"
        if kind == "data":
            return f"{self.load(scope)} > {d(st.integers(-3, 3))}"
        if kind == "not":
            return f"not ({self.cond(scope, depth + 1)})"
        return f"({self.cond(scope, depth + 1)}) {kind} ({self.cond(scope, depth + 1)})"

    def value(self, scope: list[str]) -> str:
        d = self.draw
        kind = d(st.sampled_from(["const", "load", "sum", "affine"]))
        if kind == "const":
            return str(d(st.integers(-3, 3)))
        if kind == "load":
            return self.load(scope)
        if kind == "sum":
            return f"{self.load(scope)} + {self.load(scope)}"
        return self.affine(scope)

    def stmts(self, scope: list[str], indent: int, loops: int) -> None:
        for k in range(self.draw(st.integers(1, 2))):
            if k and self.budget <= 0:
                break
            self.stmt(scope, indent, loops)

    def stmt(self, scope: list[str], indent: int, loops: int) -> None:
        d, pad = self.draw, "    " * indent
        kinds = ["store", "if"] + (["for", "for"] if loops < 2 else []) + ["let"]
        self.budget -= 1
        kind = d(st.sampled_from(kinds if indent < 4 and self.budget > 0 else ["store"]))
        if kind == "store":
            if d(st.booleans()):
                self.lines.append(f"{pad}A[{self.index(scope, 8)}] = {self.value(scope)}")
            else:
                target = f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"
                self.lines.append(f"{pad}{target} = {self.value(scope)}")
        elif kind == "if":
            self.lines.append(f"{pad}if {self.cond(scope)}:")
            self.stmts(scope, indent + 1, loops)
            if d(st.booleans()):
                self.lines.append(f"{pad}else:")
                self.stmts(scope, indent + 1, loops)
        elif kind == "for":
            var = self.fresh("i")
            start = d(st.integers(0, 2))
            stop = d(st.integers(start + 1, 4))
            self.lines.append(f"{pad}for {var} in T.serial({start}, {stop}):")
            self.stmts([*scope, var], indent + 1, loops + 1)
        else:
            var = self.fresh("x")
            self.lines.append(f"{pad}{var} = {self.affine(scope)}")
            self.stmts([*scope, var], indent, loops)


@st.composite
def programs(draw, max_statements: int = 8):
    """``(function, n_range, a0)``: a random function, the values ``n`` may take, and
    the value ``A[0]`` must hold (``None``: anything)."""
    program = _Program(draw, draw(st.integers(2, max_statements)))
    lines = ['@T.prim_func',
             'def func(A: T.Buffer((8,), "int32"), B: T.Buffer((4, 4), "int32"), n: T.int32):']
    n_range = (-3, 6)
    if draw(st.booleans()):
        lo = draw(st.integers(-2, 2))
        n_range = (lo, lo + draw(st.integers(1, 4)))
        lines.append(f"    T.assume({n_range[0]} <= n and n < {n_range[1]})")
    a0 = None
    if draw(st.booleans()):
        a0 = draw(st.integers(-3, 3))
        lines.append(f"    T.assume(A[0] == {a0})")
    program.stmts([], 1, 0)
    text = "\n".join(lines + program.lines) + "\n"
    return parse(text), n_range, a0


def inputs(seed: int, n_range: tuple[int, int], a0: int | None) -> list:
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, 8).astype("int32")
    b = rng.integers(-4, 5, (4, 4)).astype("int32")
    if a0 is not None:
        a[0] = a0
    return [a, b, int(rng.integers(*n_range))]


def check(pass_, program) -> None:
    f, n_range, a0 = program
    got = checked(pass_(f))
    for seed in range(3):
        assert_same_results(f, got, inputs(seed, n_range, a0))


# The value deciders behind simplify and remove_no_op (Z3 over instantiated facts) grow
# quickly with program size; ISL-only passes get the larger programs.
SMALL = programs(max_statements=4)


@SETTINGS
@given(SMALL)
def test_simplify_keeps_results(program):
    check(simplify, program)


@SETTINGS
@given(SMALL)
def test_remove_no_op_keeps_results(program):
    check(remove_no_op, program)


@ISL_SETTINGS
@given(programs())
def test_hoist_expression_keeps_results(program):
    check(hoist_expression, program)


@ISL_SETTINGS
@given(programs())
def test_reduce_loop_extents_keeps_results(program):
    check(reduce_loop_extents, program)


@SETTINGS
@given(SMALL)
def test_pipeline_keeps_results(program):
    check(lambda f: simplify(reduce_loop_extents(hoist_expression(remove_no_op(f)))), program)
