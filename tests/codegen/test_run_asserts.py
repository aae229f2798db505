"""A plain ``assert`` runs in the reference executor and in Numba kernels, always.

A false one raises :class:`AssertionFailedError` with TVM's message and the
values of the condition's variables, where it stands (after the stores before
it).  An assert on a buffer, pointer or opaque call is still refused by name.
The cuda target's half is tests/cuda/test_cuda_asserts.py.
"""

import numpy as np
import pytest
from assert_programs import AFTER_STORES, GUARDED, MULTIPLE, UNGUARDED, inputs, outcome

import codegen
import polypad as pp
from polypad import transform
from polypad.errors import AssertionFailedError, BuildError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.semantics.asserts import assert_message
from polypad.semantics.lowering import lower

TARGETS = ("python", "numba")
MESSAGE = ("assert n % 4 == 0 failed in 'f' at <string>:4: n must be a multiple of 4 "
           "(n = 6)")


@pytest.fixture(scope="module")
def kernels():
    return {t: codegen.build(MULTIPLE, target=t) for t in TARGETS}


@pytest.mark.parametrize("size", [0, 4, 8, 60, 64])
def test_a_true_assert_runs_as_nothing_and_every_target_agrees(kernels, size):
    reference, error = outcome(kernels["python"], size, seed=size)
    assert error is None
    a, _ = inputs(seed=size)
    np.testing.assert_array_equal(reference[:size], a[:size] * np.float32(2))
    assert not reference[size:].any()
    got, error = outcome(kernels["numba"], size, seed=size)
    assert error is None
    np.testing.assert_array_equal(got, reference)


@pytest.mark.parametrize("target", TARGETS)
def test_a_false_assert_raises_with_the_message_and_the_values(kernels, target):
    b, error = outcome(kernels[target], 6)
    assert error == (AssertionFailedError, MESSAGE, {"n": 6})
    assert not b.any()  # it raised before the loop


def test_it_is_checked_without_check_assumptions_and_lowering_keeps_it():
    lowered = lower(MULTIPLE)
    assert [x.message for x in walk(lowered.body) if isinstance(x, n.Assert)] == [
        "'n must be a multiple of 4'"]


@pytest.mark.parametrize("target", TARGETS)
def test_an_assert_after_stores_runs_after_them(target):
    kernel = codegen.build(AFTER_STORES, target=target)
    a, _ = inputs()
    b, error = outcome(kernel, 6)
    assert error == (AssertionFailedError,
                     "assert n % 4 == 0 failed in 'f' at <string>:7: ValueError: n must be a "
                     "multiple of 4 (n = 6)", {"n": 6})
    np.testing.assert_array_equal(b, a + np.float32(1))  # the first loop ran, not the second
    b, error = outcome(kernel, 8)
    assert error is None
    np.testing.assert_array_equal(b[:8], a[:8] * np.float32(2))
    np.testing.assert_array_equal(b[8:], a[8:] + np.float32(1))


def test_a_guard_the_assert_makes_redundant_goes_and_the_kernel_still_checks():
    pp.assert_structural_equal(transform.simplify(GUARDED), UNGUARDED)
    for rewrite in (transform.remove_no_op, transform.simplify):
        kept = [x for x in walk(rewrite(GUARDED).body) if isinstance(x, n.Assert)]
        assert len(kept) == 1
    for target in TARGETS:
        before = codegen.build(GUARDED, target=target)
        after = codegen.build(UNGUARDED, target=target)
        b0, e0 = outcome(before, 64, seed=1)
        b1, e1 = outcome(after, 64, seed=1)
        assert e0 is None and e1 is None
        np.testing.assert_array_equal(b0, b1)
        # The fact never outlives its check: at n = 8 the kernel without the guard
        # would write all 64 elements; it raises first.
        b, error = outcome(after, 8)
        assert error == (AssertionFailedError, "assert n == 64 failed in 'f' at <string>:4: "
                         "n must be 64 (n = 8)", {"n": 8}), target
        assert not b.any()


def test_an_assert_on_a_buffer_is_still_refused_by_name():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    assert A[0] > 0.0, "A[0] must be positive"
    for i in range(8):
        B[i] = A[i]
''')
    for target in TARGETS:
        with pytest.raises(BuildError, match="assert at line 4 is a check whose condition "
                                             "reads a buffer, a pointer or an opaque call"):
            codegen.build(f, target=target)


@pytest.mark.parametrize(("text", "message"), [
    ("'n must be 64'", "n must be 64"),
    ("('ValueError', ['n is ', 'odd'])", "ValueError: n is odd"),
    ("some_call(n)", "some_call(n)"),
])
def test_the_message_is_tvms(text, message):
    assert assert_message(text) == message


def test_an_assert_in_a_parallel_loop_runs_in_order_in_numba():
    f = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        assert i < n, "i must stay below n"
        B[i] = A[i] * 2.0
''')
    a, _ = inputs()
    for target in TARGETS:  # Numba runs the loop serially: it may raise
        b, error = outcome(codegen.build(f, target=target), 5)
        assert error == (AssertionFailedError, "assert i < n failed in 'f' at <string>:5: "
                         "i must stay below n (i = 5, n = 5)", {"i": 5, "n": 5}), target
        np.testing.assert_array_equal(b[:5], a[:5] * np.float32(2))
        assert not b[5:].any()
