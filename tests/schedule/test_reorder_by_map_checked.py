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
