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
from analyses.witness_inputs import make_inputs
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


@pytest.mark.parametrize("result", ["C[0]", "T.min(C[0], T.float32(0.0))"])
def test_a_result_read_from_unwritten_memory_is_not_one_value(result):
    # The function returns what an allocation held before any write: any value.  A
    # rewrite that stores -3.0 there first picks one of them, and is not refuted (the
    # executor's zeros are one choice of many, and a min() would hide which).
    text = '''
@T.prim_func
def f(B: T.Buffer((1,), "float32")):
    C = T.alloc_buffer((1,), "float32")
    {store}
    B[0] = {result}
'''
    before = pp.parse(text.format(store="T.evaluate(0)", result=result))
    after = pp.parse(text.format(store="C[0] = T.float32(-3.0)", result=result))
    assert refute_by_execution(before, after, "x") is None
    # The other way round the rewrite reads what the function never did: refuted, for
    # the rewrite may see any value, among them the executor's 0.0.
    cex = refute_by_execution(after, before, "x")
    assert cex is not None and cex.element == analyses.Element("B", (0,))
    assert cex.values["B[0] before"] == -3.0 and cex.values["B[0] after"] == 0.0


def test_an_allocation_inside_a_loop_is_not_run():
    # One allocation per iteration: the dataflow is not exact about where each ends, so
    # the run is not tried, although here every read follows a write.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.serial(4):
        C = T.alloc_buffer((1,), "float32")
        if i < 3:
            C[0] = A[i]
            B[0] = B[0] + C[0]
''')
    assert refute_by_execution(f, _without_guard(f), "x") is None


def test_an_allocation_written_before_it_is_read_is_run():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
    C = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        C[i] = A[i] + T.float32(1.0)
    for i in T.serial(4):
        if i < 3:
            B[0] = B[0] + C[i]
''')
    cex = refute_by_execution(f, _without_guard(f), "x")
    assert cex is not None and cex.element == analyses.Element("B", (0,))
    a = np.array(cex.values["input A"], dtype="float32")
    assert cex.values["B[0] after"] - cex.values["B[0] before"] == a[3] + 1.0


ROUNDING = '''
@T.prim_func
def f(A: T.Buffer((8,), "{dtype}"), B: T.Buffer((1,), "{dtype}")):
    for i in T.serial(8):
        if i < 5:
            B[0] = B[0] + ({change})
'''


@pytest.mark.parametrize(("dtype", "change"), [
    # 2**25: A[i] + 2**25 rounds to an even number, and the difference is not 0
    ("float32", "A[i] + T.float32(33554432.0) - T.float32(33554432.0) - A[i]"),
    # a fraction rounds
    ("float32", "A[i] * T.float32(0.1) * T.float32(10.0) - A[i]"),
    # float16 holds every integer exactly only up to 2048
    ("float16", "A[i] + T.float16(2048.0) - T.float16(2048.0) - A[i]"),
])
def test_a_run_that_may_round_proves_nothing(dtype, change):
    # Over the reals the branch adds exactly 0 to B[0], so removing the guard is
    # correct; a run whose floats rounded must not say otherwise.
    f = pp.parse(ROUNDING.format(dtype=dtype, change=change))
    decided = analyses.can_remove_conditional(f, _ifs(f)[0])
    assert not isinstance(decided, analyses.Refuted)
    assert refute_by_execution(f, _without_guard(f), "x") is None


@pytest.mark.parametrize(("constant", "refuted"), [("3.0", True), ("33554432.0", False)])
def test_an_exact_run_refutes_and_a_rounding_one_gives_up(constant, refuted):
    # The branch adds A[i] (+ c - c): harmful.  With a small c the run is exact and finds
    # it; with c = 2**25 the run may round, so it answers nothing rather than guess.
    f = pp.parse(ROUNDING.format(
        dtype="float32", change=f"A[i] + T.float32({constant}) - T.float32({constant})"))
    cex = refute_by_execution(f, _without_guard(f), "x")
    assert (cex is not None) is refuted
    if refuted:
        a = np.array(cex.values["input A"], dtype="float32")
        assert cex.values["B[0] after"] - cex.values["B[0] before"] == a[5:].sum() != 0


def test_the_executor_flags_a_float_that_may_have_rounded():
    from polypad.errors import InexactArithmeticError
    from polypad.semantics import lower, run

    f = lower(pp.parse(ROUNDING.format(
        dtype="float32", change="A[i] + T.float32(33554432.0) - T.float32(33554432.0)")))
    args = [np.ones(8, "float32"), np.zeros(1, "float32")]
    run(f, *[a.copy() for a in args])  # without the check it runs
    with pytest.raises(InexactArithmeticError, match=r"gave 33554432.0"):  # 1 + 2**25
        run(f, *[a.copy() for a in args], exact_floats=True)


def _example_conditionals():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            for stmt in _ifs(f):
                yield f, stmt


def _runs_exactly(f, rewritten) -> bool:
    """Whether both programs run to the end, exactly, on the first draw of inputs."""
    from polypad.semantics import lower, run

    if not (_runnable(f) and _runnable(rewritten)):
        return False
    args = make_inputs(f, np.random.default_rng(0), exact=True)
    try:
        for program in (f, rewritten):
            run(lower(program, check_assumptions=True), *[a.copy() if hasattr(a, "copy")
                                                          else a for a in args],
                exact_floats=True)
    except pp.PolypadError:
        return False
    return True


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
            rewritten = replace(f, stmt, decided.kept(stmt))  # wrapped indices included
            assert refute_by_execution(f, rewritten, "x") is None, f.name
            checked += 1
            run += _runs_exactly(f, rewritten)
    assert checked >= 20 and run >= 15  # most are run, and run to the end


def test_inputs_under_a_condition_on_a_local_buffer():
    # Found by the fuzz (issue 21's shapes): make_inputs evaluated the condition to know
    # which branch's assumptions to establish, and its evaluator cannot read a local
    # buffer; the internal _Opaque escaped.  Nothing is established under it now.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in T.serial(4):
        X = T.alloc_buffer((4,), "int32")
        if X[2] > 3:
            for p in T.serial(8):
                T.assume(p < 6 or A[p] == 0)
        A[3] = i
''')
    (a,) = make_inputs(f, np.random.default_rng(0))
    assert a.shape == (8,) and a.dtype == np.int32


def test_inputs_establish_the_assumptions_under_a_view_declaration():
    # Found by the fuzz (views at offsets): a view's declaration holds the rest of the
    # function as its body, and make_inputs did not look inside it, so no assumption
    # after a view was established and every draw broke `T.assume(i < 2 or B[i] == 3)`.
    from polypad.semantics import lower, run

    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    A_1 = T.decl_buffer((6,), "int32", data=A.data, elem_offset=2)
    for i in T.serial(6):
        T.assume(i < 2 or B[i] == 3)
        A_1[i] = B[i]
''')
    a, b = make_inputs(f, np.random.default_rng(0))
    assert b[2:6].tolist() == [3, 3, 3, 3]
    out = [a.copy(), b.copy()]
    run(lower(f, check_assumptions=True), *out)  # no AssumptionError
    assert out[0][4:8].tolist() == [3, 3, 3, 3]
