"""What TVM's ReduceBranchingThroughOvercompute does, as remove_branching_through_overcompute
does it.

Issue 21, section 6.  Each case follows a test of TVM's
``tests/python/tir-transform/test_tir_transform_reduce_branching_through_overcompute.py``,
written as a before/expected pair in polypad script and checked three ways
(:mod:`tvm_support`): the exact result, verified IR, and the same buffers
on the reference executor and the Numba kernel for random inputs that
satisfy the assumptions.  A conditional that must stay is refused with the
exact class and counterexample.
"""

from __future__ import annotations

from tvm_support import assert_rewrites, assert_unchanged, prim

import analyses
from analyses import Instance, Refuted
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.transform import remove_branching_through_overcompute

A16 = 'A: T.Buffer((16,), "int32")'


def rewrites(params, before, expected):
    return assert_rewrites(remove_branching_through_overcompute, params, before, expected)


def test_introduce_no_op():
    """TestIntroduceNoOp: the branches store the same, up to a statement with no effect.

    TVM adds the no-op to the else branch and keeps the then branch, with its
    ``T.evaluate(0)``; polypad keeps the branch that needs none.
    """
    rewrites(A16, """
        for i in T.serial(16):
            if i < 14:
                A[i] = 1
                T.evaluate(0)
            else:
                A[i] = 1
    """, """
        for i in T.serial(16):
            A[i] = 1
    """)


def test_introduce_no_op_issue_form():
    """The same, as issue 21 gives it: the no-op may sit in either branch."""
    for then, other in (("A[i] = 4\n                T.evaluate(0)", "A[i] = 4"),
                        ("A[i] = 4", "T.evaluate(0)\n                A[i] = 4")):
        rewrites(A16, f"""
        for i in T.serial(16):
            if i < 9:
                {then}
            else:
                {other}
    """, """
        for i in T.serial(16):
            A[i] = 4
    """)


def test_a_no_op_does_not_hide_a_different_value():
    f = prim(A16, """
        for i in T.serial(16):
            if i < 14:
                A[i] = 1
                T.evaluate(0)
            else:
                A[i] = 2
    """)
    stmt = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse))
    got = analyses.can_remove_conditional(f, stmt)
    assert isinstance(got, Refuted)
    cex = got.counterexample
    assert cex.instances == (Instance("A[i] = 2", {"i": 14}),)
    assert cex.values == {"stored 1": 1}
    assert cex.description == (
        "the then branch differs from the other where not (i < 14): storing 1 changes 2; "
        "keeping the else branch instead: the else branch differs from the other where "
        "i < 14: storing 2 changes 1")
    assert remove_branching_through_overcompute(f) is f


def test_introduce_addition_of_zero():
    """TestIntroduceAdditionOfZero: at i = 0 the update adds 0."""
    rewrites('A: T.Buffer((1,), "int32")', """
        for i in T.serial(16):
            if i > 0:
                A[0] = A[0] + i * i
    """, """
        for i in T.serial(16):
            A[0] = A[0] + i * i
    """)


def test_introduce_addition_of_known_zero_in_buffer():
    """TestIntroduceAdditionOfKnownZeroInBuffer: the elements past 14 are assumed 0."""
    rewrites('A: T.Buffer((16,), "int32"), B: T.Buffer((1,), "int32")', """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        B[0] = 0
        for i in T.serial(16):
            if i < 14:
                B[0] = B[0] + A[i]
    """, """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        B[0] = 0
        for i in T.serial(16):
            B[0] = B[0] + A[i]
    """)


def test_introduce_overwritten_write():
    """TestIntroduceOverwrittenWrite (and TestIntroduceSupersetOverwrittenWrite, the same
    pair): the padding the first loop now writes, the second overwrites."""
    rewrites(A16, """
        for i in T.serial(16):
            if i < 14:
                A[i] = 1
        for i in T.serial(16):
            if i >= 14:
                A[i] = 2
    """, """
        for i in T.serial(16):
            A[i] = 1
        for i in T.serial(16):
            if i >= 14:
                A[i] = 2
    """)


def test_maintain_values_used_later():
    """TestMaintainValuesUsedLater: the second loop reads A[14] and A[15]."""
    assert_unchanged(remove_branching_through_overcompute, A16, """
        for i in T.serial(16):
            if i < 14:
                A[i] = 1
        for i in T.serial(16):
            if i >= 14:
                A[i] = A[i] + 1
    """)


def test_identify_overwritten_write_from_equivalent_expressions():
    """TestIdentifyOverwrittenWriteFromEquivalentExpressions: another nest names the same
    elements."""
    rewrites(A16, """
        for i in T.serial(16):
            if i < 14:
                A[i] = 1
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                A[4 * io + ii] = 2
    """, """
        for i in T.serial(16):
            A[i] = 1
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                A[4 * io + ii] = 2
    """)
