"""What TVM's RemoveNoOp does with its dataflow analysis, as polypad's remove_no_op does it.

Issue 9, point 8.  Each case follows a test of TVM's
``tests/python/tir-transform/test_tir_transform_remove_no_op.py`` (or one
the issue asks for beside it), written as a before/expected pair in
polypad script and checked three ways (:mod:`tvm_support`): the exact
result, verified IR, and the same buffers on the reference executor and
the Numba kernel for random inputs that satisfy the assumptions.

The simplifier's cases (buffer assumptions, known and partially known
values, folding) are in ``test_tvm_capabilities_simplify.py``.
"""

from __future__ import annotations

import pytest
from tvm_support import assert_rewrites, assert_unchanged

from polypad.transform import remove_no_op

A16 = 'A: T.Buffer((16,), "int32")'
AB16 = 'A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")'


def rewrites(params, before, expected):
    return assert_rewrites(remove_no_op, params, before, expected)


def unchanged(params, body):
    assert_unchanged(remove_no_op, params, body)


# ---------------------------------------------------------------- unused writes


def test_remove_unused_write():
    """Two writes in a row: the first is never read."""
    rewrites(A16, """
        for i in T.serial(16):
            A[i] = 100
            A[i] = 42
    """, """
        for i in T.serial(16):
            A[i] = 42
    """)


def test_keep_the_side_effects_of_an_unused_write():
    """The dead store goes; the store beside it whose value is read stays.

    TVM keeps an extern call of a dead store as ``T.evaluate``; polypad
    expressions have no side effects, so what must survive is the rest of
    the statement sequence: ``B[i] = 1`` is read by the last store.
    """
    rewrites(AB16, """
        for i in T.serial(16):
            A[i] = 100
            B[i] = 1
            A[i] = B[i] + 41
    """, """
        for i in T.serial(16):
            B[i] = 1
            A[i] = B[i] + 41
    """)


def test_dead_store_to_a_temporary_beside_live_ones():
    """Only the last write of the temporary is dead: it is freed unread."""
    rewrites(AB16, """
        C = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            C[i] = A[i] * 2
            B[i] = C[i] + 1
            C[i] = 0
    """, """
        C = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            C[i] = A[i] * 2
            B[i] = C[i] + 1
    """)


def test_keep_first_write_when_used():
    unchanged(A16, """
        for i in T.serial(16):
            A[i] = 100
            A[i] = A[i] + 1
    """)


def test_loop_that_only_writes_dead_values_goes():
    rewrites(AB16, """
        C = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            C[i] = A[i]
        for i in T.serial(16):
            B[i] = A[i]
    """, """
        for i in T.serial(16):
            B[i] = A[i]
    """)


def test_remove_write_into_temporary_after_its_last_read():
    """TVM marks this one "not implemented yet": the temporary's last loop is dead."""
    rewrites('A: T.Buffer((16,), "int32"), C: T.Buffer((1,), "int32")', """
        B = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            B[i] = A[i]
        C[0] = 0
        for i in T.serial(16):
            C[0] = C[0] + B[i]
        for i in T.serial(16):
            B[i] = 0
    """, """
        B = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            B[i] = A[i]
        C[0] = 0
        for i in T.serial(16):
            C[0] = C[0] + B[i]
    """)


def test_keep_used_write_into_temporary():
    unchanged('B: T.Buffer((16,), "int32")', """
        A = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            A[i] = 0
        for i in T.serial(16):
            B[i] = A[i]
    """)


# ---------------------------------------------------------------- overwritten loops


def test_remove_overwritten_loop():
    rewrites(A16, """
        for i in T.serial(16):
            A[i] = 100
        for i in T.serial(16):
            A[i] = 42
    """, """
        for i in T.serial(16):
            A[i] = 42
    """)


def test_remove_overwritten_subloop():
    """The first loop writes a subset of what the second writes."""
    rewrites(A16, """
        for i in T.serial(4, 12):
            A[i] = 100
        for i in T.serial(16):
            A[i] = 42
    """, """
        for i in T.serial(16):
            A[i] = 42
    """)


def test_remove_overwritten_sub_loop_of_a_nest():
    """Within each iteration of ``i``, the first inner loop is overwritten by the second."""
    rewrites('A: T.Buffer((4, 4), "int32")', """
        for i in T.serial(4):
            for j in T.serial(2):
                A[i, j] = 100
            for j in T.serial(4):
                A[i, j] = 42 + i
    """, """
        for i in T.serial(4):
            for j in T.serial(4):
                A[i, j] = 42 + i
    """)


def test_keep_partially_overwritten_loop():
    unchanged(A16, """
        for i in T.serial(16):
            A[i] = 100
        for i in T.serial(16):
            if i < 12:
                A[i] = 42
    """)


def test_keep_loop_whose_values_are_read_before_the_overwrite():
    unchanged(AB16, """
        for i in T.serial(16):
            A[i] = 100
        for i in T.serial(16):
            B[i] = A[15 - i]
        for i in T.serial(16):
            A[i] = 42
    """)


def test_remove_separated_overwrites():
    """An independent loop between the two writes does not keep the first alive."""
    rewrites(AB16, """
        for i in T.serial(16):
            A[i] = 100
        for i in T.serial(16):
            B[i] = 0
        for i in T.serial(16):
            A[i] = 42
    """, """
        for i in T.serial(16):
            B[i] = 0
        for i in T.serial(16):
            A[i] = 42
    """)


def test_remove_separated_overwrite_of_predicated_loop():
    """TVM marks this one "not implemented yet": the loop between writes other elements."""
    rewrites(A16, """
        for i in T.serial(16):
            if i < 12:
                A[i] = 100
        for i in T.serial(16):
            if i > 12:
                A[i] = 15
        for i in T.serial(16):
            if i < 12:
                A[i] = 42
    """, """
        for i in T.serial(16):
            if i > 12:
                A[i] = 15
        for i in T.serial(16):
            if i < 12:
                A[i] = 42
    """)


# ---------------------------------------------------------------- predicated loops


def test_remove_overwritten_predicated_loop_with_identical_condition():
    rewrites(A16, """
        for i in T.serial(16):
            if i < 12:
                A[i] = 100
        for i in T.serial(16):
            if i < 12:
                A[i] = 42
    """, """
        for i in T.serial(16):
            if i < 12:
                A[i] = 42
    """)


def test_remove_overwritten_predicated_loop_with_provable_condition():
    """``i < 10`` is within ``i // 4 < 3`` (that is, ``i < 12``)."""
    rewrites(A16, """
        for i in T.serial(16):
            if i < 10:
                A[i] = 100
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = 42
    """, """
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = 42
    """)


def test_keep_predicated_loop_the_later_condition_does_not_cover():
    unchanged(A16, """
        for i in T.serial(16):
            if i < 13:
                A[i] = 100
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = 42
    """)


# ---------------------------------------------------------------- known values


def test_remove_writing_of_known_value():
    rewrites(A16, """
        for i in T.serial(16):
            A[i] = i
        A[4] = 4
    """, """
        for i in T.serial(16):
            A[i] = i
    """)


def test_keep_writing_of_a_different_value():
    unchanged(A16, """
        for i in T.serial(16):
            A[i] = i
        A[4] = 5
    """)


def test_remove_read_write():
    rewrites('A: T.Buffer((1,), "int32")', "A[0] = A[0]", "0")


def test_keep_read_write_to_different_indices():
    unchanged(A16, """
        for i in T.serial(15):
            A[i] = A[i + 1]
    """)


def test_remove_read_write_same_index_different_expression():
    """The let and the loops go with the store: they do nothing else."""
    rewrites(A16, """
        for io, ii in T.grid(4, 4):
            i = 4 * io + ii
            A[4 * io + ii] = A[i]
    """, "0")


def test_remove_read_write_same_index_using_constraint():
    """In the else branch ``i == 0``, so ``A[i] = A[0]`` writes back what it reads."""
    rewrites(A16, """
        for i in T.serial(16):
            if i != 0:
                A[i] = A[i - 1]
            else:
                A[i] = A[0]
    """, """
        for i in T.serial(16):
            if i != 0:
                A[i] = A[i - 1]
    """)


def test_remove_store_of_an_assumed_value_in_a_loop():
    rewrites(A16, """
        for i in T.serial(16):
            T.assume(i < 12 or A[i] == 0)
        for i in T.serial(12, 16):
            A[i] = 0
    """, """
        for i in T.serial(16):
            T.assume(i < 12 or A[i] == 0)
    """)


# ---------------------------------------------------------------- duplicates


def test_keep_one_of_duplicate_loops():
    """Each loop alone is a no-op (the first is overwritten, the second writes what is
    there), but removing both would lose the values: exactly one must stay."""
    rewrites(A16, """
        for i in T.serial(16):
            A[i] = i
        for i in T.serial(16):
            A[i] = i
    """, """
        for i in T.serial(16):
            A[i] = i
    """)


def test_keep_one_of_duplicate_predicated_loops():
    rewrites(A16, """
        for i in T.serial(16):
            if i < 12:
                A[i] = 2 * i
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = i * 2
    """, """
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = i * 2
    """)


@pytest.mark.parametrize("n_copies", [3])
def test_keep_one_of_several_duplicate_stores(n_copies):
    body = "\n".join(["A[3] = 7"] * n_copies)
    rewrites(A16, body, "A[3] = 7")


def test_remove_unused_temporary():
    """TVM marks this one "not implemented yet": an allocation nothing uses."""
    rewrites(A16, """
        B = T.alloc_buffer((16,), "int32")
        for i in T.serial(16):
            A[i] = 1
    """, """
        for i in T.serial(16):
            A[i] = 1
    """)
