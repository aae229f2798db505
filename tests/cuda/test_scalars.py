"""A local buffer whose every access has constant indices is a variable per element
(codegen.cuda.scalars); any other stays a ``cuda.local.array``.  Each kernel against the
reference executor."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np

import codegen
import polypad as pp

TEXT = '''
@T.prim_func
def staged(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        L = T.alloc_buffer((4,), "float32", scope="local")
        for i in LOOP(4):
            L[i] = VALUE
        for i in LOOP(4):
            B[tx * 4 + i] = L[3 - i]
'''


def _kernel(loop: str, value: str = "A[tx * 4 + i] * T.float32(2)"):
    func = pp.parse(TEXT.replace("LOOP", loop).replace("VALUE", value))
    source = codegen.build(func, target="cuda").source
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
    return source


def test_constant_indices_make_variables():
    source = _kernel("T.unroll")
    assert "cuda.local.array" not in source
    lines = [line.strip() for line in source.splitlines()]
    assert "L_3 = A_v_3 * np.float32(2.0)" in lines  # the loads first (codegen.cuda.batch)
    assert "B[tx * 4 + 3] = L_0" in lines


def test_an_index_that_varies_keeps_the_array():
    source = _kernel("range")
    assert "L = cuda.local.array((4,), np.float32)" in source
    assert "L[i] = A[tx * 4 + i] * np.float32(2.0)" in source


def test_a_value_numba_computes_in_integers_keeps_the_array():
    # math.floor is an int64 in Numba: a float32 array converts it back, a variable
    # would hold an int64 or widen to float64.
    source = _kernel("T.unroll", "T.floor(A[tx * 4 + i])")
    assert "L = cuda.local.array((4,), np.float32)" in source


def test_a_value_numba_computes_in_integers_through_a_let_keeps_the_array():
    # The floor reaches the store through a let: still an int64 in Numba, so still an
    # array, which converts the product back to float32 at each store.
    func = pp.parse('''
@T.prim_func
def staged(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        L = T.alloc_buffer((4,), "float32", scope="local")
        for i in T.unroll(4):
            v: T.float32 = T.floor(A[tx * 4 + i])
            L[i] = v * T.float32(0.5)
        for i in T.unroll(4):
            B[tx * 4 + i] = L[3 - i]
''')
    source = codegen.build(func, target="cuda").source
    assert "L = cuda.local.array((4,), np.float32)" in source
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
