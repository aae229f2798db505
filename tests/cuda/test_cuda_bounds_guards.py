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
    assert ("        if _pp_inside_2(_g, _g_1, C.shape, 0, bounds_fail):\n"
            "            C[_g, _g_1] = C[_pp_at_2(i + 3, 0, C.shape, 1, bounds_fail)] "
            "+ np.float32(1.0)\n") in kernel.source
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
