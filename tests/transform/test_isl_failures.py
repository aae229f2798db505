"""Where ISL fails, every public entry point answers from polypad's own errors.

ISL sometimes fails its own consistency check (its coalescing, on some unions
of domains with integer divisions: fuzzer seed 20001, case 26) and raises
``islpy.Error``.  No program here makes today's ISL fail, and a test that
depended on one would lose its point once ISL is fixed, so each test makes one
ISL operation on polypad's path raise ``islpy.Error`` as ISL does (ISL's
decisions are not replaced: every other call is ISL's own).  Then an analysis
that returns sets raises :class:`IslFailure` naming itself, a decider answers
``Unknown`` naming ISL's failure, a pass returns its input unchanged (also when
a decider it asks is the one that fails), and ``codegen.build`` either builds
with every access checked (the bounds analysis failed: as when it runs out of
time) or raises :class:`IslFailure` naming the step.  Afterwards, with ISL
whole again, the same questions get their real answers: nothing computed
before the failure is reused (:mod:`polypad.isl_failure`).
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from pass_support import assert_same_results, random_args

import analyses
import codegen
from analyses import Proved, Unknown
from polypad import budget
from polypad.errors import BoundsCheckError, IslFailure, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse
from polypad.transform import remove_no_op, simplify

INJECTED = "isl_set_coalesce: original tableau does not correspond to original basic map"

SHIFT = """
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        if i < 8:
            B[i] = A[i] + 1
"""

SHIFTED = """
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        B[i] = A[i] + 1
"""

# B[i] = B[i] is a no-op remove_no_op deletes once is_no_op proves it.
DEAD = """
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        B[i] = B[i]
        A[i] = A[i] + 1
"""

GATHER = """
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"), n: T.int32):
    for i in T.serial(n):
        B[i] = A[i] + 1
"""


@pytest.fixture
def failing_coalesce(monkeypatch):
    """ISL's ``Set.coalesce`` failing, as ISL's does on the fuzzer's program."""
    calls = []

    def fail(self, *args):
        calls.append(self)
        raise isl.Error(INJECTED)

    monkeypatch.setattr(isl.Set, "coalesce", fail)
    return calls


def test_dependences_raise_an_isl_failure_naming_the_analysis(failing_coalesce):
    f = parse(SHIFTED)
    with pytest.raises(IslFailure) as err:
        analyses.dependences(f)
    assert failing_coalesce  # the failure was met, not avoided
    assert err.value.operation == "dependences"
    assert err.value.reason == INJECTED
    assert str(err.value) == f"dependences failed: ISL failed its own check ({INJECTED})"
    assert isinstance(err.value, PolypadError)


def test_domain_touched_raises_an_isl_failure_and_answers_once_isl_is_whole(
        failing_coalesce, monkeypatch):
    f = parse(SHIFTED)
    with pytest.raises(IslFailure, match=r"^domain_touched failed: ISL failed its own check"):
        analyses.domain_touched(f, "B")
    monkeypatch.undo()  # ISL whole again: the same function is answered afresh
    touched = analyses.domain_touched(f, "B")
    assert touched.exact
    assert touched.set.is_equal(isl.Set("{ B[e] : 0 <= e <= 7 }")), touched.set


def test_a_decider_answers_unknown_naming_the_failure(failing_coalesce):
    decided = analyses.check_bounds(parse(SHIFTED))
    assert isinstance(decided, Unknown)
    assert decided.reason == f"check_bounds could not decide: ISL failed ({INJECTED})"
    assert not decided.timed_out


def test_a_pass_returns_its_input_unchanged(failing_coalesce, monkeypatch):
    f = parse(SHIFT)
    assert simplify(f) is f
    assert failing_coalesce
    monkeypatch.undo()  # whole again, the pass does rewrite this function
    got = simplify(f)
    assert_structural_equal(got, parse(SHIFTED))
    assert_same_results(f, got, random_args(f, seed=1))


def test_a_pass_whose_decider_fails_deletes_nothing(failing_coalesce, monkeypatch):
    # is_no_op fails inside remove_no_op: the pass, the outermost call, answers (its
    # input unchanged) and the decider does not answer an Unknown the pass goes on with.
    f = parse(DEAD)
    assert remove_no_op(f) is f
    assert failing_coalesce
    monkeypatch.undo()
    got = remove_no_op(f)
    assert_structural_equal(got, parse("""
@T.prim_func
def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        A[i] = A[i] + 1
"""))
    assert_same_results(f, got, random_args(f, seed=2))


def test_a_callers_own_deadline_lets_no_isl_error_out(failing_coalesce):
    with budget.within(30):
        with pytest.raises(IslFailure, match="^dependences failed"):
            analyses.dependences(parse(SHIFTED))


def test_build_checks_every_access_where_the_bounds_analysis_failed(failing_coalesce):
    f = parse(GATHER)
    kernel = codegen.build(f, "python")
    assert isinstance(kernel.bounds, Unknown)
    assert kernel.bounds.reason == (
        f"bounds_precondition could not decide: ISL failed ({INJECTED})")
    a, b = np.arange(8, dtype="int32"), np.zeros(8, dtype="int32")
    kernel(a, b, 8)
    np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(BoundsCheckError):  # n = 9 leaves both buffers: checked
        kernel(a, b, 9)


def test_build_raises_an_isl_failure_naming_the_step(monkeypatch):
    # The cuda target's emission asks ISL for each loop bound's value.
    f = parse(SHIFTED)

    def fail(self, *args):
        raise isl.Error("isl_pw_aff_val_on_domain: injected")

    monkeypatch.setattr(isl.PwAff, "val_on_domain", fail)
    with pytest.raises(IslFailure) as err:
        codegen.build(f, "cuda")
    assert err.value.operation == "codegen.build of 'func' (emitting the kernel)"
    assert str(err.value) == ("codegen.build of 'func' (emitting the kernel) failed: ISL "
                              "failed its own check (isl_pw_aff_val_on_domain: injected)")
    monkeypatch.undo()
    assert isinstance(codegen.build(f, "cuda").bounds, Proved)
