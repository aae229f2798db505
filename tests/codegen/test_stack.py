"""Small allocations on the stack (codegen/numba/stack.py): placement, zero-fill, limits."""

import numpy as np
from codegen_support import copy, random_args

import codegen
from codegen.numba.stack import MAX_STACK_BYTES, stack_elements
from polypad.ir.nodes import Buffer
from polypad.script import parse

# Each iteration of i reads its tile before writing all of it: a stale tile from
# the previous iteration (or from another thread) would show in B.
FRESH_EACH_ITERATION = parse('''
@T.prim_func
def fresh(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64, 8), "float32")):
    for i in T.parallel(64):
        tile = T.alloc_buffer((2, 8), "float32")
        for j in T.serial(8):
            tile[0, j] = tile[0, j] + A[i, j]
            tile[1, j] = tile[1, j] + tile[0, j] * T.float32(2)
        for j in T.serial(8):
            B[i, j] = tile[1, j] + tile[0, j]
''')


def test_small_constant_allocation_goes_on_the_stack_and_is_fresh_each_iteration():
    kernel = codegen.build(FRESH_EACH_ITERATION)
    assert "tile = numba.carray(_pp_stack_zeros(16, np.float32), (2, 8))" in kernel.source
    assert "np.zeros" not in kernel.source
    args = random_args(FRESH_EACH_ITERATION, seed=3)
    expected, got = copy(args), copy(args)
    codegen.build(FRESH_EACH_ITERATION, target="python")(*expected)
    kernel(*got)
    kernel(*got)  # a second call: the stack memory is zeroed again
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    np.testing.assert_allclose(got[1], 3 * args[0], rtol=1e-6)


def test_large_or_symbolic_allocations_stay_on_the_heap():
    func = parse('''
@T.prim_func
def big(A: T.Buffer((4,), "float32"), n: T.int32):
    T.assume(n >= 1)
    huge = T.alloc_buffer((4097,), "float32")
    sized = T.alloc_buffer((n,), "float32")
    huge[0] = A[0]
    sized[0] = huge[0]
    A[1] = sized[0]
''')
    source = codegen.build(func).source
    assert "huge = _pp_aligned_zeros((4097), np.float32).reshape((4097,))" in source
    assert "sized = _pp_aligned_zeros((n), np.float32).reshape((n,))" in source
    assert "_pp_stack_zeros" not in source


def test_stack_limit_is_in_bytes():
    limit = MAX_STACK_BYTES // 8
    assert stack_elements(Buffer("a", (limit,), "float64")) == limit
    assert stack_elements(Buffer("a", (limit + 1,), "float64")) is None
    assert stack_elements(Buffer("a", (2 * limit,), "float32")) == 2 * limit
    assert stack_elements(Buffer("a", (2, 3), "int8")) == 6
    assert stack_elements(Buffer("a", (2, 3), "bool")) is None
