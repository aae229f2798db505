"""can_remove_conditional and remove_branching_through_overcompute: which ifs may go, why,
and for those that must stay, the counterexample.  Every removal is also run: the
function before and after, on inputs that satisfy its assumptions, in the reference
executor and in Numba."""

from __future__ import annotations

import numpy as np
import pytest
from inputs_support import make_inputs

import analyses
import codegen
import polypad as pp
from analyses import Proved, Refuted, Unknown
from analyses.conditional import Removable
from polypad.errors import NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.transform import (
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
)


def ifs(f):
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def run(f, args, target):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    codegen.build(f, target=target)(*args)
    return args


def assert_same_results(f, g, *, numba=False, seeds=(0, 1, 2)):
    targets = ("python", "numba") if numba else ("python",)
    for seed in seeds:
        args = make_inputs(f, np.random.default_rng(seed))
        for target in targets:
            for a, b in zip(run(f, args, target), run(g, args, target)):
                np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- the RFC's conv1d

CONV = '''
@T.prim_func
def conv(A: T.Buffer(({ai}, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({bo}, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid({bo}, 4):
            if 4 * io + ii < {n}:
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid({bo}, 4):
            if 4 * io + ii >= {n}:
                B[io, ii] = {pad}
'''


def conv(n_out: int, pad: str = "0.0"):
    bo = (n_out + 3) // 4
    ai = (n_out + 2 + 4) // 4 + 1  # room for the overcomputed padding's reads
    return pp.parse(CONV.format(n=n_out, bo=bo, ai=ai, pad=pad))


@pytest.mark.parametrize("n_out,pad", [(14, "0.0"), (13, "-1.0"), (10, "2.5"), (15, "0.0")])
def test_compute_guard_goes_because_the_pad_block_overwrites_the_padding(n_out, pad):
    f = conv(n_out, pad)
    decided = analyses.can_remove_conditional(f, "compute")
    assert isinstance(decided, Removable) and decided.keep == "then"
    assert "rule 1" in decided.detail and "B_pad_value" in decided.detail
    g = remove_branching_through_overcompute(f)
    compute = g.body.stmts[0].body
    inner = compute.body.body  # for io: for ii: the store and the loop over f, unguarded
    assert not ifs(compute) and isinstance(inner, n.SeqStmt)
    assert isinstance(inner.stmts[0], n.BufferStore) and isinstance(inner.stmts[1], n.For)
    assert len(ifs(g)) == 1  # the pad block's guard stays
    assert_same_results(f, g, numba=(n_out == 14))


def test_pad_block_guard_stays():
    f = conv(14)
    decided = analyses.can_remove_conditional(f, "B_pad_value")
    assert not isinstance(decided, Proved)
    report = explain_branching_through_overcompute(f)
    assert [e.removed for e in report.entries] == [True, False]
    assert "if 4 * io + ii < 14: removed" in str(report)


def test_guard_over_caller_data_is_refuted_with_the_element_and_values():
    f = pp.parse('''
@T.prim_func
def pad(B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        if i >= 14:
            B[i] = 0.0
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.element is not None and cex.element.buffer == "B" and cex.element.indices[0] < 14
    held = cex.values[f"B[{cex.element.indices[0]}]"]
    assert held != 0.0 and cex.values["stored 0.0"] == 0.0
    assert remove_branching_through_overcompute(f) is f


def test_overcompute_that_would_read_outside_a_buffer_is_refused():
    f = pp.parse('''
@T.prim_func
def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        if i > 0:
            B[i] = A[i - 1]
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    assert "leaves a buffer" in decided.counterexample.description
    assert decided.counterexample.element.indices == (-1,)


# ---------------------------------------------------------------- padding known by assumption

ROW_SUM = '''
@T.prim_func
def row_sum(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    for i, j in T.grid({rows}, {cols}):
        T.assume(j < {valid} or A[i, j] == {pad})
    for i in T.serial({rows}):
        B[i] = 0.0
        for j in T.serial({cols}):
            if j < {valid}:
                B[i] = B[i] + A[i, j]
'''


@pytest.mark.parametrize("rows,cols,valid", [(4, 4, 3), (3, 8, 5), (2, 16, 14)])
def test_row_sum_guard_goes_when_the_padding_is_assumed_zero(rows, cols, valid):
    f = pp.parse(ROW_SUM.format(rows=rows, cols=cols, valid=valid, pad="0.0"))
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Removable) and "rule 3" in decided.detail
    g = remove_branching_through_overcompute(f)
    pp.assert_structural_equal(g, pp.parse(f'''
@T.prim_func
def row_sum(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    for i, j in T.grid({rows}, {cols}):
        T.assume(j < {valid} or A[i, j] == 0.0)
    for i in T.serial({rows}):
        B[i] = 0.0
        for j in T.serial({cols}):
            B[i] = B[i] + A[i, j]
'''))
    assert_same_results(f, g, numba=(rows == 4))


def test_row_sum_guard_stays_when_the_padding_is_not_the_identity():
    f = pp.parse(ROW_SUM.format(rows=4, cols=4, valid=3, pad="1.0"))
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.element.buffer == "B"
    assert remove_branching_through_overcompute(f) is f


# ---------------------------------------------------------------- if / else

SELECT = '''
@T.prim_func
def pick(A: T.Buffer((16,), "float32"), F: T.Buffer((16,), "float32"),
         B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        T.assume(i < {valid} or A[i] == 0.0)
    for i in T.serial(16):
        if i < {valid}:
            B[i] = A[i] * F[i]
        else:
            B[i] = 0.0
'''


@pytest.mark.parametrize("valid", [14, 9])
def test_else_branch_that_the_then_branch_computes_anyway(valid):
    f = pp.parse(SELECT.format(valid=valid))
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Removable) and decided.keep == "then"
    g = remove_branching_through_overcompute(f)
    assert not ifs(g)
    assert_same_results(f, g, numba=(valid == 14))


def test_strict_ieee_refuses_zero_times_a_value_that_may_be_inf():
    """Over the reals 0 * F is 0; in IEEE it is NaN for F = inf, and -0.0 (another
    value in memory) for F < 0 or A = -0.0, which also satisfies A == 0.0."""
    f = pp.parse(SELECT.format(valid=14))
    decided = analyses.can_remove_conditional(f, ifs(f)[0], strict_ieee=True)
    assert isinstance(decided, Refuted)
    values = decided.counterexample.values
    stored = values["stored A[i] * F[i]"]
    assert stored != stored or str(stored) == "-0.0"  # NaN or -0.0, never +0.0
    special = [v for v in values.values() if isinstance(v, float)
               and (v != v or v in (float("inf"), float("-inf")) or str(v) == "-0.0")]
    assert special  # the counterexample names the IEEE value that breaks it
    assert remove_branching_through_overcompute(f, strict_ieee=True) is f


def test_else_branch_kept_when_the_then_branch_is_the_special_case():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        T.assume(A[i] == 1.0 or i != 0)
    for i in T.serial(8):
        if i == 0:
            B[i] = 1.0
        else:
            B[i] = A[i]
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Removable) and decided.keep == "else"
    g = remove_branching_through_overcompute(f)
    pp.assert_structural_equal(g, pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        T.assume(A[i] == 1.0 or i != 0)
    for i in T.serial(8):
        B[i] = A[i]
'''))
    assert_same_results(f, g)


def test_branches_that_differ_are_refuted_where_they_differ():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        if i < 4:
            B[i] = A[i]
        else:
            B[i] = 2.0 * A[i]
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    (instance,) = cex.instances
    assert instance.indices["i"] >= 4 or instance.indices["i"] < 4  # names the loop index
    assert cex.element is not None and cex.element.buffer == "A"


# ---------------------------------------------------------------- known from an earlier store

STORED = '''
@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    C = T.alloc_buffer(({n},), "float32")
    for i in T.serial({n}):
        C[i] = A[i]
    for i in T.serial({tail}):
        C[i + {m}] = {v}
    for i in T.serial({n}):
        {body}
'''
BRANCHES = "if i < {m}:\n            B[i] = C[i] * {k} + 1.0\n        else:\n            B[i] = {w}"


def stored(n_: int, m: int, v: float, k: float, w: float, body: str = BRANCHES):
    return pp.parse(STORED.format(n=n_, m=m, tail=n_ - m, v=v,
                                  body=body.format(m=m, k=k, w=w)))


@pytest.mark.parametrize(("n_", "m", "v", "k"), [(8, 5, 0.0, 2.0), (13, 4, -1.5, 2.0),
                                                 (21, 20, 3.0, -0.5), (6, 1, 0.25, 4.0)])
def test_else_branch_is_the_then_branch_with_a_stored_value_substituted(n_, m, v, k):
    # Where i >= m, C[i] holds v (stored by the second loop, not assumed): the then
    # branch stores v * k + 1, which is what the else branch stores.
    f = stored(n_, m, v, k, v * k + 1.0)
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Removable) and decided.keep == "then"
    g = remove_branching_through_overcompute(f)
    pp.assert_structural_equal(g, stored(n_, m, v, k, 0.0, body="B[i] = C[i] * {k} + 1.0"))
    assert_same_results(f, g)


@pytest.mark.parametrize(("n_", "m", "v", "k", "off"), [(13, 4, -1.5, 2.0, 0.5),
                                                        (9, 7, 2.0, 3.0, -1.0)])
def test_else_branch_that_differs_from_the_stored_value_is_refuted(n_, m, v, k, off):
    f = stored(n_, m, v, k, v * k + 1.0 + off)
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    (instance,) = cex.instances
    i = instance.indices["i"]
    assert m <= i < n_
    assert cex.element == analyses.Element("C", (i,))
    assert cex.values == {f"C[{i}]": v, f"stored C[i] * {k} + 1.0": v * k + 1.0}
    assert remove_branching_through_overcompute(f) is f
    # Run: the kept branch would store v * k + 1 where the else stores v * k + 1 + off.
    g = stored(n_, m, v, k, 0.0, body="B[i] = C[i] * {k} + 1.0")
    args = make_inputs(f, np.random.default_rng(n_))
    assert run(f, args, "python")[1][i] != run(g, args, "python")[1][i]


# ---------------------------------------------------------------- the question's edges

def test_a_conditional_holding_an_assumption_is_not_removed():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        if i < 4:
            T.assume(A[i] == 0.0)
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Unknown) and "T.assume" in decided.reason


def test_arguments_are_checked():
    f = conv(14)
    g = pp.parse('@T.prim_func\ndef g(A: T.Buffer((4,), "float32")):\n'
                 '    with T.block("fill"):\n        for i in T.serial(4):\n'
                 '            A[i] = 0.0\n')
    with pytest.raises(NotFoundError, match="holds 0 conditionals"):
        analyses.can_remove_conditional(g, "fill")
    with pytest.raises(NotFoundError, match="nope"):
        analyses.can_remove_conditional(f, "nope")
    with pytest.raises(NotFoundError):
        analyses.can_remove_conditional(f, ifs(conv(13))[0])  # an if of another function
    with pytest.raises(TypeError):
        analyses.can_remove_conditional(f, f.body)


# ---------------------------------------------------------------- padding without a pad value

GUARDED_COPY = '''
@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({whole},), "float32"),
      C: T.Buffer((1,), "float32")):
    for i in T.serial({whole}):
        if i < {n}:
            {copy}
    for i in T.serial({tail}):
        B[i + {n}] = 0.0
'''


def guarded_copy(n_: int, t: int, pad, copy: str = "B[i] = A[i]"):
    """A copied into B where i < n; B's tail zeroed after.  A laid out in tiles of t."""
    whole = -(-n_ // t) * t
    f = pp.parse(GUARDED_COPY.format(n=n_, whole=whole, tail=whole - n_, copy=copy))
    sch = pp.Schedule(f)
    sch.transform_layout(None, "A", lambda i: [i // t, i % t], pad_value=pad)
    return sch.func


@pytest.mark.parametrize(("n_", "t"), [(14, 4), (13, 4), (10, 3), (17, 8)])
def test_overcompute_may_not_read_padding_without_a_pad_value(n_, t):
    f = guarded_copy(n_, t, None)
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted)
    cex = decided.counterexample
    assert cex.instances == (analyses.Instance("S0", {"i": n_}),)
    assert cex.element == analyses.Element("A", (n_ // t, n_ % t))
    assert "padding of A that holds no known value" in cex.description
    assert remove_branching_through_overcompute(f) is f


@pytest.mark.parametrize(("n_", "t", "pad"), [(14, 4, 0.0), (10, 3, -2.0), (17, 8, "undef")])
def test_overcompute_may_read_padding_with_a_pad_value(n_, t, pad):
    # The pad value's T.assume gives the padding a value (T.undef(): any value may be read).
    f = guarded_copy(n_, t, pp.T.undef() if pad == "undef" else pad)
    decided = analyses.can_remove_conditional(f, ifs(f)[-1])
    assert isinstance(decided, Removable) and "rule 1" in decided.detail
    g = remove_branching_through_overcompute(f)
    assert len(ifs(g)) == 0
    if pad != "undef":
        assert_same_results(f, g)


@pytest.mark.parametrize(("n_", "t"), [(14, 4), (10, 3)])
def test_padding_read_under_a_guard_on_data_is_unknown(n_, t):
    f = guarded_copy(n_, t, None, copy="if C[0] > 0.0:\n                B[i] = A[i]")
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Unknown)
    assert f"read A[{n_ // t}, {n_ % t}], padding of A" in decided.reason
    assert "a guard on data decides" in decided.reason


# ---------------------------------------------------------------- branches differing in an index

INDEX = '''
@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.serial({n}):
        if i == {m}:
            B[i % {k}] = A[(i + {k}) % {k}] * 2.0
        else:
            B[i] = A[i] * 2.0
'''


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("n_", "m", "k"), [(8, 3, 8), (13, 0, 16), (6, 5, 5), (5, 2, 3)])
def test_branches_that_differ_only_in_an_index_equal_where_it_matters(n_, m, k, strict):
    # i % k == i wherever i < k: the then branch does what the else branch does for
    # every i but m when n <= k, else only at i == m when m < k (the else branch goes).
    f = pp.parse(INDEX.format(n=n_, m=m, k=k))
    stmt = ifs(f)[0]
    decided = analyses.can_remove_conditional(f, stmt, strict_ieee=strict)
    assert isinstance(decided, Removable), decided
    assert decided.keep == ("then" if n_ <= k or (n_ == k + 1 and m == k) else "else")
    kept = stmt.then_case if decided.keep == "then" else stmt.else_case
    assert_same_results(f, replace(f, stmt, kept))


@pytest.mark.parametrize(("n_", "m", "k"), [(8, 6, 5), (12, 7, 4), (9, 8, 3)])
def test_branches_that_differ_in_an_index_somewhere_are_not_removed(n_, m, k):
    # Some i != m with i % k != i, and m % k != m: neither branch does what the other does.
    f = pp.parse(INDEX.format(n=n_, m=m, k=k))
    for strict in (False, True):
        decided = analyses.can_remove_conditional(f, ifs(f)[0], strict_ieee=strict)
        assert not isinstance(decided, Proved), decided


# ---------------------------------------------------------------- if/else: both ways


@pytest.mark.parametrize("length", [6, 13, 14])
def test_one_branch_refuted_and_the_other_undecided_is_never_refuted(length):
    # Keeping the else branch reads B[-1] at i = 0: refuted.  Keeping the then branch
    # is right (the running copy of a 0 is 0 everywhere); the prover shows it for a
    # short buffer, and not for a longer one (the RFC's conv1d_cumsum).  Then the
    # answer is Unknown, naming both, never Refuted.
    f = pp.parse(f'''
@T.prim_func
def running(B: T.Buffer(({length},), "int32")):
    for i in T.serial({length}):
        if i == 0:
            B[i] = 0
        else:
            B[i] = B[i - 1]
''')
    branch = ifs(f)[0]
    decided = analyses.can_remove_conditional(f, branch)
    if length < 13:
        assert isinstance(decided, Removable) and decided.keep == "then"
    else:
        assert isinstance(decided, Unknown), decided
        assert "the then branch may not replace the other" in decided.reason
        assert "running the else branch everywhere leaves a buffer" in decided.reason
        assert "B[i - 1]" in decided.reason
    # Keeping the then branch computes the same, so a Refuted would have been wrong.
    assert_same_results(f, replace(f, branch, branch.then_case))


def test_both_branches_refuted_keep_the_then_counterexample():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        if i < 6:
            B[i] = A[i] + 1.0
        else:
            B[i] = A[i] - 1.0
''')
    decided = analyses.can_remove_conditional(f, ifs(f)[0])
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    assert cex.description.startswith("the then branch differs from the other where not (i < 6)")
    assert "keeping the else branch instead: the else branch differs" in cex.description
    assert cex.instances[0].indices["i"] >= 6


def test_a_data_dependent_guard_that_keeps_an_index_inside_stays():
    # The guard is what keeps B[idx[i]] inside B, and ISL cannot read either: the
    # removal is Unknown (a review found it "proved" through rule 3), and running the
    # body everywhere does store outside B.
    f = pp.parse('''
@T.prim_func
def f(idx: T.Buffer((10,), "int32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        if idx[i] >= 0 and idx[i] < 10:
            B[idx[i]] = B[idx[i]] + 0.0
''')
    branch = ifs(f)[0]
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Unknown), decided
    assert "may leave a buffer" in decided.reason and "idx[i]" in decided.reason
    unguarded = codegen.build(replace(f, branch, branch.then_case), target="python")
    # The stored value's load runs first (TVM's order), and leaves B first.
    with pytest.raises(pp.errors.BoundsCheckError, match=r"load of B\[20\]"):
        unguarded(np.full(10, 20, "int32"), np.zeros(10, "float32"))
