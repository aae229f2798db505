"""prove(): the RFC 0077 conditionals, value questions, strict IEEE and undef.

Every Proved goes through ``assert_proved``, which also checks it by running
the function on small random inputs (prover_brute_force.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from prover_brute_force import assert_proved, holds_at, violations

import analyses
import polypad as pp
from analyses import Proved, Refuted, Unknown, context_at, known_value, prove
from analyses.prover import prove_same_value
from polypad.ir import nodes as n
from polypad.ir.intrinsics import math as math_call
from polypad.ir.intrinsics import undef
from polypad.ir.substitute import substitute
from polypad.ir.visitor import walk
from polypad.transform import simplify

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rfc0077"


def example(name: str):
    path = EXAMPLES / f"{name}.py"
    return pp.parse(path.read_text(), filename=str(path))


def nodes(f, cls) -> list:
    return [x for x in walk(f.body) if isinstance(x, cls)]


def loop_vars(f, stmt) -> tuple[n.Var, ...]:
    """The counters of the loops around ``stmt``, outer first."""
    return context_at(f, stmt).loop_vars


# ---------------------------------------------------------------- index questions (ISL)


def test_assumed_scalar_range_makes_floordiv_zero():
    f = example("simplify_assume_scalar_before")
    store, nv = nodes(f, n.BufferStore)[0], f.params[1]
    assert_proved((nv // 8).equal(0), f, store, method="isl")
    refuted = prove((nv // 8).equal(1), context_at(f, store))
    assert isinstance(refuted, Refuted)
    ce = refuted.counterexample
    assert 0 <= ce.params["n"] < 8 and 0 <= ce.instances[0].indices["i"] < 16


def test_identical_conditions_of_merge_example():
    f = example("simplify_merge_identical_before")
    first, second = nodes(f, n.IfThenElse)
    a, b = first.condition, second.condition
    assert_proved(n.Eq(a, b), f, second, method="isl")


def test_complementary_conditions_4x4():
    f = example("simplify_merge_complementary_before")
    first, second = nodes(f, n.IfThenElse)
    a, b = first.condition, second.condition  # 4*i + j < 14, i == 3 and j >= 2
    assert_proved(n.Not(n.And(a, b)), f, second, method="isl")
    assert_proved(n.Or(a, b), f, second, method="isl")


def test_complement_fails_on_a_wider_grid_with_the_exact_point():
    f = pp.parse('''
@T.prim_func
def g(A: T.Buffer((4, 7), "float32")):
    for i, j in T.grid(4, 7):
        A[i, j] = 0.0
''')
    store = nodes(f, n.BufferStore)[0]
    i, j = loop_vars(f, store)
    cond = n.Or(4 * i + j < 14, n.And(i.equal(3), j >= 2))
    refuted = prove(cond, context_at(f, store))
    assert isinstance(refuted, Refuted)
    # 4i + j >= 14 outside the i == 3 row: only (2, 6).
    assert refuted.counterexample.instances == (
        analyses.Instance("A[i, j] = 0.0", {"i": 2, "j": 6}),)
    assert {(v["i"], v["j"]) for v in violations(cond, f, store)} == {(2, 6)}


def test_padding_predicate_of_the_sequential_access_example():
    # In the second loop of overcompute_conv1d_sequential, `io == 3 and ii >= 2` is
    # exactly the complement of `0 <= 4 * io + ii < 14`.
    f = example("overcompute_conv1d_sequential")
    compute_if, pad_if = nodes(f, n.IfThenElse)
    # The first loop nest's counters, renamed to the second's.
    same = dict(zip(loop_vars(f, compute_if), loop_vars(f, pad_if)))
    compute = substitute(compute_if.condition, same)
    assert_proved(n.Eq(pad_if.condition, n.Not(compute)), f, pad_if, method="isl")


def test_non_affine_index_question_goes_to_z3():
    f = pp.parse('''
@T.prim_func
def g(B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        B[i * j // 4, j] = 1.0
''')
    store = nodes(f, n.BufferStore)[0]
    i, j = loop_vars(f, store)
    assert_proved(i * j < 10, f, store, method="z3")
    refuted = prove(i * j < 9, context_at(f, store))
    assert refuted.counterexample.instances[0].indices == {"i": 3, "j": 3}


def test_unknown_names_the_non_affine_expression_when_z3_gives_up():
    x, y, z = (n.Var(v) for v in "xyz")
    positive = n.And(n.And(x > 0, y > 0), z > 0)
    claim = n.Or(n.Not(positive), (x * x * x + y * y * y).not_equal(z * z * z))
    decided = prove(claim, timeout_ms=50)
    assert isinstance(decided, Unknown)
    assert "x * x" in decided.reason and "not quasi-affine" in decided.reason


def test_extents_times_a_million_give_the_same_answers():
    f = pp.parse('''
@T.prim_func
def g(A: T.Buffer((3500001, 4), "float32")):
    for i, j in T.grid(3500001, 4):
        if 4 * i + j < 14000002:
            A[i, j] = 0.0
        if i == 3500000 and j >= 2:
            A[i, j] = 1.0
''')
    first, second = nodes(f, n.IfThenElse)
    ctx = context_at(f, second)
    a, b = first.condition, second.condition
    assert prove(n.Not(n.And(a, b)), ctx) == Proved("isl")
    assert prove(n.Or(a, b), ctx) == Proved("isl")


# ---------------------------------------------------------------- value questions (Z3)


def test_assumed_buffer_value_at_the_data_dependent_if():
    f = example("simplify_assume_buffer_before")
    A, B = f.params
    branch = nodes(f, n.IfThenElse)[0]
    assert known_value(B[0], context_at(f, branch)) == n.IntImm(0)
    assert_proved(n.Eq(A[0].equal(B[0]), A[0].equal(0)), f, branch, method="z3")


def test_assumption_broken_inside_the_loop_except_first_iteration():
    f = example("simplify_assume_buffer_before")
    A, B = f.params
    store = nodes(f, n.BufferStore)[0]
    (i,) = loop_vars(f, store)
    decided = prove(B[0].equal(0), context_at(f, store))
    assert not decided  # B[0] was overwritten by the iterations before i
    assert_proved(B[0].equal(0), f, store, where=i.equal(0))
    assert_proved(A[0].equal(0), f, store, where=i.equal(0))


def test_row_summation_padding_assumed_zero_makes_the_add_a_no_op():
    f = pp.parse('''
@T.prim_func
def row_summation(A: T.Buffer((16, 4, 4), "float32"), B: T.Buffer((16,), "float32")):
    for i, jo, ji in T.grid(16, 4, 4):
        T.assume(4 * jo + ji < 14 or A[i, jo, ji] == 0.0)
    for i in T.serial(16):
        B[i] = 0.0
        for j_outer, j_inner in T.grid(4, 4):
            if 4 * j_outer + j_inner < 14:
                B[i] = B[i] + A[i, j_outer, j_inner]
''')
    A, B = f.params
    branch = nodes(f, n.IfThenElse)[0]
    i, jo, ji = loop_vars(f, branch)
    claim = (B[i] + A[i, jo, ji]).equal(B[i])
    assert_proved(claim, f, branch, where=n.Not(branch.condition))


def test_row_summation_without_the_assumption_is_refuted_with_the_element():
    f = example("row_summation_split")
    A, B = f.params
    branch = nodes(f, n.IfThenElse)[0]
    i, jo, ji = loop_vars(f, branch)
    claim = (B[i] + A[i, jo, ji]).equal(B[i])
    decided = prove(claim, context_at(f, branch).with_condition(n.Not(branch.condition)))
    ce = decided.counterexample
    idx = ce.instances[0].indices
    assert 4 * idx["j_outer"] + idx["j_inner"] >= 14
    key = f"A[{idx['i']}, {idx['j_outer']}, {idx['j_inner']}]"
    assert ce.values[key] != 0


def test_consumer_of_explicit_default_padding():
    g = example("explicit_default_step2")["consumer"]
    A, B = g.params
    branch = nodes(g, n.IfThenElse)[0]
    io, ii = loop_vars(g, branch)
    assert_proved((B[0] + A[io, ii]).equal(B[0]), g, branch, where=n.Not(branch.condition))
    assert known_value(A[io, ii], context_at(g, branch).with_condition(
        n.Not(branch.condition))) == n.IntImm(0)


PADDED_SUM = '''
@T.prim_func
def padded_sum(A: T.Buffer((4, 4), "float32"), B: T.Buffer((1,), "float32")):
    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            A[io, ii] = 0.0
    {later}
    B[0] = 0.0
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[0] = B[0] + A[io, ii]
'''


def _padded_sum(later: str = "B[0] = 1.0"):
    f = pp.parse(PADDED_SUM.format(later=later))
    branch = nodes(f, n.IfThenElse)[1]
    io, ii = context_at(f, branch).loop_vars
    return f, branch, io, ii


def test_zeros_written_by_the_padding_stage_make_the_branch_removable():
    f, branch, io, ii = _padded_sum()
    A, B = f.params
    assert_proved((B[0] + A[io, ii]).equal(B[0]), f, branch, where=n.Not(branch.condition))


def test_a_later_write_invalidates_the_stored_zero_at_that_element_only():
    f, branch, io, ii = _padded_sum("A[3, 3] = 5.0")
    A, B = f.params
    claim = (B[0] + A[io, ii]).equal(B[0])
    ctx = context_at(f, branch).with_condition(n.Not(branch.condition))
    ce = prove(claim, ctx).counterexample
    assert ce.instances == (analyses.Instance("if 4 * io + ii < 14:", {"io": 3, "ii": 3}),)
    assert ce.element == analyses.Element("A", (3, 3))
    assert ce.values == {"B[0]": "any", "A[3, 3]": 5.0}
    assert_proved(claim, f, branch, where=n.And(n.Not(branch.condition), ii.not_equal(3)))


def test_storing_undef_resets_the_stored_zero():
    f, branch, io, ii = _padded_sum("A[3, 2] = T.undef()")
    A, B = f.params
    claim = (B[0] + A[io, ii]).equal(B[0])
    ctx = context_at(f, branch).with_condition(n.Not(branch.condition))
    ce = prove(claim, ctx).counterexample
    assert ce.instances[0].indices == {"io": 3, "ii": 2}
    assert ce.values["A[3, 2]"] != 0
    assert known_value(A[io, ii], ctx.with_condition(ii.equal(2))) is None
    assert_proved(claim, f, branch, where=n.And(n.Not(branch.condition), ii.equal(3)))


def test_value_claim_on_a_written_element_is_unknown_not_refuted():
    f = example("remove_noop_sum_before")
    A, B = f.params
    loop_store = nodes(f, n.BufferStore)[1]
    (i,) = loop_vars(f, loop_store)
    decided = prove(B[0].equal(0.0), context_at(f, loop_store).with_condition(i >= 1))
    assert isinstance(decided, Unknown)
    assert "needs the value of B[0] (last written by " in decided.reason
    assert "`B[0] = B[0] + A[i]`), which the prover does not track" in decided.reason


# ---------------------------------------------------------------- undef and IEEE


X = n.Var("x", "float32")
ZERO = n.FloatImm(0.0)


def test_zero_times_undef_is_zero_but_undef_minus_undef_is_not():
    assert prove((n.IntImm(0) * undef("int32")).equal(0)) == Proved("z3")
    assert prove((ZERO * undef("float32")).equal(ZERO)) == Proved("z3")
    assert prove((ZERO * undef("float32")).equal(ZERO), strict_ieee=True) == Proved("z3-ieee")
    assert isinstance(prove((undef("float32") - undef("float32")).equal(ZERO)), Refuted)
    assert isinstance(prove(undef("int32").equal(undef("int32"))), Refuted)


@pytest.mark.parametrize("claim", [(X * ZERO).equal(ZERO), (X - X).equal(ZERO),
                                   (X + ZERO).equal(X)])
def test_strict_ieee_refuses_what_reals_allow(claim):
    assert prove(claim) == Proved("z3")
    decided = prove(claim, strict_ieee=True)
    assert isinstance(decided, Refuted)
    x = decided.counterexample.values["x"]
    assert math.isinf(x) or math.isnan(x)
    assert not holds_at(claim, {X: x})  # the counterexample is real in float32


def test_strict_ieee_negative_zero_is_equal_but_not_the_same_value():
    minus_zero = n.FloatImm(-0.0)
    assert prove(minus_zero.equal(ZERO), strict_ieee=True) == Proved("z3-ieee")
    division = (n.FloatImm(1.0) / (X * ZERO)) > ZERO
    decided = prove(n.Or(n.Not(X.equal(n.FloatImm(-1.0))), division), strict_ieee=True)
    assert decided.counterexample.values == {"x": -1.0}  # 1 / -0.0 is -inf


def test_no_context_refutation_names_the_free_variables():
    i = n.Var("i")
    decided = prove(i < 100)
    assert decided.counterexample.params["i"] >= 100
    assert prove(n.Or(i < 100, i >= 100)) == Proved("isl")
    with pytest.raises(pp.errors.PolypadError, match="needs a condition"):
        prove(i + 1)



def test_strict_ieee_max_and_floor_fail_only_on_nan():
    for claim in (n.Max(X, ZERO) >= ZERO, math_call("floor", X) <= X):
        assert prove(claim) == Proved("z3")
        x = prove(claim, strict_ieee=True).counterexample.values["x"]
        assert math.isnan(x) and not holds_at(claim, {X: x})


def test_strict_ieee_float_to_int_of_nan_is_unspecified():
    claim = n.Or(n.Or(X < ZERO, X >= n.FloatImm(100.0)), n.Cast("int32", X) <= 100)
    assert prove(claim) == Proved("z3")
    assert math.isnan(prove(claim, strict_ieee=True).counterexample.values["x"])


def test_chained_assumptions_are_instantiated_until_the_chain_ends():
    f = pp.parse(CHAIN.format(n=9))
    A = f.params[0]
    store = nodes(f, n.BufferStore)[0]
    assert_proved(A[0] <= A[1], f, store, method="z3")
    assert_proved(A[0] <= A[8], f, store, method="z3")  # 8 links: found lazily
    ce = prove(A[1] <= A[0], context_at(f, store)).counterexample
    assert ce.values["A[0]"] < ce.values["A[1]"]


def test_a_chain_longer_than_the_rounds_is_unknown_never_refuted():
    f = pp.parse(CHAIN.format(n=40))
    A = f.params[0]
    decided = prove(A[0] <= A[39], context_at(f, nodes(f, n.BufferStore)[0]))
    assert isinstance(decided, Unknown)
    assert "instantiation stopped after 11 rounds" in decided.reason


CHAIN = '''
@T.prim_func
def f(A: T.Buffer(({n},), "int32"), B: T.Buffer((1,), "int32")):
    for i in T.serial({n} - 1):
        T.assume(A[i] <= A[i + 1])
    B[0] = 0
'''


def test_a_math_intrinsic_is_refuted_at_a_point_of_known_value():
    # Z3 reads T.exp as any function: its first model may need exp(7), which nothing
    # computed.  Asked again with each argument at a known point, exp(0) = 1 refutes.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        B[i] = T.exp(A[i])
''')
    store = nodes(f, n.BufferStore)[0]
    decided = prove_same_value(n.FloatImm(0.0, "float32"), store.value, context_at(f, store))
    assert isinstance(decided, Refuted), decided
    values = decided.counterexample.values
    loads = [k for k in values if k.startswith("A[")]
    assert loads and all(values[k] == 0.0 for k in loads)
    # Where no known point can break it, it stays Unknown: exp(x) - 1 may be 0.
    shifted = store.value - n.FloatImm(1.0, "float32")
    undecided = prove_same_value(n.FloatImm(0.0, "float32"), shifted, context_at(f, store))
    assert isinstance(undecided, Unknown)


def test_first_counterexample_only_seeks_no_earlier_instance(monkeypatch):
    # B[io, ii] holds a running sum the prover does not track: each model Z3 gives needs
    # its value.  By default earlier instances are tried too (fewer writes behind them);
    # a caller about to run the function asks for the first model only.
    from analyses import refutation
    from analyses.proof_options import ProofOptions
    from polypad.ir.fresh_copy import fresh_copy
    from polypad.ir.locate import replace

    f = example("implicit_default_step2")
    guard = nodes(f, n.IfThenElse)[-1]  # if <padding>: B[io, ii] = 0.0
    # The store run where the guard is false: there B holds the running sums.
    f = replace(f, guard, n.IfThenElse(guard.condition, guard.then_case,
                                       fresh_copy(guard.then_case)))
    store = nodes(f, n.IfThenElse)[-1].else_case
    question = n.Eq(n.BufferLoad(store.buffer, store.indices), n.FloatImm(0.0, "float32"))
    searches = []
    original = refutation.CounterexampleSearch.refutation

    def counted(self, model):
        searches.append(model)
        return original(self, model)

    monkeypatch.setattr(refutation.CounterexampleSearch, "refutation", counted)
    ctx = context_at(f, store)
    anywhere = prove(question, ctx)
    # How many earlier instances are tried depends on the first model Z3 picks (it
    # may already be the earliest); with the flag, never more than that one.
    assert isinstance(anywhere, Unknown) and searches
    searches.clear()
    first = prove(question, context_at(f, store),
                  options=ProofOptions().first_counterexample_only())
    assert isinstance(first, Unknown) and len(searches) == 1


def test_the_search_at_known_points_leaves_the_model_to_the_retries():
    # Strict IEEE, with exp: the search at known points may time out.  It asks a solver
    # of its own, so the retries still find the first model (a review found a
    # Z3Exception "model is not available" here when it shared the solver).
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
      D: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        B[i] = T.exp(A[i]) * C[i] * D[i] - 1.0
''')
    store = nodes(f, n.BufferStore)[0]
    C, D = f.params[1], f.params[2]
    other = (n.BufferLoad(C, store.indices) * n.BufferLoad(D, store.indices)
             - n.FloatImm(1.0, "float32"))
    for timeout_ms in range(90, 200, 10):
        decided = prove_same_value(other, store.value, context_at(f, store),
                                   strict_ieee=True, timeout_ms=timeout_ms)
        assert isinstance(decided, Unknown), decided


NEAR_INT32_MAX_LOOP = """
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(2147483645 <= n)
    for i in T.serial(n, n + 2):
        if (n + i) % 8 < 4:
            B[1] = A[0]
"""


def test_a_loop_range_near_int32_max_is_taken_exactly():
    """The fuzz, seed 0, case 3173: ISL writes the loop's domain as ``i < n + 2``, which
    holds over the integers; read with int32's wrap-around, n = 2147483646 looked
    outside it, and the condition, false there (``n + i`` wraps to -4), was proved."""
    f = pp.parse(NEAR_INT32_MAX_LOOP)
    (branch,) = [s for s in walk(f.body) if isinstance(s, n.IfThenElse)]
    decided = prove(branch.condition, context_at(f, branch))
    assert isinstance(decided, Refuted), decided
    assert decided.counterexample.params == {"n": 2147483646}
    assert [dict(x.indices) for x in decided.counterexample.instances] == [{"i": 2147483646}]
    # ... so simplify keeps the if.
    kept = simplify(f)
    pp.assert_structural_equal(kept, f)
