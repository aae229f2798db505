"""Run-time bounds checks per axis (analyses.bounds_axes, codegen.bounds_guards) and
one evaluation order for a store (the value, then the index, then its check):
a Numba kernel checks only the axes the analysis could not prove, fails with the
reference executor's message, and reports the access the reference reports where
two would fail."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import calls, copy, run_both

import codegen
from polypad.errors import BoundsCheckError
from polypad.script import parse

pytestmark = pytest.mark.numba

# Axis 0 undecided (a row read from B), axis 1 proved (j runs over A's columns);
# then axis 0 proved and axis 1 undecided.  Serial, so the checks raise.
ROWS_TEXT = '''
@T.prim_func
def {name}(A: T.Buffer((6, 5), "float32"), B: T.Buffer((4,), "int32"),
         C: T.Buffer((4, 5), "float32"), D: T.Buffer((4, 5), "float32")):
    for i in T.{kind}(4):
        for j in T.serial(5):
            C[i, j] = A[B[i], j]
    for i in T.{kind}(4):
        for j in T.serial(5):
            D[i, j] = A[j, B[i]]
'''
ROWS = parse(ROWS_TEXT.format(name="rows", kind="serial"))
# The same in parallel loops: the checks write the flag array.
ROWS_PARALLEL = parse(ROWS_TEXT.format(name="rows_parallel", kind="parallel"))

# Neither index changes in the inner loop's iterations, nor is either hoistable there
# (it reads j): checked where it runs, axis 0 only.
DIAGONAL = parse('''
@T.prim_func
def diagonal(A: T.Buffer((6, 5), "float32"), B: T.Buffer((4, 5), "int32"),
             C: T.Buffer((4, 5), "float32")):
    for i in T.serial(4):
        for j in T.serial(5):
            C[i, j] = A[B[i, j], j]
''')



def messages(kernels, args) -> list[str]:
    """The BoundsCheckError message of each kernel on copies of ``args``."""
    out = []
    for kernel in kernels:
        with pytest.raises(BoundsCheckError) as info:
            kernel(*copy(args))
        out.append(str(info.value))
    return out


def rows_args(b) -> list:
    return [np.arange(30, dtype="float32").reshape(6, 5), np.array(b, "int32"),
            np.zeros((4, 5), "float32"), np.zeros((4, 5), "float32")]


@pytest.fixture(scope="module")
def built():
    return {f.name: (codegen.build(f), codegen.build(f, target="python"))
            for f in (ROWS, ROWS_PARALLEL, DIAGONAL)}


def test_only_the_undecided_axis_is_checked_and_once_per_row(built):
    serial, parallel = built["rows"][0].source, built["rows_parallel"][0].source
    assert calls(serial) == ["_pp_index_2_0", "_pp_index_2_1"]
    assert "def _pp_index_2_0(i0, i1, shape, number):\n    if not (0 <= i0 < shape[0]):" \
        in serial
    assert "def _pp_index_2_1(i0, i1, shape, number):\n    if not (0 <= i1 < shape[1]):" \
        in serial
    # Before the loop over j, which reads the proved axis at its first value.
    assert "_pp_index_2_0(_h, 0, A.shape, 0)\n        for j in range(5):\n" \
           "            C[i, j] = A[_h, j]\n" in serial
    assert calls(parallel) == ["_pp_inside_2_0", "_pp_inside_2_1"]
    assert "_ok_1 = _pp_inside_2_1(0, _h_1, A.shape, 1, bounds_fail_1)\n" in parallel
    assert "D[i_1, j_1] = (A[j_1, _h_1] if _ok_1 else np.float32(0.0))\n" in parallel
    assert calls(built["diagonal"][0].source) == ["_pp_index_2_0"]
    every = codegen.build(ROWS, boundscheck=True).source
    assert sorted(set(calls(every))) == ["_pp_index_1", "_pp_index_2"]


@pytest.mark.parametrize("name", ["rows", "rows_parallel"])
def test_each_axis_fails_with_the_reference_message(built, name):
    run_both(built[name][0], rows_args([4, 0, 3, 1]))
    # B[1] = 6: axis 0 of A[B[i], j] leaves A (the first loop), at its first j.
    assert messages(built[name], rows_args([4, 6, 3, 1])) == [
        f"load of A[6, 0] is outside its shape (6, 5) in '{name}' at <string>:7 "
        "(as written: A[B[i], j])"] * 2
    # B[2] = 5 is a row of A but no column: axis 1 of A[j, B[i]] leaves (the second).
    assert messages(built[name], rows_args([4, 0, 5, 1])) == [
        f"load of A[0, 5] is outside its shape (6, 5) in '{name}' at <string>:10 "
        "(as written: A[j, B[i]])"] * 2
    assert messages(built[name], rows_args([-1, 0, 3, 1])) == [
        f"load of A[-1, 0] is outside its shape (6, 5) in '{name}' at <string>:7 "
        "(as written: A[B[i], j])"] * 2


def test_an_unhoisted_axis_check_fails_where_the_reference_does(built):
    b = np.zeros((4, 5), "int32")
    b[2, 3] = 7
    args = [np.arange(30, dtype="float32").reshape(6, 5), b, np.zeros((4, 5), "float32")]
    assert messages(built["diagonal"], args) == [
        "load of A[7, 3] is outside its shape (6, 5) in 'diagonal' at <string>:7 "
        "(as written: A[B[i, j], j])"] * 2


# Both the value's load and the store's own index are outside at i = 1: the value is
# evaluated first (TVM's BufferStore), so the load is the failure reported.
ORDER = '''
@T.prim_func
def order(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"),
          D: T.Buffer((4,), "float32")):
    for i in T.{kind}(4):
        D[B[i]] = A[B[i] + 1]
'''

# One element loaded and stored, its check hoisted out of the loop over j and shared.
SHARED = parse('''
@T.prim_func
def shared(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"),
           X: T.Buffer((8,), "float32")):
    for i in T.serial(4):
        for j in T.serial(8):
            A[B[i]] = A[B[i]] + X[j]
''')

# The store comes first (the first statement), the load after it.
STORE_FIRST = parse('''
@T.prim_func
def store_first(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"),
                X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    for i in T.serial(4):
        for j in T.serial(8):
            A[B[i]] = X[j]
            Y[j] = A[B[i]]
''')


@pytest.mark.parametrize("kind", ["serial", "parallel"])
def test_a_store_reports_its_values_load_before_its_own_index(kind):
    func = parse(ORDER.format(kind=kind))
    kernels = [codegen.build(func), codegen.build(func, target="python")]
    args = [np.arange(4, dtype="float32"), np.array([0, 4, 1, 2], "int32"),
            np.zeros(4, "float32")]
    assert messages(kernels, args) == [
        "load of A[5] is outside its shape (4,) in 'order' at <string>:6 "
        "(as written: A[B[i] + 1])"] * 2
    args[1] = np.array([0, 1, 2, 3], "int32")  # only the store leaves, at i = 3
    assert messages(kernels, args) == [
        "load of A[4] is outside its shape (4,) in 'order' at <string>:6 "
        "(as written: A[B[i] + 1])"] * 2
    args[1] = np.array([0, -1, 2, 1], "int32")  # the load is A[0]: the store fails
    assert messages(kernels, args) == [
        "store to D[-1] is outside its shape (4,) in 'order' at <string>:6 "
        "(as written: D[B[i]])"] * 2


def test_a_hoisted_check_reports_the_access_that_runs_first():
    args = [np.zeros(4, "float32"), np.array([0, 9, 1, 2], "int32"),
            np.arange(8, dtype="float32")]
    shared = [codegen.build(SHARED), codegen.build(SHARED, target="python")]
    assert "_pp_index_1(_h, A.shape, 0)\n        for j in range(8):" in shared[0].source
    assert messages(shared, args) == [
        "load of A[9] is outside its shape (4,) in 'shared' at <string>:7 "
        "(as written: A[B[i]])"] * 2
    first = [codegen.build(STORE_FIRST), codegen.build(STORE_FIRST, target="python")]
    assert messages(first, [*args, np.zeros(8, "float32")]) == [
        "store to A[9] is outside its shape (4,) in 'store_first' at <string>:7 "
        "(as written: A[B[i]])"] * 2
