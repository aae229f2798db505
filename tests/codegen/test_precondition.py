"""A kernel that is inside its buffers for some parameter values only is built, and
each call checks the values once, before anything runs (issue 21, section 3)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import random_args, run_both

import codegen
import polypad as pp
from analyses import Element, Instance, Proved, Unknown
from codegen.precondition import _fits_int64, exact_source
from polypad.cli import main
from polypad.errors import OutOfBoundsError
from polypad.ir import nodes as n
from polypad.script import parse

TARGETS = ["numba", "python"]
numba = pytest.mark.numba

#: Inside A for every n <= 28, outside for every n >= 29.
QUARTERS = '''
@T.prim_func
def f(A: T.Buffer((7,), "float32"), n: T.int32):
    for i in T.serial(n):
        A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]
'''


@pytest.fixture(scope="module")
def kernels():
    func = parse(QUARTERS)
    return {target: codegen.build(func, target=target) for target in TARGETS}


def expected(a: np.ndarray, count: int) -> np.ndarray:
    a = a.copy()
    for i in range(count):
        a[i % 7] = a[i // 4] + a[i // 4] - a[i % 2]
    return a


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_built_and_right_where_the_precondition_holds(kernels, target):
    kernel = kernels[target]
    assert pp.script(kernel.precondition) == "n < 29"
    assert isinstance(kernel.bounds, Proved) and "where n < 29" in kernel.bounds.detail
    for count in (0, 20, 28):
        a = np.arange(7, dtype="float32") * 0.5
        kernel(a, count)
        np.testing.assert_array_equal(a, expected(np.arange(7, dtype="float32") * 0.5, count))


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_a_call_outside_raises_and_writes_nothing(kernels, target):
    kernel = kernels[target]
    a = np.arange(7, dtype="float32")
    with pytest.raises(OutOfBoundsError) as info:
        kernel(a, 29)
    np.testing.assert_array_equal(a, np.arange(7, dtype="float32"))
    error = info.value
    assert str(error) == (
        "f(n=29): 'f' stays inside its buffers only where n < 29, and here the load of "
        "A[i // 4] at <string>:5 is outside the shape (7,) of A; instances: S0(i=28); "
        "element: A[7]; params: n=29.  Nothing was run.  If no caller passes such values, "
        "state it in the function: T.assume(n < 29)")
    assert error.evidence.instances == (Instance("S0", {"i": 28}),)
    assert error.evidence.element == Element("A", (7,))
    assert error.values == {"n": 29} and error.condition is kernel.precondition
    with pytest.raises(OutOfBoundsError, match=r"f\(n=2147483647\)"):
        kernel(a, 2**31 - 1)
    np.testing.assert_array_equal(a, np.arange(7, dtype="float32"))


def test_the_numba_kernel_checks_once_before_its_loops(kernels):
    source = kernels["numba"].source
    body = source.split("def kernel(A, n):\n")[1].splitlines()
    assert body[:3] == [
        "    if not (n < 29):",
        "        raise AssertionError('polypad.precondition', n)",
        "    for i in range(n):",
    ]
    assert source.count("polypad.precondition") == 1


def test_the_assume_it_suggests_removes_the_check():
    stated = QUARTERS.replace("    for i", "    T.assume(n <= 28)\n    for i")
    kernel = codegen.build(parse(stated))
    assert kernel.precondition == n.BoolImm(True)
    assert "polypad.precondition" not in kernel.source
    assert isinstance(kernel.bounds, Proved)


def test_outside_for_every_value_the_assumptions_allow_is_still_refused():
    stated = QUARTERS.replace("    for i", "    T.assume(n >= 29)\n    for i")
    with pytest.raises(OutOfBoundsError, match=r"cannot build 'f': for every parameter value "
                       r"its assumptions allow, some access is outside its buffer, e\.g\. "
                       r"load of A\[i // 4\].*params: n=29"):
        codegen.build(parse(stated))


@numba
def test_data_dependent_indices_stay_to_a_run_time_boundscheck():
    func = parse('''
@T.prim_func
def gather(A: T.Buffer((10,), "float32"), B: T.Buffer((4,), "int32"), k: T.int32):
    for i in T.serial(4):
        A[i] = A[B[i]] + A[i + k]
''')
    kernel = codegen.build(func, boundscheck=True)
    assert pp.script(kernel.precondition) == "k >= 0 and k < 7"
    assert isinstance(kernel.bounds, Unknown) and "A[B[i]]" in kernel.bounds.reason
    args = random_args(func, k=6)
    args[1] = np.array([0, 9, 3, 1], dtype="int32")
    run_both(kernel, args)
    with pytest.raises(OutOfBoundsError, match=r"gather\(k=7\)"):
        kernel(*args[:2], 7)


# ---------------------------------------------------------------- where Numba is not exact


WIDE = '''
@T.prim_func
def g(A: T.Buffer((8,), "float32"), n: T.{dtype}, m: T.{dtype}):
    A[n + 3 * m] = 1.0
'''


@pytest.mark.parametrize(("dtype", "condition"), [
    ("int64", "3 * m + n >= 0 and 3 * m + n < 8"), ("uint64", "3 * m + n < 8")])
def test_a_condition_numba_might_not_compute_exactly_is_checked_by_the_wrapper(dtype,
                                                                               condition):
    kernel = codegen.build(parse(WIDE.format(dtype=dtype)))
    assert pp.script(kernel.precondition) == condition
    # Where 3 * m + n wraps it might land inside A: such values are refused too.
    assert isinstance(kernel.bounds, Unknown) and "wraps around" in kernel.bounds.reason
    assert "polypad.precondition" not in kernel.source  # 3 * m may leave int64
    a = np.zeros(8, "float32")
    kernel(a, 1, 2)
    assert a[7] == 1.0
    # Exactly 2**63 + 2 is far outside; 64-bit arithmetic would have wrapped it to 2.
    with pytest.raises(OutOfBoundsError, match=r"g\(n=2, m=3074457345618258602\)"):
        kernel(a, 2, 3074457345618258602)
    assert a.sum() == 1.0


def test_exact_source_and_the_int64_test():
    i32, i64 = n.Var("n", "int32"), n.Var("m", "int64")
    cond = n.And(n.Ge(n.FloorMod(i32 - 3, n.IntImm(4)), n.IntImm(1)), i32 * 5 < 7)
    assert exact_source(cond, lambda v: v.name) == "((((n - 3) % 4) >= 1) and ((n * 5) < 7))"
    assert _fits_int64(cond)
    assert not _fits_int64(i64 * 3 < 7)
    assert _fits_int64(i64 < 7)


# ---------------------------------------------------------------- the command line


def test_polypad_check_prints_the_precondition(tmp_path, capsys):
    path = tmp_path / "kernels.py"
    path.write_text("from polypad import T\n" + QUARTERS)
    assert main(["check", str(path)]) == 0
    assert "precondition: n < 29\n" in capsys.readouterr().out
