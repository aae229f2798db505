"""The Numba target keeps a plain assert where the program has it (review findings):
a vectorized loop's lanes do not go below the loops inside it across an
assert (every lane's stores ran before the first assert), and a bounds check
is not hoisted out of a loop holding one (the assert is often what keeps the
access inside, and it is the error the program raises).  The buffers a failed
call leaves and the error are the reference executor's."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import AssertionFailedError
from polypad.script import parse

LANES = parse('''
@T.prim_func
def lanes(n: T.int32, B: T.Buffer((4, 4), "float32")):
    for v in T.vectorized(4):
        for j in range(4):
            B[v, j] = T.float32(1)
        assert v < n, "v below n"
''')

HOISTED = parse('''
@T.prim_func
def hoisted(n: T.int32, I: T.Buffer((1,), "int32"), A: T.Buffer((8,), "float32"),
            C: T.Buffer((8,), "float32")):
    for j in range(8):
        assert j < n, "j below n"
        C[j] = A[I[0]]
''')


@pytest.mark.parametrize("target", ["python", "numba"])
def test_the_lanes_stop_at_an_assert(target):
    b = np.zeros((4, 4), "float32")
    with pytest.raises(AssertionFailedError, match=r"v below n \(v = 2, n = 2\)"):
        codegen.build(LANES, target)(2, b)
    assert b.sum(axis=1).tolist() == [4, 4, 4, 0]
    b = np.zeros((4, 4), "float32")
    codegen.build(LANES, target)(4, b)
    assert b.sum() == 16


@pytest.mark.parametrize("target", ["python", "numba"])
def test_no_check_is_hoisted_past_an_assert(target):
    kernel = codegen.build(HOISTED, target)
    with pytest.raises(AssertionFailedError, match=r"j below n \(j = 0, n = 0\)"):
        kernel(0, np.array([100], "int32"), np.ones(8, "float32"), np.zeros(8, "float32"))
    c = np.zeros(8, "float32")
    kernel(8, np.array([3], "int32"), np.arange(8, dtype="float32"), c)
    assert c.tolist() == [3.0] * 8
