"""Shifts on the cuda target (:mod:`codegen.cuda.shifts`): numpy's answer for every integer
dtype and every amount, in or out of ``[0, bits)``, as the reference executor gives it;
a shift whose amount is not proved in range is a call of a device function of the
module, which takes each operand once, so nested shifts make source linear in depth."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import polypad as pp

# Per dtype: each shift by a loaded amount, by bits - 1, by the thread index (an amount
# the ranges prove in [0, 8)), and of the thread index by bits - 1.
FORMS = '''
@T.prim_func
def f(A: T.Buffer((8,), "{dt}"), S: T.Buffer((8,), "{dt}"),
      B: T.Buffer((8, 8), "{dt}")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[0, tx] = T.shift_left(A[tx], S[tx])
            B[1, tx] = T.shift_right(A[tx], S[tx])
            B[2, tx] = T.shift_left(A[tx], T.{dt}({top}))
            B[3, tx] = T.shift_right(A[tx], T.{dt}({top}))
            B[4, tx] = T.shift_left(T.Cast("{dt}", tx) + A[tx], T.Cast("{dt}", tx))
            B[5, tx] = T.shift_right(T.Cast("{dt}", tx) + A[tx], T.Cast("{dt}", tx))
            B[6, tx] = T.shift_left(T.Cast("{dt}", tx), T.{dt}({top}))
            B[7, tx] = T.shift_right(T.Cast("{dt}", tx), T.{dt}({top}))
'''


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_every_dtype_and_amount_gives_the_reference_answer(dt):
    bits, info = np.dtype(dt).itemsize * 8, np.iinfo(dt)
    a = np.array([info.min, -1 if info.min < 0 else 1, 1, 5, info.max, 3, 0, 7], dt)
    if info.min < 0:
        s = np.array([-1, 0, 1, bits - 1, bits, bits + 3, 2, -5], dt)
    else:
        s = np.array([0, 1, bits - 1, bits, bits + 3, 2, info.max, 3], dt)
    func = pp.parse(FORMS.format(dt=dt, top=bits - 1))
    gpu, ref = K.run_both(func, [a, s, np.zeros((8, 8), dt)])
    np.testing.assert_array_equal(gpu[2], ref[2])


def nested(depth: int):
    value = "A[tx]"
    for _ in range(depth):
        value = f"T.shift_right({value}, S[tx])"
    return pp.parse(f'''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), S: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[tx] = {value}
''')


def store_line(func) -> str:
    source = K.codegen.build(func, target="cuda").source
    return next(line.strip() for line in source.splitlines()
                if line.strip().startswith("B[tx] ="))


def test_nested_shifts_print_each_operand_once():
    """Each operand once: the store grows by one call per level (it doubled per level
    when the guard was printed in place), and the module defines the function once."""
    assert store_line(nested(2)) == ("B[tx] = _pp_shift_right_int32("
                                     "_pp_shift_right_int32(A[tx], S[tx]), S[tx])")
    lengths = [len(store_line(nested(d))) for d in (2, 4, 8, 16)]
    assert [b - a for a, b in zip(lengths, lengths[1:])] == [60, 120, 240]
    func = nested(8)
    source = K.codegen.build(func, target="cuda").source
    assert source.count("def _pp_shift_right_int32(value, amount):") == 1
    rng = np.random.default_rng(6)
    a = rng.integers(-2 ** 31, 2 ** 31, 8).astype("int32")
    s = np.array([-1, 0, 1, 2, 3, 31, 32, 40], "int32")
    gpu, ref = K.run_both(func, [a, s, np.zeros(8, "int32")])
    np.testing.assert_array_equal(gpu[2], ref[2])
