"""simplify merges a conditional with one alone in a block (``transform_layout``'s
pad-value stage): merged only where the conditions are proved identical or
complementary, never where the first body writes what the condition reads.

Each case runs the original and the result on random inputs with the reference
executor and compares every buffer.
"""

import numpy as np
import pytest
from pass_support import assert_same_results, checked, differs, random_args

from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse
from polypad.transform import simplify

HEADER = """
@T.prim_func
def func(A: T.Buffer(({size},), "int32"), B: T.Buffer(({size},), "int32")):
"""


def func(body: str, size: int = 16):
    return parse(HEADER.format(size=size) + body)


def simp(f):
    return checked(simplify(f))


def assert_runs_alike(before, after, seeds=range(4)) -> None:
    for seed in seeds:
        assert_same_results(before, after, random_args(before, seed))


# ---------------------------------------------------------------- merged


# (logical extent, split factor): the pad store covers the last, partial tile.
PADDED = [(14, 4), (13, 4), (7, 3), (30, 8), (17, 6)]


@pytest.mark.parametrize(("extent", "split"), PADDED)
def test_pad_block_merges_into_the_else_branch(extent, split):
    """RFC 0077's explicit default producer, at several sizes: the block keeps its name
    and moves into the branch its condition selected."""
    tiles = -(-extent // split)
    head = f"""
@T.prim_func
def producer(A: T.Buffer(({tiles}, {split}), "int32")):
    for io, ii in T.grid({tiles}, {split}):
        if {split} * io + ii < {extent}:
            A[io, ii] = 1000 + ({split} * io + ii)
"""
    f = parse(head + f"""
        with T.block("A_padding"):
            if {split} * io + ii >= {extent}:
                A[io, ii] = 0
""")
    got = simp(f)
    assert_structural_equal(got, parse(head + """
        else:
            with T.block("A_padding"):
                A[io, ii] = 0
"""))
    assert_runs_alike(f, got)


def test_block_first_then_plain_conditional():
    f = func("""
    for i in T.serial(16):
        with T.block("P"):
            if i >= 10:
                A[i] = 0
        if i < 10:
            A[i] = B[i] + 1
""")
    got = simp(f)
    assert_structural_equal(got, func("""
    for i in T.serial(16):
        if i >= 10:
            with T.block("P"):
                A[i] = 0
        else:
            A[i] = B[i] + 1
"""))
    assert_runs_alike(f, got)


def test_conditions_proved_equal_not_textually():
    """`i // 8 >= 1` is the complement of `i < 8` on 0 <= i < 16, and `i % 8 == i` is the
    same set as `i < 8`: one merge is complementary, the next identical."""
    f = func("""
    for i in T.serial(16):
        if i < 8:
            A[i] = 1
        with T.block("P"):
            if i // 8 >= 1:
                A[i] = 2
        with T.block("Q"):
            with T.block("R"):
                if i % 8 == i:
                    B[i] = B[i] + 3
""")
    got = simp(f)
    assert_structural_equal(got, func("""
    for i in T.serial(16):
        if i < 8:
            A[i] = 1
            with T.block("Q"):
                with T.block("R"):
                    B[i] = B[i] + 3
        else:
            with T.block("P"):
                A[i] = 2
"""))
    assert_runs_alike(f, got)


def test_complementary_only_under_the_enclosing_condition():
    """`i < 4` and `i >= 6` are complementary only where `i < 4 or i >= 6` (the outer
    guard) holds."""
    f = func("""
    for i in T.serial(16):
        if i < 4 or i >= 6:
            if i < 4:
                A[i] = 1
            with T.block("P"):
                if i >= 6:
                    A[i] = 2
""")
    got = simp(f)
    assert_structural_equal(got, func("""
    for i in T.serial(16):
        if i < 4 or i >= 6:
            if i < 4:
                A[i] = 1
            else:
                with T.block("P"):
                    A[i] = 2
"""))
    assert_runs_alike(f, got)


# ---------------------------------------------------------------- not merged


def test_condition_reading_what_the_first_body_writes_is_not_merged():
    """The second condition, evaluated after the first body, sees A[i] it wrote: the
    textual complements `A[i] < 0` and `A[i] >= 0` both hold for A[i] = -1."""
    f = func("""
    for i in T.serial(16):
        if A[i] < 0:
            A[i] = A[i] + 2
        with T.block("P"):
            if A[i] >= 0:
                B[i] = 7
""")
    assert simp(f) is f
    wrong = func("""
    for i in T.serial(16):
        if A[i] < 0:
            A[i] = A[i] + 2
        else:
            with T.block("P"):
                B[i] = 7
""")
    args = [np.full(16, -1, "int32"), np.zeros(16, "int32")]
    assert differs(f, wrong, args)


@pytest.mark.parametrize(("first", "second"), [
    ("i < 8", "i >= 9"),        # i == 8 in neither
    ("i < 8", "i >= 6"),        # 6 <= i < 8 in both
    ("i < 8", "i % 2 == 0"),    # neither the same nor the complement
    ("i < n", "i >= 8"),        # complementary only when n == 8
])
def test_conditions_not_complementary_are_not_merged(first, second):
    f = parse(f"""
@T.prim_func
def func(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), n: T.int32):
    for i in T.serial(16):
        if {first}:
            A[i] = 1
        with T.block("P"):
            if {second}:
                A[i] = 2
""")
    assert simp(f) is f


@pytest.mark.parametrize("body", [
    # the block also holds a store, which runs whatever the condition
    """
        with T.block("P"):
            if i >= 8:
                A[i] = 2
            B[i] = 3
""",
    # the block's `if` has an else: its name would have to go to both branches
    """
        with T.block("P"):
            if i >= 8:
                A[i] = 2
            else:
                B[i] = 3
""",
])
def test_block_holding_more_than_the_conditional_is_not_merged(body):
    f = func("""
    for i in T.serial(16):
        if i < 8:
            A[i] = 1""" + body)
    assert simp(f) is f


# ---------------------------------------------------------------- brute force

THRESHOLDS = [(a, b) for a in (0, 3, 8, 15, 16, 17) for b in (0, 3, 8, 9, 16)]


@pytest.mark.parametrize(("a", "b"), THRESHOLDS)
def test_merge_decision_matches_enumeration(a, b):
    """Merged exactly when enumerating 0 <= i < 16 finds `i < a` and `i >= b` disjoint
    and covering (a condition the range decides is folded first, so compare only
    the number of conditionals left); the result always runs like the original."""
    f = func(f"""
    for i in T.serial(16):
        if i < {a}:
            A[i] = B[i] + 1
        with T.block("P"):
            if i >= {b}:
                A[i] = 0
""")
    got = simp(f)
    assert_runs_alike(f, got, seeds=range(2))
    first = {i for i in range(16) if i < a}
    second = {i for i in range(16) if i >= b}
    decided = sum(s in ({*range(16)}, set()) for s in (first, second))
    complementary = not first & second and first | second == {*range(16)}
    expected_ifs = 2 - decided - (complementary and decided == 0)
    assert _count_ifs(got) == expected_ifs


def _count_ifs(f) -> int:
    return sum(isinstance(x, n.IfThenElse) for x in walk(f.body))
