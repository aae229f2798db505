"""What TVM's Simplify does with known buffer values, as polypad's simplify does it.

Issue 9, point 8.  Each case follows a test of TVM's
``tests/python/tir-transform/test_tir_transform_simplify.py`` (those with
``propagate_knowns_to_prove_conditional`` or
``propagate_knowns_to_simplify_expressions``), or one the issue asks for
beside them, as a before/expected pair in polypad script checked three ways
(:mod:`tvm_support`).

Where polypad goes further than TVM the expected form says so: polypad's
simplify also replaces a load by a known constant value (TVM does that only
with ``propagate_knowns_to_simplify_expressions``), so ``A[0] = A[0] + 1``
after ``A[0] = 0`` becomes ``A[0] = 1``.

Partially proven values through gather and scatter, and constant folding,
are in ``test_tvm_capabilities_values.py``.
"""

from __future__ import annotations

from tvm_support import assert_rewrites, assert_unchanged

from polypad.transform import simplify

A1 = 'A: T.Buffer((1,), "int32")'
A16 = 'A: T.Buffer((16,), "int32")'
AB16 = 'A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")'


def rewrites(params, before, expected):
    return assert_rewrites(simplify, params, before, expected)


def unchanged(params, body):
    assert_unchanged(simplify, params, body)


# ---------------------------------------------------------------- buffer assumptions


def test_simplify_using_buffer_assumption():
    rewrites(A1, """
        T.assume(A[0] == 0)
        if A[0] == 0:
            A[0] = 42
    """, """
        T.assume(A[0] == 0)
        A[0] = 42
    """)


def test_simplify_using_buffer_assumption_in_loop():
    """The assumption holds element-wise; a later loop's condition reads the same elements."""
    rewrites(A16, """
        for i in T.serial(16):
            T.assume(A[i] == i)
        for i in T.serial(16):
            if A[i] < 100:
                A[i] = 0
    """, """
        for i in T.serial(16):
            T.assume(A[i] == i)
        for i in T.serial(16):
            A[i] = 0
    """)


def test_simplify_using_buffer_assumption_in_the_same_loop():
    rewrites(AB16, """
        for i in T.serial(16):
            T.assume(A[i] == 0)
            if A[i] == 0:
                B[i] = 1
            else:
                B[i] = 2
    """, """
        for i in T.serial(16):
            T.assume(A[i] == 0)
            B[i] = 1
    """)


def test_simplify_conditional_using_buffer_value():
    rewrites(A1, """
        A[0] = 0
        if A[0] == 0:
            A[0] = 42
    """, """
        A[0] = 0
        A[0] = 42
    """)


def test_simplify_conditional_in_loop_using_buffer_value():
    rewrites(AB16, """
        for i in T.serial(16):
            A[i] = i
        for j in T.serial(16):
            if A[j] == j:
                B[j] = 42
            else:
                B[j] = 100
    """, """
        for i in T.serial(16):
            A[i] = i
        for j in T.serial(16):
            B[j] = 42
    """)


# ---------------------------------------------------------------- partially known values


def test_simplify_using_partially_known_buffer_conditional():
    """Known where ``14 <= i`` only: that branch folds, the other keeps its test."""
    rewrites(A16, """
        for i in T.serial(16):
            if 14 <= i:
                T.assume(A[i] == 0)
        for i in T.serial(16):
            if 14 <= i:
                if A[i] == 0:
                    A[i] = 42
            else:
                if A[i] == 0:
                    A[i] = 100
    """, """
        for i in T.serial(16):
            if 14 <= i:
                T.assume(A[i] == 0)
        for i in T.serial(16):
            if 14 <= i:
                A[i] = 42
            else:
                if A[i] == 0:
                    A[i] = 100
    """)


def test_simplify_using_partially_known_buffer_expression():
    """As above, with the region stated inside the assumption."""
    rewrites(A16, """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        for i in T.serial(16):
            if 14 <= i:
                if A[i] == 0:
                    A[i] = 42
    """, """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        for i in T.serial(16):
            if 14 <= i:
                A[i] = 42
    """)


def test_only_the_known_part_of_a_condition_folds():
    """``A[i] == 0 and i >= 14`` under ``T.assume(i < 14 or A[i] == 0)``: the load's
    conjunct is true exactly where the other one holds, so only ``14 <= i`` is left."""
    rewrites(AB16, """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        for i in T.serial(16):
            if i >= 14 and A[i] == 0:
                B[i] = 1
    """, """
        for i in T.serial(16):
            T.assume(i < 14 or A[i] == 0)
        for i in T.serial(16):
            if i >= 14:
                B[i] = 1
    """)


def test_no_simplification_if_predicate_not_met():
    unchanged(A16, """
        for i in T.serial(16):
            if 14 <= i:
                T.assume(A[i] == 0)
        for i in T.serial(16):
            if i < 14:
                if A[i] == 0:
                    A[i] = 42
    """)


def test_no_simplify_using_invalidated_scoped_constraint():
    unchanged(A16, """
        for i in T.serial(16):
            if i == 0:
                A[i] = 0
            if A[i] == 0:
                A[i] = 42
    """)


def test_no_simplify_using_overwritten_value():
    unchanged(A16, """
        for i in T.serial(16):
            T.assume(A[i] == 0)
        for i in T.serial(16):
            if i == 0:
                A[i] = 5
            if A[i] == 0:
                A[i] = 42
    """)


def test_no_simplify_using_loop_dependent_buffer_value():
    unchanged('A: T.Buffer((16,), "int32"), B: T.Buffer((1,), "int32")', """
        B[0] = 0
        for i in T.serial(16):
            if B[0] < 10:
                B[0] = A[i] * 2 + B[0]
            else:
                B[0] = A[i] + B[0]
    """)


def test_simplify_prior_to_overwritten_value():
    rewrites(A16, """
        for i in T.serial(16):
            T.assume(A[i] == 0)
        for i in T.serial(16):
            if A[i] == 0:
                A[i] = 17
            if i == 0:
                A[i] = 5
            if A[i] == 0:
                A[i] = 42
    """, """
        for i in T.serial(16):
            T.assume(A[i] == 0)
        for i in T.serial(16):
            A[i] = 17
            if i == 0:
                A[i] = 5
            if A[i] == 0:
                A[i] = 42
    """)


# ---------------------------------------------------------------- propagated values


def test_simplify_element_wise_using_pre_loop_buffer_value():
    """``B[i]`` holds 0 until the element-wise loop writes it: the test folds, and so
    does the read in the store (TVM keeps ``+ B[i]``)."""
    rewrites(AB16, """
        for i in T.serial(16):
            B[i] = 0
        for i in T.serial(16):
            if B[i] < 10:
                B[i] = A[i] * 2 + B[i]
            else:
                B[i] = A[i] + B[i]
    """, """
        for i in T.serial(16):
            B[i] = 0
        for i in T.serial(16):
            B[i] = A[i] * 2
    """)


def test_simplify_with_element_wise_pre_loop_values():
    rewrites(AB16, """
        for i in T.serial(16):
            A[i] = i * 2
        for i in T.serial(16):
            if A[i] == 2 * i:
                B[i] = 1
            else:
                B[i] = 0
    """, """
        for i in T.serial(16):
            A[i] = i * 2
        for i in T.serial(16):
            B[i] = 1
    """)


def test_simplify_non_conditional():
    rewrites(A1, """
        A[0] = 0
        A[0] = A[0] + 1
    """, """
        A[0] = 0
        A[0] = 1
    """)


def test_simplify_buffer_store():
    rewrites(A1, """
        A[0] = 5
        A[0] = A[0] + 7
    """, """
        A[0] = 5
        A[0] = 12
    """)


def test_simplify_store_value_from_prior_knowledge():
    rewrites('A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")', """
        A[0] = 3
        B[0] = A[0] + 1
    """, """
        A[0] = 3
        B[0] = 4
    """)


def test_simplify_using_transitive_known_buffer_value():
    rewrites(A1, """
        T.assume(A[0] == 0)
        A[0] = A[0] + 1
        A[0] = A[0] + 1
        A[0] = A[0] + 1
        if A[0] == 3:
            A[0] = 42
    """, """
        T.assume(A[0] == 0)
        A[0] = 1
        A[0] = 2
        A[0] = 3
        A[0] = 42
    """)


def test_value_updated_twice_then_tested():
    rewrites('A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")', """
        A[0] = 5
        A[0] = A[0] + 2
        if A[0] == 7:
            B[0] = 1
        else:
            B[0] = 2
    """, """
        A[0] = 5
        A[0] = 7
        B[0] = 1
    """)


def test_later_equality_made_false_by_an_earlier_decrement():
    rewrites('A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")', """
        T.assume(A[0] == 5)
        A[0] = A[0] - 1
        if A[0] == 5:
            B[0] = 1
        else:
            B[0] = 2
    """, """
        T.assume(A[0] == 5)
        A[0] = 4
        B[0] = 2
    """)


def test_altered_buffer_contents():
    """The branch's ``A[0] == n`` no longer holds after the increment; what is known
    instead is ``A[0] == n + 1``, which decides the inner test the other way."""
    rewrites('A: T.Buffer((1,), "int32"), n: T.int32', """
        if A[0] == n:
            A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 5
            else:
                A[0] = 10
    """, """
        if A[0] == n:
            A[0] = n + 1
            A[0] = 10
    """)


def test_possibly_altered_buffer_contents():
    """Whether ``A[0]`` changed depends on ``m``: the inner test stays."""
    rewrites('A: T.Buffer((1,), "int32"), n: T.int32, m: T.int32', """
        if A[0] == n:
            if m == 0:
                A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 5
            else:
                A[0] = 10
    """, """
        if A[0] == n:
            if m == 0:
                A[0] = n + 1
            if A[0] == n:
                A[0] = 5
            else:
                A[0] = 10
    """)
