"""Passes build well-formed IR (issue 21, section 5): no statement ever holds ``None``
where the grammar wants a statement.

simplify once merged ``if c1: t0 = ...`` (a let around ``pass``) with the
complementary ``if c2: C[...] = ...`` into an ``if`` whose ``then`` branch was
``None``; ``pp.script`` then failed and the next pass raised a ``TypeError``.
Now an empty branch (``pass``) counts as nothing left, the merged ``if`` is
``if not c1: ...``, and a statement rejects a ``None`` child as it is made.
"""

from __future__ import annotations

import numpy as np
import pytest
from inputs_support import make_inputs
from pass_support import assert_same_results

import codegen
import polypad as pp
from polypad.errors import VerifyError
from polypad.ir import nodes as n
from polypad.ir.verify import problems, verify
from polypad.transform import simplify

ORIGINAL = '''
@T.prim_func
def f(A: T.Buffer((4, 5), "float32"), B: T.Buffer((3,), "int32")):
    C = T.alloc_buffer((4,), "int32")
    for i in T.serial(5):
        T.assume(B[((((i + 2) // 3) // 3) // 3) % 3] < 3)
        if (i) // 2 != 5:
            if ((3 - i) // 3 != 0) and (not (i % 3 == 0)):
                t0 = 4 - i
            else:
                if i < 4 and i + 1 < 5:
                    A[i, i + 1] = 0.0
            if 0 <= 3 - i:
                C[3 - i] = ((B[((i) // 2) // 2]) + (5)) - (i)
        else:
            if i + 2 < 5:
                A[(i) % 4, i + 2] = 0.0
        if B[(4 - i) % 3] != 2:
            A[B[(i + 1) % 3] % 4, T.max(T.min(2 - i, 4), 0)] = 2.0
    A[3, 2] = (T.min(-1.0, 0.0)) + ((-0.5) + (-1.0))
    for j in T.serial(2, 3):
        if ((((j) // 2) % 4) // 2) // 4 <= 4:
            if (((j) // 2) // 4) // 3 >= 5:
                t1 = (2 - j) // 3
                t2 = 2 - j
            else:
                A[(j + 3) // 3, ((j) // 4) // 4] = ((A[((j) // 3) // 3, j]) - (T.if_then_else(6 - j < 4, A[6 - j, (j) // 2], 0.0))) - (T.Cast("float32", j))
    A[0, 2] = (2.0) - (A[B[0] % 4, 2])
'''  # noqa: E501

# `(3 - i) // 3 != 0 and i % 3 != 0` holds at i == 4 only, where the store to C is
# skipped too (3 - i < 0): the two ifs are complementary and merge, the let around
# `pass` leaves nothing, and the merged if keeps the else side under `not`.
SIMPLIFIED = '''
@T.prim_func
def f(A: T.Buffer((4, 5), "float32"), B: T.Buffer((3,), "int32")):
    C = T.alloc_buffer((4,), "int32")
    for i in T.serial(5):
        T.assume(B[(i + 2) // 3 // 3 // 3 % 3] < 3)
        if not ((i == 4 or i == 0) and not i % 3 == 0):
            A[i, i + 1] = 0.0
            C[3 - i] = B[0] + 5 - i
        if B[(4 - i) % 3] != 2:
            A[B[(i + 1) % 3] % 4, T.max(2 - i, 0)] = 2.0
    A[3, 2] = -2.5
    for j in T.serial(2, 3):
        A[1, 0] = A[0, j] - 0.0 - T.Cast("float32", j)
    A[0, 2] = 2.0 - A[B[0] % 4, 2]
'''


def inputs(f: n.PrimFunc, seeds=range(8)) -> list[list]:
    """Random arguments (small integers) satisfying the assumption, which reads B[0]
    at every i (``make_inputs`` leaves an inequality to the caller)."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        args = make_inputs(f, rng, exact=True)
        if len(args) > 1:
            args[1][0] = rng.integers(-5, 3)
        out.append(args)
    return out


def test_simplify_merges_complementary_ifs_into_well_formed_ir():
    f = pp.parse(ORIGINAL)
    got = simplify(f)
    verify(got)
    pp.assert_structural_equal(got, pp.parse(SIMPLIFIED))
    pp.assert_structural_equal(pp.parse(pp.script(got)), got)
    for args in inputs(f):
        assert args[1][0] < 3  # the assumption holds
        assert_same_results(f, got, args)


@pytest.mark.numba
def test_simplified_function_runs_like_the_original_in_numba():
    f = pp.parse(ORIGINAL)
    want, got = codegen.build(f), codegen.build(simplify(f))
    for args in inputs(f, range(4)):
        assert_same_results(want, got, args)


@pytest.mark.parametrize("name", ["simplify", "remove_no_op", "hoist_expression",
                                  "reduce_loop_extents", "remove_branching_through_overcompute",
                                  "remove_overcompute_through_branching", "remove_assume",
                                  "remove_store_undef"])
def test_every_pass_and_then_the_next_gives_well_formed_ir(name):
    f = pp.parse(ORIGINAL)
    once = getattr(pp.transform, name)(simplify(f))
    verify(once)
    twice = getattr(pp.transform, name)(once)
    verify(twice)
    args = inputs(f, range(3))
    for a in args:
        assert_same_results(f, twice, a)


def test_an_empty_then_branch_of_a_merge_keeps_the_else_side_under_not():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        if i < 4:
            pass
        else:
            A[i] = 1.0
        if i < 4:
            pass
        if i >= 4:
            A[i] = A[i] + 1.0
''')
    got = simplify(f)
    pp.assert_structural_equal(got, pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        if not i < 4:
            A[i] = 1.0
            A[i] = 2.0
'''))
    for seed in range(3):
        assert_same_results(f, got, inputs(f, [seed])[0])


def test_a_body_of_only_pass_is_left_as_it_is():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    pass
''')
    assert simplify(f) is f


# ---------------------------------------------------------------- the node invariant


@pytest.mark.parametrize("make", [
    lambda s: n.IfThenElse(n.BoolImm(True), None),
    lambda s: n.For(n.Var("i"), n.IntImm(0), n.IntImm(4), n.ForKind.SERIAL, None),
    lambda s: n.SeqStmt((s, None)),
    lambda s: n.LetStmt(n.Var("x"), n.IntImm(0), None),
    lambda s: n.Block("b", None),
    lambda s: n.IfThenElse(n.BoolImm(True), s, n.IntImm(0)),
], ids=["if", "for", "seq", "let", "block", "else-expression"])
def test_a_statement_rejects_a_child_the_grammar_rules_out(make):
    with pytest.raises(VerifyError, match=r"must be a (tuple of )?statement"):
        make(n.Evaluate(n.IntImm(0)))


def test_verify_names_the_node_whose_branch_is_none():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        if i < 2:
            A[i] = 1.0
''')
    broken = f.body.body
    object.__setattr__(broken, "then_case", None)  # as a buggy rewrite left it
    assert problems(f) == ["IfThenElse.then_case must be a statement, got None "
                           "(in if i < 2 at line 5)"]
    with pytest.raises(VerifyError, match="then_case must be a statement, got None"):
        verify(f)
    with pytest.raises(VerifyError, match="cannot print the statement NoneType"):
        pp.script(f)
