"""simplify: RFC 0077's examples, context simplification, and what must not change."""

import numpy as np
import pytest
from pass_support import (
    assert_same_results,
    checked,
    differs,
    load,
    numba_kernel,
    random_args,
    transformed,
)

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse
from polypad.transform import simplify

HEADER = """
@T.prim_func
def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
"""


def func(body: str):
    return parse(HEADER + body)


def simp(f):
    return checked(simplify(f))


# ---------------------------------------------------------------- RFC examples


def test_rfc_scalar_assumption():
    """`n // 8` is 0 under T.assume(n >= 0 and n < 8)."""
    got = transformed("simplify_assume_scalar_before", "simplify")
    assert_structural_equal(got, load("simplify_assume_scalar_after"))
    for n_value in range(8):
        f = load("simplify_assume_scalar_before")
        assert_same_results(f, got, random_args(f, n_value, n=n_value))


@pytest.mark.numba
def test_rfc_scalar_assumption_numba():
    kernel = numba_kernel("simplify_assume_scalar_before", "simplify")
    f = load("simplify_assume_scalar_before")
    for n_value in (0, 7):
        assert_same_results(f, kernel, random_args(f, 0, n=n_value))


def buffer_assume_args(f, seed):
    a, b = random_args(f, seed)
    b[0] = 0
    if seed % 2:
        a[0] = 0  # take the branch
    return [a, b]


def test_rfc_buffer_assumption_replaces_only_the_first_read():
    """RFC: `A[0] == B[0]` becomes `A[0] == 0`; the reads of B[0] in the loop stay,
    since every iteration after the first sees the value the previous one stored."""
    got = transformed("simplify_assume_buffer_before", "simplify")
    assert_structural_equal(got, load("simplify_assume_buffer_after"))
    f = load("simplify_assume_buffer_before")
    for seed in range(4):
        assert_same_results(f, got, buffer_assume_args(f, seed))


@pytest.mark.parametrize("kind", ["identical", "complementary"])
def test_rfc_merge_conditionals_keeps_the_first_form(kind):
    got = transformed(f"simplify_merge_{kind}_before", "simplify")
    assert_structural_equal(got, load(f"simplify_merge_{kind}_after"))
    f = load(f"simplify_merge_{kind}_before")
    for seed in range(2):
        assert_same_results(f, got, random_args(f, seed))


def test_rfc_data_dependent_conditionals_are_not_merged():
    f = load("simplify_data_dependent_before")
    assert simp(f) is f
    # What merging would give is wrong: A[i] = -0.5 becomes 0.5, not 0.0.
    args = [np.full(16, -0.5, "float32"), np.zeros(16, "float32")]
    assert differs(f, load("simplify_data_dependent_incorrect"), args)


def test_rfc_explicit_default_producer_step3_to_step4():
    """RFC producer/consumer walk: the complementary padding conditionals merge."""
    got = transformed("explicit_default_step3", "simplify", "producer")
    assert_structural_equal(got, load("explicit_default_step4", "producer"))
    f = load("explicit_default_step3", "producer")
    assert_same_results(f, got, random_args(f, 0))


@pytest.mark.parametrize("example, func_name", [
    ("row_summation_split", None),
    ("explicit_default_step4", "consumer"),
])
def test_rfc_guard_on_padding_stays(example, func_name):
    """Removing `if 4*jo + ji < 14` (or `4*io + ii < 14`) is overcompute, a scheduling
    decision (RFC 0077, Overcompute vs Branching): simplify must not do it, even where
    an assumption says the padding holds the reduction's identity."""
    f = load(example, func_name)
    assert simp(f) is f


IMPLICIT_MERGED = """
@T.prim_func
def func(
    A: T.Buffer[(3, 8), "float32"],
    F: T.Buffer[3, "float32"],
    B: T.Buffer[(3, 8), "float32"],
):
    for io, ii in T.grid(3, 8):
        T.assume(
            (io == 0 and ii >= 2)
            or (io > 0 and io < 2)
            or (io == 2 and ii < 2)
            or A[io, ii] == 0.0
        )
    for io, ii in T.grid(3, 8):
        Bi = 8 * io + ii - 2
        if 0 <= Bi < 18:
            B[io, ii] = 0.0
        if (io == 0 and ii < 2) or (io == 2 and ii >= 4):
            B[io, ii] = 0.0
    for io, ii in T.grid(3, 8):
        for fi in T.serial(3):
            if 0 <= 8 * io + ii - 2 < 16 and 0 <= 8 * io + ii + fi - 2 < 18:
                B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                    B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                )
"""


def test_rfc_implicit_default_step4_to_step5():
    """RFC step 4 -> 5: after merging the two loops that write B (the schedule's
    merge_adjacent_loops, done here by hand), the complementary conditions merge, the
    equal branches collapse and the unused let goes, leaving step 5's `B[io, ii] = 0.0`.
    In the accumulation loop `0 <= 8*io + ii + fi - 2 < 18` follows from the conjuncts
    before it (0 <= fi < 3), so it is dropped; the RFC's step 5 keeps it."""
    got = simp(parse(IMPLICIT_MERGED))
    expected = IMPLICIT_MERGED.replace("""        Bi = 8 * io + ii - 2
        if 0 <= Bi < 18:
            B[io, ii] = 0.0
        if (io == 0 and ii < 2) or (io == 2 and ii >= 4):
            B[io, ii] = 0.0
""", """        B[io, ii] = 0.0
""").replace(" and 0 <= 8 * io + ii + fi - 2 < 18", "")
    assert_structural_equal(got, parse(expected))
    step5 = load("implicit_default_step5")
    for seed in range(2):
        args = random_args(step5, seed)
        args[0][0, :2] = 0.0
        args[0][2, 2:] = 0.0
        assert_same_results(step5, got, args)


# ---------------------------------------------------------------- context


def test_condition_implied_by_the_loop_range_disappears():
    f = func("""
    for i in T.serial(14):
        if i < 20:
            A[i] = 1.0
        if i >= 14:
            B[i] = 2.0
        else:
            B[i] = 3.0
""")
    assert_structural_equal(simp(f), func("""
    for i in T.serial(14):
        A[i] = 1.0
        B[i] = 3.0
"""))


def test_conjuncts_keep_their_form():
    f = func("""
    for i in T.serial(16):
        if i < 20 and i % 2 == 0 and (i < 8 or i > 100):
            A[i] = 1.0
""")
    assert_structural_equal(simp(f), func("""
    for i in T.serial(16):
        if i % 2 == 0 and i < 8:
            A[i] = 1.0
"""))


def test_division_made_redundant_by_the_range_is_dropped():
    """ISL's gist of `i // 8 == 0` in 0 <= i < 16 is `i < 8`; `i % 2 == 0` stays."""
    f = func("""
    for i in T.serial(16):
        if i // 8 == 0 and i % 2 == 0:
            A[i] = 1.0
""")
    assert_structural_equal(simp(f), func("""
    for i in T.serial(16):
        if i < 8 and i % 2 == 0:
            A[i] = 1.0
"""))


def test_assumed_empty_loop_is_removed():
    f = func("""
    T.assume(n <= 0)
    for i in T.serial(n):
        A[i] = 1.0
    B[0] = 1.0
""")
    assert_structural_equal(simp(f), func("""
    T.assume(n <= 0)
    B[0] = 1.0
"""))


def test_equal_branches_collapse():
    f = func("""
    for i in T.serial(16):
        if A[i] > 0.0:
            B[i] = 1.0
        else:
            B[i] = 1.0
""")
    got = simp(f)
    assert_structural_equal(got, func("""
    for i in T.serial(16):
        B[i] = 1.0
"""))
    assert_same_results(f, got, random_args(f, 0, n=0))


def test_prover_decides_a_condition_on_data():
    f = func("""
    T.assume(A[0] > 0.0)
    if A[0] > 0.0:
        B[0] = 1.0
    if A[0] <= 0.0:
        B[1] = 1.0
""")
    assert_structural_equal(simp(f), func("""
    T.assume(A[0] > 0.0)
    B[0] = 1.0
"""))


def test_value_stored_earlier_is_known():
    f = func("""
    A[0] = 2.0
    B[0] = A[0]
    for i in T.serial(16):
        A[0] = A[0] + B[i]
""")
    got = simp(f)
    assert_structural_equal(got, func("""
    A[0] = 2.0
    B[0] = 2.0
    for i in T.serial(16):
        A[0] = A[0] + B[i]
"""))
    assert_same_results(f, got, random_args(f, 0, n=0))


def test_unused_let_is_removed():
    f = func("""
    for i in T.serial(16):
        k = i * 2
        if i < 100:
            A[i] = 1.0
        else:
            A[i] = B[k]
""")
    assert_structural_equal(simp(f), func("""
    for i in T.serial(16):
        A[i] = 1.0
"""))


@pytest.mark.parametrize("body", [
    # nothing known about A: Unknown decides nothing
    """
    if A[0] > 0.0:
        B[0] = 1.0
""",
    # the assumption is invalidated by a store that may write A[0]
    """
    T.assume(A[0] == 0.0)
    A[n] = B[0]
    if A[0] == 0.0:
        B[1] = 1.0
""",
    # identical conditions on data are still not merged
    """
    if B[0] < 0.0:
        A[0] = 1.0
    if B[0] < 0.0:
        A[1] = 1.0
""",
    # assumptions are never rewritten, even with what they themselves imply
    """
    T.assume(n >= 0 and n < 8)
    T.assume(n // 8 == 0)
""",
])
def test_no_change(body):
    f = func(body)
    assert simp(f) is f


def test_identical_affine_conditions_with_different_forms_merge():
    f = func("""
    for i in T.serial(16):
        if i < n:
            A[i] = 1.0
        if n > i:
            B[i] = 1.0
""")
    assert_structural_equal(simp(f), func("""
    for i in T.serial(16):
        if i < n:
            A[i] = 1.0
            B[i] = 1.0
"""))


def test_simplify_leaves_nothing_when_the_body_is_dead():
    f = func("""
    for i in T.serial(16):
        if i > 20:
            A[i] = 1.0
""")
    assert isinstance(simp(f).body, n.Evaluate)


# The fuzz (seed 0, case 1964): a fact about the values stored at A[(n + i1) % 8] holds
# where isl writes `n + 2147483648 >= ...`; turning that into IR raised DTypeError (2**31
# is no int32).  It is written in int64 now, and `if n + 1 > n` goes: no wrap under the
# assumption.
NEAR_INT32_MIN = '''
@T.prim_func
def func(A: T.Buffer((8,), "float32"), B: T.Buffer((4, 4), "int32"),
         C: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(n <= -2147483641)
    for i1 in T.serial(4):
        A[(n + i1) % 8] = T.float32(n + i1)
        if n + 1 > n:
            B[3 - i1, (3 * n + 0) % 4] = B[3 - i1, (3 * n + 0) % 4]
            for i2 in T.serial(4):
                A[(i2 + 2) % 8] = A[(i2 + 2) % 8] + 0.0
                B[i1, 0] = T.int32(A[i1]) + T.int32(A[2 * i1])
    for i3 in T.serial(4):
        A[(n - i3) % 8] = T.float32(n - i3)
        if (n + i3) % 8 < 4:
            A[i3 + i3] = A[i3]
    A[(1) % 8] = A[(n + 2) % 8] + T.float32(B[3, 0])
    C[0] = T.if_then_else((3) // 3 <= -2, 1, 0)
'''

NEAR_INT32_MIN_SIMPLIFIED = '''
@T.prim_func
def func(A: T.Buffer((8,), "float32"), B: T.Buffer((4, 4), "int32"),
         C: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(n <= -2147483641)
    for i1 in T.serial(4):
        A[(n + i1) % 8] = T.Cast("float32", n + i1)
        B[3 - i1, 3 * n % 4] = B[3 - i1, 3 * n % 4]
        for i2 in T.serial(4):
            A[i2 + 2] = A[i2 + 2] + 0.0
            B[i1, 0] = T.Cast("int32", A[i1]) + T.Cast("int32", A[2 * i1])
    for i3 in T.serial(4):
        A[(n - i3) % 8] = T.Cast("float32", n - i3)
        if (n + i3) % 8 < 4:
            A[i3 + i3] = A[i3]
    A[1] = A[(n + 2) % 8] + T.Cast("float32", B[3, 0])
    C[0] = 0
'''


def _near_int32_min_args(seed: int) -> list:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(-2**31, -2147483641 + 1))
    return [rng.integers(-3, 4, 8).astype("float32"), rng.integers(-3, 4, (4, 4)).astype("int32"),
            rng.integers(-3, 4, 4).astype("int32"), n]


def test_a_fact_near_the_end_of_int32_is_written_in_int64():
    f = parse(NEAR_INT32_MIN)
    got = simplify(f)
    assert_structural_equal(got, parse(NEAR_INT32_MIN_SIMPLIFIED))
    for seed in range(6):
        assert_same_results(f, got, _near_int32_min_args(seed))


@pytest.mark.numba
def test_a_fact_near_the_end_of_int32_numba():
    f = parse(NEAR_INT32_MIN)
    kernel = codegen.build(simplify(f))
    for seed in range(3):
        assert_same_results(f, kernel, _near_int32_min_args(seed))
