"""The run-time guards' fuzz (``benchmarks/fuzz.py --shapes guards``): its programs
and its check.

``tests/fuzz_guards.py`` writes functions whose accesses the bounds analysis
may leave to run time, ``tests/fuzz_guards_check.py`` runs each on every
target; these tests pin that the programs are deterministic per seed, that a
few seeds hold every shape claimed and parse, that the cuda-friendly ones are
what the cuda target builds, that each part of the check catches what it is
for (a result that differs, a guard region written, a proved access found
outside), and that the fuzz script runs one case clean.  The big runs are
the script's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from fuzz_guards import guards_program
from fuzz_guards_check import (
    GuardsStats,
    Ran,
    check_proved,
    clobbered,
    compare,
    failing_access,
    guarded_arrays,
)
from fuzz_programs import Seeded
from fuzz_support import Report

import analyses
import codegen
from polypad.ir.show import show
from polypad.script import parse

SEEDS = range(40)


def test_the_same_seed_writes_the_same_program():
    assert guards_program(Seeded(5)).text == guards_program(Seeded(5)).text
    assert guards_program(Seeded(5)).text != guards_program(Seeded(6)).text


def test_the_programs_hold_every_shape_and_parse():
    features: set[str] = set()
    for seed in SEEDS:
        program = guards_program(Seeded(seed))
        features |= program.features
        for text in (program.text, program.parallel, program.cuda):
            if text is not None:
                parse(text)
        if program.parallel is not None:
            assert "T.parallel(" in program.parallel and "# par" not in program.parallel
    assert features >= {"min", "max", "clamp", "select", "div", "mod", "pdiv", "pmod",
                        "gather", "gather_param", "param extent", "int8", "int16", "int64",
                        "view", "2-d view", "assert", "assert in loop", "assume", "data if",
                        "parallel", "inner loop"}


def test_a_cuda_friendly_program_binds_its_parallel_loops_and_asserts_at_the_top():
    program = guards_program(Seeded(2), cuda_friendly=True)
    assert 'thread="threadIdx.x"' in program.cuda
    assert "X[X" not in program.text and "T.floordiv" not in program.text
    assert all(not line.startswith("        assert") for line in program.text.splitlines())


def test_a_write_into_a_guard_region_is_found():
    args, outer = guarded_arrays({"A": np.zeros(16, "int32"), "X": np.zeros(8, "int32"),
                                  "C": np.zeros(16, "int32"),
                                  "D": np.zeros((4, 4), "int32"), "n": 0, "m": 0})
    assert clobbered(outer) == []
    outer[3][1][outer[3][2].stop] = 1  # the row after D
    args[0].base[args[0].base.size - 1] = 5  # the last element around A
    assert clobbered(outer) == ["A", "D"]


ORDERED = parse('''
@T.prim_func
def ordered(A: T.Buffer((4,), "int32"), X: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[X[i]] = A[X[i] + 1]
    A[0] = A[X[0]]
''')


def failed(access: str, element: int, line: int) -> Ran:
    """A BoundsCheckError's outcome, worded as the reference words it."""
    return Ran("BoundsCheckError", f"{access.split('[')[0]}[{element}] is outside its "
               f"shape (4,) in 'ordered' at <string>:{line} (as written: "
               f"{access.split(' ', 2)[2]})")


def test_a_result_or_an_error_that_differs_is_unsound_and_a_message_is_an_order():
    values = {"n": 1, "m": 2, "X": np.zeros(8, "int32")}
    ran = Ran(None, "", tuple(np.zeros(4, "int32") for _ in range(4)))
    other = Ran(None, "", (np.ones(4, "int32"),) + ran.buffers[1:])
    store = failed("store to A[X[i]]", 9, 5)
    report, stats = Report(), GuardsStats()
    for name, want, got in [
            ("numba", ran, other), ("numba", ran, store),
            ("numba", store, failed("load of A[X[i] + 1]", 10, 5)),  # the store's value
            ("numba", store, failed("load of X[0]", 9, 6)),  # another statement
            ("numba", failed("load of A[X[0]]", 9, 6), failed("load of X[0]", 9, 6)),
            ("cuda", store, failed("load of A[X[i] + 1]", 10, 5))]:
        compare(name, want, got, [], values, report, stats, ORDERED)
    assert [(f.kind, f.what) for f in report.findings] == [
        ("unsound", "numba: A differs"), ("unsound", "numba: outcome differs"),
        ("order", "numba: another message"), ("order", "numba: another message")]
    assert (stats.store_or_value, stats.parallel_messages) == (1, 1)


GATHER = parse('''
@T.prim_func
def gather(A: T.Buffer((4,), "int32"), X: T.Buffer((4,), "int32"), n: T.int32):
    for i in T.serial(4):
        A[i] = A[X[i]] + n
''')


def test_a_proved_access_found_outside_is_unsound(monkeypatch):
    values = {"A": np.zeros(4, "int32"), "X": np.array([0, 9, 1, 2], "int32"), "n": 0}
    reference = codegen.build(GATHER, target="python")
    found = analyses.bounds_precondition(GATHER)
    report = Report()
    monkeypatch.setattr("fuzz_guards_check.ORDER", ("A", "X", "n"))
    check_proved(GATHER, reference, values, report, "serial")
    assert report.findings == []  # A[X[i]] is undecided: its failure is no finding
    everything = type(found)(found.condition, found.allowed, found.context, found.decision,
                             found._checker, found._outside, (),
                             found.proved | {u.key for u in found.undecided})
    monkeypatch.setattr(analyses, "bounds_precondition", lambda f: everything)
    check_proved(GATHER, reference, values, report, "serial")
    assert [f.what for f in report.findings] == ["proved access outside (serial)"]
    assert report.findings[0].detail.startswith("A[X[i]] is among the proved accesses")


@pytest.mark.numba
def test_the_fuzz_script_runs_a_guards_case_clean():
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import fuzz

    outcome = fuzz.run_case(30002, 2, "guards")
    outcome.report.assert_clean(outcome.text)
    assert outcome.guards.compared > 0 and outcome.guards.runs["numba"] > 0


VIEW_GATHER = parse('''
@T.prim_func
def view_gather(A: T.Buffer((8,), "int32"), X: T.Buffer((4,), "int32"), n: T.int32):
    A_1 = T.decl_buffer((4,), "int32", data=A.data, elem_offset=2)
    for i in T.serial(4):
        A[i] = A_1[X[i]] + n
''')


def test_an_access_outside_its_view_inside_its_memory_is_caught(monkeypatch):
    # A_1[5] is A[7]: inside A, outside the view. The reference stops there, and the
    # check asks that the view's access, as written, is no proved one.
    values = {"A": np.zeros(8, "int32"), "X": np.array([0, 5, 1, 2], "int32"), "n": 0}
    reference = codegen.build(VIEW_GATHER, target="python")
    monkeypatch.setattr("fuzz_guards_check.ORDER", ("A", "X", "n"))
    failed = failing_access(reference, values)
    assert (failed[0].name, [show(i).strip() for i in failed[1]]) == ("A_1", ["X[i]"])
    found = analyses.bounds_precondition(VIEW_GATHER)
    report = Report()
    check_proved(VIEW_GATHER, reference, values, report, "serial")
    assert report.findings == []  # undecided: checked at run time
    everything = type(found)(found.condition, found.allowed, found.context, found.decision,
                             found._checker, found._outside, (),
                             found.proved | {u.key for u in found.undecided})
    monkeypatch.setattr(analyses, "bounds_precondition", lambda f: everything)
    check_proved(VIEW_GATHER, reference, values, report, "serial")
    assert report.findings[0].detail.startswith("A_1[X[i]] is among the proved accesses")
