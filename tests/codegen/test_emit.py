"""The emitted source itself: precedence, names, unrolling, helpers.  Only
one function here is compiled; the rest are checked as text (and as valid
Python)."""

import ast

import numpy as np
import pytest
from codegen_support import random_args, run_both

import codegen
from codegen.numba.emit import MAX_UNROLL, emit
from polypad.script import parse
from polypad.semantics import lower


def source(text: str, fastmath: str | None = "contract") -> str:
    out = emit(lower(parse(text)), fastmath=fastmath)
    ast.parse(out)  # valid Python
    return out


def test_parentheses_follow_precedence_and_keep_float_order():
    out = source('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[i] = A[i] - (A[i] - 1.0) * (A[i] + 2.0)
        A[i] = (A[i] + A[i]) + A[i]
        A[i] = A[i] + (A[i] + A[i])
        B[i] = -(i - 1) // 2 % 3
        B[i] = T.if_then_else(i < 2 and not i == 1, T.if_then_else(i < 1, 1, 2), 3)
''')
    assert "A[i] = A[i] - (A[i] - np.float32(1.0)) * (A[i] + np.float32(2.0))" in out
    assert "A[i] = A[i] + A[i] + A[i]" in out
    assert "A[i] = A[i] + (A[i] + A[i])" in out
    assert "B[i] = (0 - (i - 1)) // 2 % 3" in out
    assert "B[i] = (1 if i < 1 else 2) if i < 2 and not i == 1 else 3" in out


def test_unroll_limits_and_helper_sharing():
    out = source(f'''
@T.prim_func
def f(A: T.Buffer((3, {MAX_UNROLL + 1}), "float32")):
    for i in T.unroll(3):
        for j in T.vectorized({MAX_UNROLL + 1}):
            A[i, j] = A[i, j] + 1.0
    for i2 in T.unroll(1, 3):
        for j2 in T.unroll({MAX_UNROLL + 1}):
            A[i2, j2] = 0.0
''', fastmath="full")
    # Three unrolled copies call one helper with a literal row.
    assert out.count("def _pp_vector_") == 1
    assert [f"_pp_vector_0(A, {i})" in out for i in range(3)] == [True] * 3
    # Too long to unroll: stays a loop, inside the unrolled rows 1 and 2.
    assert out.count(f"for j2 in range({MAX_UNROLL + 1}):") == 2
    assert "A[1, j2] = np.float32(0.0)" in out and "A[2, j2] = np.float32(0.0)" in out


def test_elif_chain_and_block_comment():
    out = source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    with T.block("compute"):
        for i in T.serial(4):
            if i < 1:
                A[i] = 1
            elif i < 2:
                A[i] = 2
            else:
                A[i] = 3
''')
    assert "# block compute" in out
    assert "elif i < 2:" in out and "else:" in out


@pytest.mark.numba
def test_clashing_names_are_renamed_and_run():
    f = parse('''
@T.prim_func
def f(np: T.Buffer((4, 3), "float32"), range: T.Buffer((4,), "float32"), lambda_: T.int32):
    for i in T.serial(4):
        range[i] = 0.0
        for j in T.serial(3):
            i_1 = j * lambda_
            range[i] = range[i] + np[i, j] * T.float32(i_1)
    for i in T.serial(4):
        range[i] = range[i] + 1.0
''')
    kernel = codegen.build(f, fastmath=None)  # bitwise: no a * b + c contracted
    assert "def kernel(np_1, range_1, lambda_):" in kernel.source
    # Two loop variables named i: distinct identities, distinct names.
    assert "for i in range(4):" in kernel.source and "for i_2 in range(4):" in kernel.source
    out = run_both(kernel, random_args(f, lambda_=3))
    a, b = random_args(f, lambda_=3)[:2]
    np.testing.assert_allclose(out[1], (a * (np.arange(3) * 3)).sum(axis=1) + 1, rtol=1e-6)


def test_suites_left_empty_get_pass():
    out = source('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        if i < 2:
            with T.block("nothing"):
                i + 1
''')
    assert "            # block nothing\n            pass\n" in out
