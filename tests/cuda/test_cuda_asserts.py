"""The cuda target runs a top-level plain ``assert`` on the host, between launches.

It raises the reference executor's :class:`AssertionFailedError` (class, message,
values), after the launches before it have written their results back; an
assert inside a kernel is refused by name.  Run on Numba's CUDA simulator
(conftest.py).  The CPU targets' half is tests/codegen/test_run_asserts.py.
"""

import numpy as np
import pytest
from assert_programs import AFTER_STORES, MULTIPLE, UNGUARDED, outcome

import codegen
import polypad as pp
from polypad.errors import BuildError


@pytest.mark.parametrize("func", [MULTIPLE, AFTER_STORES, UNGUARDED],
                         ids=["multiple", "after_stores", "unguarded"])
def test_cuda_agrees_with_the_reference_on_good_and_bad_n(func):
    reference = codegen.build(func, target="python")
    kernel = codegen.build(func, target="cuda")
    for size in (4, 6, 8, 64):
        want_b, want_error = outcome(reference, size, seed=size)
        got_b, got_error = outcome(kernel, size, seed=size)
        assert got_error == want_error, size
        np.testing.assert_array_equal(got_b, want_b)
    assert outcome(reference, 6)[1] is not None  # the bad n raised


def test_an_assert_inside_a_kernel_is_refused_by_name():
    f = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        assert n % 4 == 0, "n must be a multiple of 4"
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = A[bx * 4 + tx]
''')
    with pytest.raises(BuildError, match="the assert at line 5 is inside a kernel"):
        codegen.build(f, target="cuda")
    # The CPU targets run it where it stands.
    for target in ("python", "numba"):
        _, error = outcome(codegen.build(f, target=target), 6)
        assert error is not None and error[2] == {"n": 6}
