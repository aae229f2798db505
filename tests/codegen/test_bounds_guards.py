"""Run-time checks of exactly the accesses the bounds analysis could not prove
inside their buffer (codegen.bounds_guards, codegen.numba.guards): a Numba
kernel raises the reference executor's BoundsCheckError for them, leaves the
proved ones free, and ``boundscheck=False`` opts out."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import calls, copy, run_both

import analyses
import codegen
from polypad.errors import BoundsCheckError, BuildArgumentError
from polypad.script import parse

pytestmark = pytest.mark.numba

# int8 index arithmetic: at n = 127, i + 2 wraps to -128, which min keeps.
CLAMP = parse('''
@T.prim_func
def clamp(n: T.int8, B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    for i in T.serial(n):
        C[i] = B[T.min(i + T.int8(2), n - T.int8(1))]
''')

# A gather and a scatter, in a parallel loop: checked through the flag array.
GATHER = parse('''
@T.prim_func
def gather(A: T.Buffer((4,), "float32"), B: T.Buffer((8,), "int32"),
           C: T.Buffer((8,), "float32"), D: T.Buffer((4,), "float32")):
    for i in T.parallel(8):
        C[i] = A[B[i]] * 2.0
    for i in T.serial(8):
        D[B[i]] = C[i]
''')

# The load of A[B[i]] only runs where B[i] is inside: checked where it runs.
GUARDED = parse('''
@T.prim_func
def guarded(A: T.Buffer((4,), "float32"), B: T.Buffer((8,), "int32"),
            C: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        C[i] = T.if_then_else(B[i] >= 0 and B[i] < 4, A[B[i]], T.float32(-1.0))
''')

PROVED = parse('''
@T.prim_func
def shift(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.parallel(n):
        B[i] = A[i + 1]
''')


@pytest.fixture(scope="module")
def kernels():
    return {f.name: (codegen.build(f), codegen.build(f, target="python"))
            for f in (CLAMP, GATHER, GUARDED)}



def same_error(kernels, name, args) -> str:
    """Run both kernels on copies of ``args``: each raises BoundsCheckError, alike."""
    messages = []
    for kernel in kernels[name]:
        with pytest.raises(BoundsCheckError) as info:
            kernel(*copy(args))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    return messages[0]


def test_the_analysis_names_each_undecided_access():
    found = analyses.bounds_precondition(GATHER)
    assert [u.description for u in found.undecided] == [
        "load of A[B[i]] at <string>:6", "store to D[B[i]] at <string>:8"]
    assert [u.is_store for u in found.undecided] == [False, True]
    assert all("cannot tell whether" in u.reason for u in found.undecided)
    names = {(buffer.name, len(indices)) for buffer, indices in found.proved}
    assert names == {("B", 1), ("C", 1)}  # B[i], C[i] (loaded and stored)
    assert isinstance(found.decision, analyses.Unknown)  # the old answer, unchanged
    assert analyses.bounds_precondition(PROVED).undecided == ()


def test_an_int8_index_that_wraps_negative_raises_as_the_reference(kernels):
    args = [np.int8(127), np.arange(128, dtype="float32"), np.zeros(128, "float32")]
    message = same_error(kernels, "clamp", args)
    assert message == ("load of B[-128] is outside its shape (128,) in 'clamp' at "
                       "<string>:5 (as written: B[T.min(i + 2, n - 1)])")
    run_both(kernels["clamp"][0], [np.int8(100), *args[1:]])


def test_a_bad_gather_and_scatter_raise_as_the_reference(kernels):
    a, c, d = np.arange(4, dtype="float32"), np.zeros(8, "float32"), np.zeros(4, "float32")
    bad_load = np.array([0, 1, 2, 3, 9, 1, 2, 3], "int32")
    assert same_error(kernels, "gather", [a, bad_load, c, d]) == (
        "load of A[9] is outside its shape (4,) in 'gather' at <string>:6 "
        "(as written: A[B[i]])")
    bad_store = np.array([0, 1, 2, 3, 1, 2, 3, -1], "int32")
    with pytest.raises(BoundsCheckError, match=r"^load of A\[-1\]"):  # the gather first
        kernels["gather"][0](a, bad_store, c, d)
    message = str(pytest.raises(BoundsCheckError, kernels["gather"][1], a, bad_store,
                                c, d).value)
    assert message.startswith("load of A[-1] is outside its shape (4,)")


def test_a_good_gather_gives_the_reference_answer_in_parallel(kernels):
    kernel = kernels["gather"][0]
    args = [np.arange(4, dtype="float32"), np.array([3, 1, 0, 2, 2, 0, 1, 3], "int32"),
            np.zeros(8, "float32"), np.zeros(4, "float32")]
    got = run_both(kernel, args)
    np.testing.assert_array_equal(got[2], [6, 2, 0, 4, 4, 0, 2, 6])
    assert "parallel=True" in kernel.source and "numba.prange" in kernel.source


def test_one_check_per_undecided_access_and_none_for_the_proved(kernels):
    assert sorted(calls(kernels["gather"][0].source)) == ["_pp_index_1", "_pp_inside_1"]
    assert calls(kernels["clamp"][0].source) == ["_pp_index_1"]
    proved = codegen.build(PROVED)
    assert calls(proved.source) == [] and "_pp_" not in proved.source
    assert "bounds_fail" not in proved.source


def test_a_check_under_a_condition_runs_only_where_the_load_does(kernels):
    args = [np.arange(4, dtype="float32"), np.array([0, -5, 2, 9, 3, 1, -1, 4], "int32"),
            np.zeros(8, "float32")]
    got = run_both(kernels["guarded"][0], args)
    np.testing.assert_array_equal(got[2], [0, -1, 2, -1, 3, 1, -1, -1])


def test_boundscheck_false_opts_out():
    kernel = codegen.build(CLAMP, boundscheck=False)
    assert calls(kernel.source) == []
    c = np.zeros(128, "float32")
    kernel(np.int8(127), np.arange(128, dtype="float32"), c)  # unsafe: B[-128] is B[0]
    assert c[125] == 126 and c[126] == 0
    with pytest.raises(BuildArgumentError, match="boundscheck"):
        codegen.build(CLAMP, boundscheck="yes")


def test_boundscheck_true_checks_every_access():
    kernel = codegen.build(PROVED, boundscheck=True)
    assert sorted(calls(kernel.source)) == ["_pp_index_1", "_pp_index_1"]
    run_both(kernel, [np.int32(7), np.arange(8, dtype="float32"), np.zeros(8, "float32")])


def test_a_vector_helper_in_a_parallel_loop_takes_the_flags():
    f = parse('''
@T.prim_func
def rows(A: T.Buffer((4,), "float32"), B: T.Buffer((4, 4), "int32"),
         C: T.Buffer((4, 4), "float32")):
    for i in T.parallel(4):
        for j in T.vectorized(4):
            C[i, j] = A[B[i, j]]
''')
    kernel = codegen.build(f, fastmath="full")
    assert "_pp_vector_0(" in kernel.source and "bounds_fail)" in kernel.source
    good = [np.arange(4, dtype="float32"), np.arange(16, dtype="int32").reshape(4, 4) % 4,
            np.zeros((4, 4), "float32")]
    run_both(kernel, good)
    good[1][2, 3] = 4
    with pytest.raises(BoundsCheckError, match=r"^load of A\[4\] is outside its shape "
                                               r"\(4,\) in 'rows'"):
        kernel(*good)


EMBED = parse('''
@T.prim_func
def embed(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "int32"),
          X: T.Buffer((8,), "float32"), C: T.Buffer((4, 8), "float32")):
    for i in T.parallel(4):
        for j in T.serial(8):
            C[i, j] = A[B[i]] * X[j]
    for i in T.serial(4):
        for j in T.serial(8):
            C[i, j] = C[i, j] + A[B[i]]
''')


def test_a_check_the_inner_loop_does_not_change_runs_before_it():
    kernel = codegen.build(EMBED)
    lines = kernel.source.split("def kernel(")[1].splitlines()
    # Each check once per row, outside the loop over j: in the parallel loop through
    # the flag array, in the serial one raising.
    assert [line.strip() for line in lines if "_pp_" in line or "for j" in line] == [
        "_ok = _pp_inside_1(_h, A.shape, 0, bounds_fail)", "for j in range(8):",
        "_pp_index_1(_h_1, A.shape, 1)", "for j_1 in range(8):"]
    assert "C[i, j] = (A[_h] if _ok else np.float32(0.0)) * X[j]" in kernel.source
    args = [np.arange(16, dtype="float32"), np.array([1, 15, 0, 7], "int32"),
            np.arange(8, dtype="float32"), np.zeros((4, 8), "float32")]
    run_both(kernel, args)
    for bad, element in (([1, 16, 0, 7], 16), ([1, 2, -17, 7], -17)):
        args[1] = np.array(bad, "int32")
        errors = [pytest.raises(BoundsCheckError, built, *copy(args)).value
                  for built in (kernel, codegen.build(EMBED, target="python"))]
        assert str(errors[0]) == str(errors[1]) == (
            f"load of A[{element}] is outside its shape (16,) in 'embed' at <string>:7 "
            "(as written: A[B[i]])")
