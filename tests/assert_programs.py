"""Packed-style functions opening with a plain ``assert``, shared by the tests of
every target (tests/codegen/test_run_asserts.py, tests/cuda/test_cuda_asserts.py).

The loops are bound to GPU axes so that one text builds for every target (the
CPU targets run a bound loop as a loop)."""

import numpy as np

import polypad as pp
from polypad.errors import AssertionFailedError

MULTIPLE = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    assert n % 4 == 0, "n must be a multiple of 4"
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if bx * 4 + tx < n:
                B[bx * 4 + tx] = A[bx * 4 + tx] * 2.0
''')

#: Stores, then the assert, then more stores: a false assert leaves the first.
AFTER_STORES = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = A[bx * 4 + tx] + 1.0
    assert n % 4 == 0, ("ValueError", ["n must be a multiple of ", "4"])
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if bx * 4 + tx < n:
                B[bx * 4 + tx] = A[bx * 4 + tx] * 2.0
''')

#: A guard the assert makes redundant: ``simplify`` removes it.
GUARDED = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    assert n == 64, "n must be 64"
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if bx * 4 + tx < n:
                B[bx * 4 + tx] = A[bx * 4 + tx] * 2.0
''')

UNGUARDED = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    assert n == 64, "n must be 64"
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = A[bx * 4 + tx] * 2.0
''')


def inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(64).astype(np.float32), np.zeros(64, np.float32)


def outcome(kernel, n: int, seed: int = 0):
    """``(B after the call, the error's class, message and values or None)``."""
    a, b = inputs(seed)
    try:
        kernel(n, a, b)
    except AssertionFailedError as error:
        return b, (type(error), str(error), error.values)
    return b, None
