"""bounds_precondition: the exact parameter values for which every access stays inside
its buffer, against hand-worked answers and against running every n in -40..40 in the
reference executor, which checks every access."""

from __future__ import annotations

import numpy as np
import pytest
from bounds_support import parameter_nests
from hypothesis import given, settings

import analyses
import codegen
import polypad as pp
from analyses import Element, Proved, Refuted, Unknown
from codegen import interpreter, lower
from polypad.errors import AssumptionError, BoundsCheckError, OutOfBoundsError, PolypadError
from polypad.ir import nodes as n


def precondition(text: str):
    found = analyses.bounds_precondition(pp.parse(text))
    assert isinstance(found, analyses.BoundsPrecondition), found
    return found


def test_issue_example_is_inside_exactly_for_n_below_29():
    found = precondition('''
@T.prim_func
def f(A: T.Buffer((7,), "float32"), n: T.int32):
    for i in T.serial(n):
        A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]
''')
    assert pp.script(found.condition) == "n < 29"
    assert isinstance(found.decision, Proved) and "where n < 29" in found.decision.detail
    assert [v.name for v in found.variables] == ["n"]
    n_var = found.variables[0]
    cex = found.violation({n_var: 29})
    assert cex.element == Element("A", (7,)) and cex.params == {"n": 29}
    assert cex.description.startswith("load of A[i // 4]")
    assert found.violation({n_var: 28}) is None


def test_the_quarter_index_of_section_5():
    found = precondition('''
@T.prim_func
def f(A: T.Buffer((2,), "float32"), n: T.int32):
    T.assume(n >= 3)
    for i in T.serial(2, 5):
        if 0 <= ((n - i) // 2) // 2:
            A[((n - i) // 2) // 2] = 1.0
''')
    # (n - 2) // 4 <= 1 for the smallest i: n <= 9.  n < 3 is the assumption's.
    assert pp.script(found.condition) == "n < 10"


def test_no_condition_when_every_value_is_inside():
    found = precondition('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32):
    T.assume(0 <= n and n < 8)
    for i in T.serial(n):
        A[i] = 1.0
''')
    assert found.condition == n.BoolImm(True) and not found.needed
    assert isinstance(found.decision, Proved)


def test_outside_for_every_value_the_assumptions_allow_is_refuted():
    found = precondition('''
@T.prim_func
def f(A: T.Buffer((7,), "float32"), n: T.int32):
    T.assume(n >= 30)
    for i in T.serial(n):
        A[i % 7] = A[i // 4]
''')
    assert found.condition == n.BoolImm(False)
    assert isinstance(found.decision, Refuted)
    assert found.decision.counterexample.params == {"n": 30}


def test_two_parameters_and_a_modulus():
    found = precondition('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32, m: T.int32):
    T.assume(0 <= n and n <= 100 and 0 <= m and m <= 100)
    for i in T.serial(4):
        A[(n % 2) * 5 + i] = A[m - n]
''')
    # n even keeps the first inside; 0 <= m - n < 8 the second.
    text = pp.script(found.condition)
    for a in range(0, 12):
        for b in range(0, 12):
            expected = a % 2 == 0 and 0 <= b - a < 8
            assert interpreter_holds(found, {"n": a, "m": b}) is expected, (text, a, b)


def interpreter_holds(found, values: dict) -> bool:
    """``found.condition`` evaluated by the reference executor's expression evaluator."""
    from polypad.semantics.interpreter import _Interpreter

    run = _Interpreter(n.PrimFunc("g", (), n.Evaluate(n.IntImm(0))))
    for var in found.variables:
        run.env[var] = np.int32(values[var.name])
    return bool(run.eval(found.condition))


def test_data_dependent_indices_stay_unknown_and_out_of_the_condition():
    found = precondition('''
@T.prim_func
def gather(A: T.Buffer((10,), "float32"), B: T.Buffer((4,), "int32"), k: T.int32):
    for i in T.serial(4):
        A[B[i]] = A[i + k]
        if B[i] > 0:
            A[i + 7] = 1.0
''')
    assert pp.script(found.condition) == "k >= 0 and k < 7"
    assert isinstance(found.decision, Unknown)
    assert "A[B[i]]" in found.decision.reason
    assert "unless B[i] > 0" in found.decision.reason


def test_not_a_function_is_refused():
    with pytest.raises(PolypadError, match="PrimFunc"):
        analyses.bounds_precondition("f")


# ---------------------------------------------------------------- against every small n


SMALL = range(-40, 41)


@settings(max_examples=60, deadline=None)
@given(text=parameter_nests())
def test_the_condition_is_exactly_the_values_whose_run_stays_inside(text):
    """For each n in -40..40 that satisfies the assumption: the built kernel (reference
    executor) refuses the call exactly when a run without the check leaves a buffer."""
    func = pp.parse(text)
    found = analyses.bounds_precondition(func)
    if isinstance(found.decision, Refuted):
        with pytest.raises(OutOfBoundsError):
            codegen.build(func, target="python")
        return
    kernel = codegen.build(func, target="python")
    exact = isinstance(found.decision, Proved)
    lowered = lower(func, check_assumptions=True)
    for value in SMALL:
        raw = _run(lambda a, v=value: interpreter.run(lowered, a, v), func)
        if raw == "assume":
            continue  # the caller broke the contract: nothing is promised
        checked = _run(lambda a, v=value: kernel(a, v), func)
        if checked == "refused":
            # Refused only where a run really leaves a buffer.
            assert raw == "outside", (text, value)
        elif exact:
            assert checked is None and raw is None, (text, value, checked, raw)


def _run(call, func) -> str | None:
    """How a call ends: None, "refused" (precondition), "outside" or "assume";
    the array must be unchanged when the call is refused."""
    size = func.params[0].shape[0]
    a = np.arange(size, dtype="float32")
    before = a.copy()
    try:
        call(a)
    except OutOfBoundsError:
        np.testing.assert_array_equal(a, before)  # nothing was written
        return "refused"
    except BoundsCheckError:
        return "outside"
    except AssumptionError:
        return "assume"
    return None
