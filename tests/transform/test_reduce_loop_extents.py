"""reduce_loop_extents: RFC 0077's example and the loops it must leave alone."""

import numpy as np
import pytest
from pass_support import (
    assert_same_results,
    checked,
    load,
    numba_kernel,
    random_args,
    transformed,
)

import codegen
from polypad.errors import AssertionFailedError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse
from polypad.transform import hoist_expression, reduce_loop_extents

HEADER = """
@T.prim_func
def func(A: T.Buffer((16,), "float32"), B: T.Buffer((4, 4), "float32"), n: T.int32):
"""


def func(body: str):
    return parse(HEADER + body)


def reduce(f):
    return checked(reduce_loop_extents(f))


# ---------------------------------------------------------------- RFC example


@pytest.mark.parametrize("start", ["reduce_extents_before", "reduce_extents_hoisted"])
def test_rfc_example_ends_as_one_two_iteration_loop(start):
    """RFC: before -> (hoist) -> hoisted -> (reduce) -> after; ISL finds the active
    iterations with or without the hoisting step."""
    got = reduce(load(start))
    assert_structural_equal(got, load("reduce_extents_after"))
    for seed in range(3):
        assert_same_results(load("reduce_extents_before"), got, random_args(got, seed))


def test_rfc_pipeline_hoist_then_reduce():
    got = reduce(hoist_expression(load("reduce_extents_before")))
    assert_structural_equal(got, load("reduce_extents_after"))


@pytest.mark.numba
def test_rfc_example_numba():
    kernel = numba_kernel("reduce_extents_before", "reduce_loop_extents")
    for seed in range(2):
        f = load("reduce_extents_before")
        assert_same_results(f, kernel, random_args(f, seed))


def test_rfc_padding_loop_of_elementwise_overcompute():
    """The loop that writes B's padding (4*io + ii >= 14) runs io = 3, ii in 2..3 only."""
    got = transformed("elementwise_overcompute", "reduce_loop_extents")
    assert_structural_equal(got, parse("""
@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())
    for io, ii in T.grid(4, 4):
        B[io, ii] = 2 * A[io, ii]
    io = 3
    for ii in T.serial(2, 4):
        B[io, ii] = T.undef()
"""))


def test_rfc_elementwise_sequential_padding_loop():
    """After sequential_buffer_access the padding loop narrows the same way; the compute
    loop's guard needs io-dependent bounds for ii (piecewise), so that loop stays."""
    got = transformed("elementwise_sequential", "reduce_loop_extents")
    assert_structural_equal(got, parse("""
@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = 2 * A[io, ii]
    io = 3
    for ii in T.serial(2, 4):
        B[io, ii] = T.undef()
"""))
    f = load("elementwise_sequential")
    assert_same_results(f, got, random_args(f, 0))


# ---------------------------------------------------------------- general shapes


def test_data_dependent_guard_is_kept_and_affine_part_used():
    f = func("""
    for i in T.serial(16):
        if i < 8 and A[i] > 0.0:
            A[i] = 0.0
""")
    got = reduce(f)
    assert_structural_equal(got, func("""
    for i in T.serial(8):
        if A[i] > 0.0:
            A[i] = 0.0
"""))
    for seed in range(3):
        assert_same_results(f, got, random_args(f, seed, n=0))


def test_symbolic_bounds_use_min_and_max():
    f = func("""
    for i in T.serial(16):
        if i >= n:
            A[i] = 1.0
""")
    got = reduce(f)
    assert_structural_equal(got, func("""
    for i in T.serial(T.max(0, n), 16):
        A[i] = 1.0
"""))
    for n_value in (-3, 0, 5, 16, 20):
        assert_same_results(f, got, random_args(f, 0, n=n_value))


def test_lower_bound_from_an_outer_loop():
    f = func("""
    for i, j in T.grid(4, 4):
        if j > i:
            B[i, j] = 1.0
""")
    got = reduce(f)
    assert_structural_equal(got, func("""
    for i in T.serial(3):
        for j in T.serial(i + 1, 4):
            B[i, j] = 1.0
"""))
    assert_same_results(f, got, random_args(f, 0, n=0))


def test_loop_that_does_nothing_is_removed():
    f = func("""
    for i in T.serial(16):
        if i > 20:
            A[i] = 1.0
    A[0] = 2.0
""")
    assert_structural_equal(reduce(f), func("""
    A[0] = 2.0
"""))
    only = func("""
    for i in T.serial(16):
        if i > 20:
            A[i] = 1.0
""")
    assert isinstance(reduce(only).body, n.Evaluate)


@pytest.mark.parametrize("body", [
    # else branch: every iteration does something
    """
    for i in T.serial(16):
        if i < 8:
            A[i] = 0.0
        else:
            A[i] = 1.0
""",
    # vectorized loops keep their width (RFC: serial and parallel loops only)
    """
    for i in T.vectorized(16):
        if i < 8:
            A[i] = 0.0
""",
    # i == n: the single-iteration range would leave [0, 16) for n outside it
    """
    for i in T.serial(16):
        if i == n:
            A[i] = 0.0
""",
    # piecewise bounds (io == 0 starts at 2, the others at 0) are left alone
    """
    for io, ii in T.grid(4, 4):
        if io > 0 or ii >= 2:
            B[io, ii] = 0.0
""",
    # assumptions count as statements: facts are never dropped
    """
    for i in T.serial(16):
        T.assume(i < 8 or A[i] == 0.0)
""",
])
def test_loops_that_stay(body):
    f = func(body)
    assert reduce(f) is f


def test_parallel_loop_is_reduced_and_stays_parallel():
    f = func("""
    for i in T.parallel(16):
        if i >= 4:
            A[i] = 1.0
""")
    assert_structural_equal(reduce(f), func("""
    for i in T.parallel(4, 16):
        A[i] = 1.0
"""))


def test_bounds_that_may_wrap_are_not_proposed():
    # The tight range [1, min(n, 3)) has extent `min(n, 3) - 1`, which wraps at
    # n = -2**31: isl cannot read it, so the candidate is dropped, not crashed on.
    f = func("""
    for i in T.serial(3):
        if 0 <= 2 * i - 1 and i < n:
            A[2 * i - 1] = A[i + 3] + 2.0
""")
    got = reduce(f)
    for n_value in (-2**31, -3, 0, 2, 5):
        assert_same_results(f, got, random_args(f, 0, n=n_value))


# ------------------------------------------------- statements the model does not see


@pytest.mark.parametrize("body", [
    # an assert may raise: its iterations (and those in an else branch) all run
    """
    for i in range(8):
        assert i < n, "i must be below n"
        if i < 4:
            A[i] = 1.0
""", """
    for i in range(8):
        if i < 4:
            A[i] = 1.0
        else:
            assert i < n, "i must be below n"
""",
    # an opaque call may do anything in every iteration
    """
    for i in range(8):
        if i < 4:
            A[i] = 1.0
        T.evaluate(T.call_extern("int32", "trace", i))
""",
    # the body of an attribute: the loop vanished, stores and all
    """
    for i in range(8):
        with T.attr(0, "pragma_unroll", 1):
            if i < 4:
                A[i] = 1.0
""",
])
def test_a_loop_holding_a_statement_the_model_does_not_see_keeps_its_extent(body):
    f = func(body)
    assert_structural_equal(reduce(f), f)


def test_an_assert_in_the_dropped_iterations_still_raises():
    f = func("""
    for i in range(8):
        assert i < n, "i must be below n"
        if i < 4:
            A[i] = 1.0
""")
    for target in ("python", "numba"):
        kernel = codegen.build(reduce(f), target=target)
        with pytest.raises(AssertionFailedError, match="i must be below n"):
            kernel(np.zeros(16, "float32"), np.zeros((4, 4), "float32"), 5)
        a = np.zeros(16, "float32")
        kernel(a, np.zeros((4, 4), "float32"), 8)
        assert a.tolist() == [1.0] * 4 + [0.0] * 12
