"""A reduction target held in a local across its loop (codegen/numba/accumulators.py):
the emitted form, where it is refused, and bitwise equality with the reference.
Two kernels are compiled."""

import functools

import numpy as np
import pytest
from codegen_support import random_args, run_both

import codegen
from polypad.errors import ArgumentError
from polypad.examples.row_summation import row_summation
from polypad.script import parse

MATVEC = '''
@T.prim_func
def matvec(n: T.int32, A: T.Buffer((n, 9), "int32"), X: T.Buffer((9,), "int32"),
           Y: T.Buffer((n,), "int32")):
    for i in T.parallel(n):
        Y[i] = 1
        for k in T.serial(9):
            Y[i] = Y[i] * 3 + A[i, k] * X[k]
'''


@functools.cache
def kernel(name: str) -> codegen.Kernel:
    func = row_summation if name == "row_summation" else parse(MATVEC)
    return codegen.build(func)


def source(text: str) -> str:
    return codegen.build(parse(text)).source


def test_the_rfc_row_sum_accumulates_in_a_local():
    lines = kernel("row_summation").source.splitlines()
    start = lines.index("        B[i] = np.float32(0.0)")
    # B[i] is stored before the loop, so the local needs no guard that m > 0.
    assert lines[start:start + 5] == [
        "        B[i] = np.float32(0.0)",
        "        B_acc = B[i]",
        "        for j in range(m):",
        "            B_acc = B_acc + A[i, j]",
        "        B[i] = B_acc",
    ]


def test_a_guarded_reduction_after_its_init_accumulates_in_a_local():
    # The RFC's padded row sum before overcompute: every access to B[i] in the
    # loop is guarded, but B[i] = 0.0 before it surely touched the element.
    text = source('''
@T.prim_func
def f(A: T.Buffer((4, 3, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = 0.0
        for jo in T.serial(3):
            for ji in T.serial(4):
                if 4 * jo + ji < 10:
                    B[i] = B[i] + A[i, jo, ji]
''')
    assert ("        B_acc = B[i]\n"
            "        for jo in range(3):\n"
            "            for ji in range(4):\n"
            "                if 4 * jo + ji < 10:\n"
            "                    B_acc = B_acc + A[i, jo, ji]\n"
            "        B[i] = B_acc\n") in text


def test_split_loops_share_one_local_and_constant_extents_need_no_guard():
    text = source('''
@T.prim_func
def f(A: T.Buffer((4, 8, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for jo in T.serial(8):
            for ji in T.serial(4):
                B[i] = B[i] + A[i, jo, ji]
''')
    assert ("        B_acc = B[i]\n"
            "        for jo in range(8):\n"
            "            for ji in range(4):\n"
            "                B_acc = B_acc + A[i, jo, ji]\n"
            "        B[i] = B_acc\n") in text


@pytest.mark.parametrize("body", [
    # guarded: the element might not be touched at all
    "if j < 3:\n                B[i] = B[i] + A[i, j]",
    # another element of B in the loop
    "B[i] = B[i] + B[(i + 1) % 4] * A[i, j]",
    # the element changes with the loop
    "B[j % 4] = B[j % 4] + A[i, j]",
])
def test_refused_where_the_element_is_not_one_and_always_touched(body):
    text = source(f'''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j in T.serial(8):
            {body}
''')
    assert "_acc" not in text


def test_an_inner_loop_that_may_run_no_iteration_holds_the_local_itself():
    text = source('''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j in T.serial(8):
            for k in T.serial(j):
                B[i] = B[i] + A[i, k]
''')
    assert ("        for j in range(8):\n"
            "            if j > 0:\n"
            "                B_acc = B[i]\n"
            "                for k in range(j):\n") in text


@pytest.mark.parametrize("inner", [
    # the index is loaded, and the loop may change what it loads
    "for j in T.serial(4):\n            B[C[i]] = B[C[i]] + A[i, j]\n            C[i] = j",
    # a prange would take the local for a reduction variable of its own
    "for j in T.serial(4):\n            for k in T.parallel(2):\n"
    "                if k == 0:\n                    B[C[0]] = B[C[0]] + A[i, j]",
])
def test_refused_for_loaded_indices_and_around_parallel_loops(inner):
    text = source(f'''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
      C: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        B[C[i]] = 0.0
        {inner}
''')
    assert "B_acc" not in text  # C[i], stored on every iteration, may be held


@pytest.mark.numba
def test_row_sum_is_bitwise_the_reference():
    k = kernel("row_summation")
    for seed, (n, m) in enumerate([(5, 7), (16, 14), (3, 0), (1, 200)]):
        args = random_args(k.func, seed, n=n, m=m)
        run_both(k, args)  # rtol=0: bitwise, same operations in the same order


@pytest.mark.numba
def test_int_reduction_in_a_parallel_loop_is_exact():
    k = kernel("matvec")
    assert "for i in numba.prange(n):" in k.source
    assert "Y_acc = np.int32(np.int32(Y_acc * 3) + np.int32(A[i, k] * X[k]))" in k.source
    for seed, n in enumerate([1, 7, 33]):
        args = random_args(k.func, seed, n=n)
        args[1] *= 100000  # products and sums that wrap around int32
        run_both(k, args)


def test_overlapping_arrays_are_refused():
    reference = codegen.build(row_summation, target="python")
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(ArgumentError, match="share memory"):
        reference(a, a[0], 4, 4)
