"""Hypothesis over random loop nests: every pass and schedule primitive keeps the
results, and every "Proved" of ``is_no_op``, ``can_remove_conditional`` and ``prove``
agrees with brute force.

The programs (``tests/fuzz_programs.py``) have loads, stores, ifs, lets,
``T.assume`` on ``n`` and on buffer elements, int32 and float32 buffers and
integer arithmetic that wraps at 32 bits; the checks
(``tests/fuzz_support.py``) run them in the reference executor on inputs that
satisfy the assumptions.  A primitive that raises a ``PolypadError`` refused,
legally.  Derandomized, so the suite's time is stable; ``benchmarks/fuzz.py``
runs the same checks over thousands of seeded cases.
"""

from __future__ import annotations

import numpy as np
from fuzz_primitives import PRIMITIVES, check_primitives
from fuzz_programs import Draws, NestOptions, nest_program, structural_program
from fuzz_shapes import shape_program
from fuzz_support import (
    Report,
    check_conditionals,
    check_no_ops,
    check_passes,
    check_probes,
    make_case,
    passes,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import codegen
from polypad.schedule import Schedule
from polypad.script import parse
from polypad.transform import simplify

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def examples(count: int):
    return settings(max_examples=count, deadline=None, derandomize=True, database=None,
                    suppress_health_check=_HEALTH)


@st.composite
def nests(draw, probes: int = 0):
    """A case from a random loop nest with every option on (few statements: the value
    deciders' time grows fast with program size)."""
    nest = nest_program(Draws(draw), NestOptions.fuzz(max_statements=4, probes=probes))
    case = make_case(nest.text, seed=0, n_values=range(*nest.n_range))
    assume(case is not None)
    return case


@st.composite
def structural(draw):
    """A case from the structural deciders' programs (adjacent loops, a local buffer)."""
    choose = Draws(draw)
    text = structural_program(choose, same_extent=choose.boolean(), local=choose.boolean(),
                              param="n" if choose.boolean() else None)
    case = make_case(text, seed=0)
    assume(case is not None)
    return case


@examples(30)
@given(nests())
def test_every_pass_keeps_results(case):
    report = Report()
    check_passes(case, report)
    report.assert_clean(case.text)


@examples(50)
@given(nests(), st.sampled_from(sorted(PRIMITIVES)), st.data())
def test_primitives_keep_results_or_refuse(case, primitive, data):
    report = Report()
    check_primitives(case, report, Draws(data.draw), names={primitive})
    report.assert_clean(case.text)


@examples(20)
@given(structural(), st.data())
def test_structural_programs_through_passes_and_primitives(case, data):
    report = Report()
    check_passes(case, report, names={"simplify", "remove_no_op", "reduce_loop_extents"})
    check_primitives(case, report, Draws(data.draw),
                     names={data.draw(st.sampled_from(sorted(PRIMITIVES)))})
    report.assert_clean(case.text)


@examples(50)
@given(nests(), st.lists(st.integers(0, 99), min_size=1, max_size=2), st.integers(0, 99))
def test_proved_no_ops_and_removable_conditionals_agree_with_execution(case, stmts, branch):
    report = Report()
    check_no_ops(case, report, stmts)
    check_conditionals(case, report, [branch])
    report.assert_clean(case.text)


@examples(40)
@given(nests(probes=2))
def test_proved_questions_agree_with_brute_force(case):
    report = Report()
    check_probes(case, report)
    report.assert_clean(case.text)


@st.composite
def shapes(draw):
    """A case of issue 21's shapes (``tests/fuzz_shapes.py``), ``n`` drawn as it says."""
    shape = shape_program(Draws(draw), max_statements=4)
    case = make_case(shape.text, seed=0, n_values=shape.n_values, scalars=shape.n_values)
    assume(case is not None)
    return case


@examples(20)
@given(shapes(), st.lists(st.integers(0, 99), min_size=1, max_size=2), st.integers(0, 99))
def test_issue_21_shapes_through_passes_and_deciders(case, stmts, branch):
    report = Report()
    check_passes(case, report, names={"remove_no_op", "remove_branching_through_overcompute"})
    check_no_ops(case, report, stmts)
    check_conditionals(case, report, [branch])
    report.assert_clean(case.text)


def test_the_fuzz_runs_every_pass_that_exists():
    assert {"simplify", "remove_no_op", "hoist_expression", "reduce_loop_extents",
            "remove_branching_through_overcompute"} <= set(passes())


# ----------------------------------------------------------------- bugs the fuzz found


def test_pad_value_without_padding_assumes_nothing():
    f = parse('''
@T.prim_func
def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        B[i] = A[i]
''')
    sch = Schedule(f)
    sch.transform_layout(None, "A", "lambda i: [i // 4, i % 4]", pad_value=0.0)
    a, b = np.arange(8, dtype="float32").reshape(2, 4), np.zeros(8, "float32")
    # The reference executor checks the assumption the transform added: A == 0 everywhere.
    codegen.build(simplify(sch.func), target="python")(a, b)
    np.testing.assert_array_equal(b, np.arange(8))
