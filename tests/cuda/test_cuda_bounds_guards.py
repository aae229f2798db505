"""The cuda target's run-time bounds checks (codegen.cuda.guards), on Numba's CUDA
simulator: an access the bounds analysis could not prove inside its buffer is
tested where it runs, a failure is recorded in the flag array and skipped, and
the host raises the reference executor's BoundsCheckError after the launch."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import BoundsCheckError
from polypad.script import parse

# Inside only where the data-dependent guard keeps i small: the analysis cannot tell.
GUARDED = parse('''
@T.prim_func
def guarded(A: T.Buffer((8,), "int32"), C: T.Buffer((10, 2), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        if A[i] > 0:
            C[i + 4, 1] = C[i + 3, 0] + 1.0
''')

PROVED = parse('''
@T.prim_func
def copy(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        C[i] = A[i]
''')


@pytest.fixture(scope="module")
def kernel():
    return codegen.build(GUARDED, target="cuda")


def test_the_undecided_accesses_are_checked_through_the_flag_array(kernel):
    assert "def kernel_0(A, C, bounds_fail):" in kernel.source
    # The value first (its load, then the store's index and check: TVM's order), and
    # axis 0 only: the second index is a constant inside C.
    assert ("        _v = C[_pp_at_2_0(i + 3, 0, C.shape, 0, bounds_fail)] + np.float32(1.0)\n"
            "        _g = i + 4\n"
            "        _g_1 = 1\n"
            "        if _pp_inside_2_0(_g, _g_1, C.shape, 1, bounds_fail):\n"
            "            C[_g, _g_1] = _v\n") in kernel.source
    assert "def _pp_at_2_0(i0, i1, shape, number, fail):\n    if 0 <= i0 < shape[0]:\n" \
        in kernel.source
    proved = codegen.build(PROVED, target="cuda").source
    assert "bounds_fail" not in proved and "_pp_" not in proved


def test_inside_the_kernel_agrees_with_the_reference(kernel):
    a = np.array([0, 1, 1, 1, 1, 1, 0, 0], "int32")
    got, want = np.zeros((10, 2), "float32"), np.zeros((10, 2), "float32")
    kernel(a, got)
    codegen.build(GUARDED, target="python")(a, want)
    np.testing.assert_array_equal(got, want)
    assert got[:, 1].tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]


def test_outside_the_host_raises_the_reference_error(kernel):
    a = np.array([0, 1, 1, 1, 1, 1, 1, 0], "int32")
    messages = []
    for built in (kernel, codegen.build(GUARDED, target="python")):
        with pytest.raises(BoundsCheckError) as info:
            built(a, np.zeros((10, 2), "float32"))
        messages.append(str(info.value))
    assert messages[0] == messages[1] == (
        "store to C[10, 1] is outside its shape (10, 2) in 'guarded' at <string>:6 "
        "(as written: C[i + 4, 1])")


def test_boundscheck_false_opts_out_and_true_checks_every_access():
    source = codegen.build(GUARDED, target="cuda", boundscheck=False).source
    assert "bounds_fail" not in source
    every = codegen.build(PROVED, target="cuda", boundscheck=True)
    body = every.source.split("def kernel_0(A, C, bounds_fail):")[1]
    assert body.count("_pp_") == 2  # the load and the store
    got = np.zeros(8, "float32")
    every(np.arange(8, dtype="float32"), got)
    assert got.tolist() == list(range(8))


# The cuda target models every index (no gathers), so the undecided accesses here are
# those under a data-dependent guard: the store to C leaves C on axis 0 at i = 7, the
# store to D leaves D on axis 1 at i >= 6; the other axes run over their extents.
ROWS = parse('''
@T.prim_func
def rows(A: T.Buffer((8,), "int32"), C: T.Buffer((10, 4), "float32"),
         D: T.Buffer((4, 10), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        if A[i] > 0:
            for j in T.serial(4):
                C[i + 3, j] = 1.0
                D[j, i + 4] = 2.0
''')

# At i = 6 both the value's load (E[11]) and the store (D[10]) are outside.
ORDER = parse('''
@T.prim_func
def order(A: T.Buffer((8,), "int32"), D: T.Buffer((10,), "float32"),
          E: T.Buffer((10,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        if A[i] > 0:
            D[i + 4] = E[i + 5]
''')


def bounds_messages(func, args) -> list[str]:
    """The BoundsCheckError of the cuda kernel and of the reference executor."""
    out = []
    for target in ("cuda", "python"):
        with pytest.raises(BoundsCheckError) as info:
            codegen.build(func, target=target)(*[a.copy() for a in args])
        out.append(str(info.value))
    return out


def test_each_axis_is_checked_alone_and_fails_as_the_reference():
    source = codegen.build(ROWS, target="cuda").source
    assert "if _pp_inside_2_0(_g, _g_1, C.shape, 0, bounds_fail):" in source
    assert "if _pp_inside_2_1(_g_2, _g_3, D.shape, 1, bounds_fail):" in source
    c, d = np.zeros((10, 4), "float32"), np.zeros((4, 10), "float32")
    good = [np.array([1, 0, 1, 1, 0, 1, 0, 0], "int32"), c, d]
    got, want = [x.copy() for x in good], [x.copy() for x in good]
    codegen.build(ROWS, target="cuda")(*got)
    codegen.build(ROWS, target="python")(*want)
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)
    # i = 7 leaves C on axis 0 first; i = 6 leaves only D, on axis 1.
    assert bounds_messages(ROWS, [np.array([0, 0, 0, 0, 0, 0, 0, 1], "int32"), c, d]) == [
        "store to C[10, 0] is outside its shape (10, 4) in 'rows' at <string>:8 "
        "(as written: C[i + 3, j])"] * 2
    assert bounds_messages(ROWS, [np.array([0, 0, 0, 0, 0, 0, 1, 0], "int32"), c, d]) == [
        "store to D[0, 10] is outside its shape (4, 10) in 'rows' at <string>:9 "
        "(as written: D[j, i + 4])"] * 2
    every = codegen.build(ROWS, target="cuda", boundscheck=True).source
    assert "_pp_inside_2_0" not in every and "_pp_inside_2(_g, _g_1, C.shape" in every


def test_a_store_reports_its_values_load_before_its_own_index():
    args = [np.array([0, 0, 0, 0, 0, 0, 1, 0], "int32"), np.zeros(10, "float32"),
            np.arange(10, dtype="float32")]
    assert bounds_messages(ORDER, args) == [
        "load of E[11] is outside its shape (10,) in 'order' at <string>:7 "
        "(as written: E[i + 5])"] * 2


def test_an_access_written_alike_in_two_statements_is_named_where_it_failed():
    # Under data-dependent ifs, both undecided: one check each, each with its line.
    twice = parse('''
@T.prim_func
def twice(X: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32"), n: T.int32):
    T.assume(0 <= n and n < 100)
    for j in T.serial(4):
        if X[j] > 0:
            C[j + n] = 1
        for k in T.serial(2):
            if X[k] > 0:
                C[j + n] = 2
''')
    messages = []
    for target in ("cuda", "python"):
        with pytest.raises(BoundsCheckError) as info:
            codegen.build(twice, target=target)(np.ones(8, "int32"), np.zeros(8, "int32"), 8)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == (
        "store to C[8] is outside its shape (8,) in 'twice' at <string>:7 "
        "(as written: C[j + n])")
