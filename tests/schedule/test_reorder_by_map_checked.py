"""The loops ``reorder_by_map`` builds run exactly the statements' instances, each once.

``reschedule_ast.regenerate`` converts ISL's AST through
``checked_ast.checked_loops`` (as ``compute_at`` and the caches do): every
call records the instances it runs, ISL's atomic form is asked for where
the default form loses some, and loops that lose or repeat an instance are
refused.  ISL's default form loses an instance of the strided set below
(``test_at_strided_instances``); the reorder's marker statements make ISL
build it right, so the first test pins that the set comes out whole, and the
second one the refusal of an AST that runs an instance twice.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

import codegen
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.schedule import Schedule
from polypad.schedule.checked_ast import RunsChecked, checked_loops
from polypad.script import parse

STRIDED = '''
@T.prim_func
def f(A: T.Buffer((8, 3, 3), "int32")):
    for i in T.serial(8):
        for a in T.serial(3):
            for j in T.serial(3):
                if (i + 4 * a + j - 2) % 8 == 0 and 2 - i <= j and j <= 6 - i:
                    A[i, a, j] = A[i, a, j] + 1
'''


@pytest.mark.parametrize("band", ["{ S0[i, a, j] -> [i, a, j] }", "{ S0[i, a, j] -> [i] }",
                                  "{ S0[i, a, j] -> [i + 4a + j] }"])
def test_the_strided_set_isl_loses_runs_whole_after_reorder_by_map(band):
    original = parse(STRIDED)
    sch = Schedule(original)
    sch.reorder_by_map(None, band)
    want = np.zeros((8, 3, 3), "int32")
    codegen.build(original, target="python")(want)
    assert want.sum() == 9  # the nine instances, (i=0, a=0, j=2) and (i=0, a=2, j=2) among them
    for target in ("python", "numba"):
        got = np.zeros((8, 3, 3), "int32")
        codegen.build(sch.func, target=target)(got)
        np.testing.assert_array_equal(got, want, err_msg=target)


def test_loops_that_run_an_instance_twice_are_refused():
    # A schedule that gives each instance two times: ISL builds two loops, each
    # running all of S.  The instances run are the ones asked for, but twice.
    schedule = isl.UnionMap("{ S[i] -> [i] : 0 <= i < 4; S[i] -> [i + 10] : 0 <= i < 4 }")
    context = isl.Set("{ : }")
    build = isl.AstBuild.from_context(context)
    assert build.node_from_schedule_map(schedule).to_C_str().count("S(") == 2

    def converter() -> RunsChecked:
        return RunsChecked({}, lambda name, args: n.Evaluate(args[0]), names=Names(),
                           context=context)

    with pytest.raises(PolypadError) as err:
        checked_loops(build, schedule, 1, converter, {"S": isl.Set("{ S[i] : 0 <= i < 4 }")},
                      "the test's loops")
    assert type(err.value) is PolypadError
    assert str(err.value) == ("the test's loops: ISL built loops that do not run exactly the "
                              "instances asked for, each once (S)")


def test_loops_that_run_each_instance_once_are_kept():
    schedule = isl.UnionMap("{ S[i] -> [i] : 0 <= i < 4; T[i] -> [i + 10] : 0 <= i < 4 }")
    context = isl.Set("{ : }")
    build = isl.AstBuild.from_context(context)
    out = checked_loops(
        build, schedule, 1,
        lambda: RunsChecked({}, lambda name, args: n.Evaluate(args[0]), names=Names(),
                            context=context),
        {"S": isl.Set("{ S[i] : 0 <= i < 4 }"), "T": isl.Set("{ T[i] : 0 <= i < 4 }")},
        "the test's loops")
    assert isinstance(out, n.SeqStmt) and len(out.stmts) == 2


# Fuzz seed 9002, case 96: the loop over B's first index runs the self-copies' i3 in
# [0, n) and S3's i2 = 1, whose polyhedral hull over the parameter n has no upper
# bound (of 0 <= x < n and x = 1 it is x >= 0); ISL's AST build then failed with
# "unbounded optimum".  The marker is now the union where the hull loses a bound.
UNBOUNDED_HULL = '''
@T.prim_func
def func(B: T.Buffer((4, 4), "int32"), n: T.int32):
    T.assume(1 <= n and n < 4)
    for i2 in T.serial(1, 2):
        for i3 in T.serial(n):
            B[i3, 3 - i3] = B[i3, 3 - i3]
        B[i2, ((-2 * i2 + 2) // 4) % 4] = B[3, i2]
'''


def test_a_marker_whose_hull_loses_a_bound_is_built_from_the_union():
    func = parse(UNBOUNDED_HULL)
    sch = Schedule(func)
    sch.sequential_buffer_access(None, "B")
    assert sch.func is not func
    for n_value in (1, 2, 3):
        got, want = (np.arange(16, dtype="int32").reshape(4, 4) for _ in range(2))
        codegen.build(sch.func, target="python")(got, n_value)
        codegen.build(func, target="python")(want, n_value)
        np.testing.assert_array_equal(got, want)
        got = np.arange(16, dtype="int32").reshape(4, 4)
        codegen.build(sch.func)(got, n_value)
        np.testing.assert_array_equal(got, want)


def test_an_ast_isl_cannot_build_is_a_refusal_naming_the_primitive():
    # Two statements unbounded in opposite directions: ISL finds no loop bound.
    build = isl.AstBuild.from_context(isl.Set("[n] -> { : }"))
    unbounded = isl.UnionMap("[n] -> { S[i] -> [i] : i >= 0; T[j] -> [j] : j <= n }")
    with pytest.raises(PolypadError, match="^test: ISL could not build the loops: .*"
                                           "unbounded optimum"):
        checked_loops(build, unbounded, 1,
                      lambda: RunsChecked({}, names=Names(), context=isl.Set("{ : }")), {},
                      "test")
