"""Calls with arguments that do not fit the parameters fail before any code
runs, with an ArgumentError naming the parameter."""

import codegen_kernels as K
import numpy as np
import pytest

import codegen
from polypad.errors import ArgumentError, BuildError
from polypad.script import parse

TARGETS = ["numba", "python"]


@pytest.fixture(scope="module", params=TARGETS)
def symbolic(request):
    # The numba kernel is never compiled here: checks come first.
    return codegen.build(K.symbolic(), target=request.param)


def good():
    return [4, np.zeros((4, 3), np.float32), np.zeros(4, np.float32)]


@pytest.mark.parametrize("position, value, message", [
    (0, 4.0, r"argument 'n' \(int32\) must be an int, got float"),
    (0, True, r"argument 'n' \(int32\) must be an int"),
    (0, 2**40, r"argument 'n' = 1099511627776 does not fit in int32"),
    (1, [[0.0] * 3] * 4, r"argument 'A' must be a numpy array, got list"),
    (1, np.zeros((4, 3), np.float64), r"argument 'A' must have dtype float32, got float64"),
    (1, np.zeros((4, 4), np.float32)[:, :3], r"argument 'A' must be C-contiguous"),
    (1, np.zeros((5, 3), np.float32), r"argument 'A' has length 5 on axis 0, but n = 4"),
    (1, np.zeros((4, 2), np.float32), r"argument 'A' must have shape \(n, 3\), got \(4, 2\)"),
    (1, np.zeros(12, np.float32), r"argument 'A' must have 2 axes \(shape \(n, 3\)\)"),
    (2, np.zeros(3, np.float32), r"argument 'B' has length 3 on axis 0, but n = 4"),
])
def test_bad_argument(symbolic, position, value, message):
    args = good()
    args[position] = value
    with pytest.raises(ArgumentError, match=message):
        symbolic(*args)
    assert not symbolic.compiled or symbolic.target == "python"


def test_argument_count(symbolic):
    with pytest.raises(ArgumentError, match=r"symbolic\(n, A, B\) takes 3 arguments, got 2"):
        symbolic(4, np.zeros((4, 3), np.float32))


def test_read_only_output_is_refused(symbolic):
    n, a, b = good()
    a.flags.writeable = False  # only read: fine
    b.flags.writeable = False
    with pytest.raises(ArgumentError, match="'B' is written by the kernel but is read-only"):
        symbolic(n, a, b)


def test_argument_error_is_a_build_error_and_a_type_error():
    assert issubclass(ArgumentError, BuildError) and issubclass(ArgumentError, TypeError)


def test_unknown_target_and_module():
    with pytest.raises(BuildError, match="unknown target 'opencl'"):
        codegen.build(K.elementwise(), target="opencl")
    with pytest.raises(BuildError, match="builds a PrimFunc, not str"):
        codegen.build("def f(): pass")


def test_float16_is_refused_by_numba_but_runs_in_python():
    f = parse('''
@T.prim_func
def half(A: T.Buffer((4,), "float16")):
    for i in T.serial(4):
        A[i] = A[i] * T.float16(2.0)
''')
    with pytest.raises(BuildError, match="does not support float16 .buffer 'A'"):
        codegen.build(f)
    a = np.arange(4, dtype=np.float16)
    codegen.build(f, target="python")(a)
    np.testing.assert_array_equal(a, np.arange(4, dtype=np.float16) * 2)
