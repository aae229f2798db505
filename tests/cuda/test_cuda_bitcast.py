"""``T.reinterpret`` of a scalar (a value bit cast, TOPI ``fast_exp``'s ``2 ** n`` built in
a float's exponent bits) on the cuda target: a call of ``codegen.cuda.bits``, since
numba.cuda has no ``view`` of a scalar.  The simulator runs numpy's ``view``; the
GPU's intrinsic (one LLVM ``bitcast``) runs here on Numba's CPU target."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest
from numba import njit
from numba.extending import intrinsic

import polypad as pp
from codegen.cuda.bits import bitcast_typer
from polypad.errors import BuildError

BITS = pp.parse('''
@T.prim_func
def bits(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = T.reinterpret("float32", A[bx * 8 + tx] + 1)
''')

# fast_exp's trick: 2 ** floor(x) as the float whose exponent bits are floor(x) + 127.
EXP2 = pp.parse('''
@T.prim_func
def exp2(X: T.Buffer((4, 8), "float32"), Y: T.Buffer((4, 8), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            Y[bx, tx] = T.reinterpret("float32", T.shift_left(
                T.Cast("int32", T.floor(X[bx, tx])) + 127, 23)) * T.float32(3)
''')


def test_a_bit_cast_is_a_call_of_the_bits_module_and_runs_as_numpys_view():
    a = np.random.default_rng(1).integers(0, 2 ** 30, 16).astype("int32")
    gpu, ref = K.run_both(BITS, [a, np.zeros(16, "float32")])
    np.testing.assert_array_equal(gpu[1].view(np.int32), a + 1)
    np.testing.assert_array_equal(gpu[1].view(np.int32), ref[1].view(np.int32))
    source = K.codegen.build(BITS, target="cuda").source
    assert "from codegen.cuda import bits as _pp_bits  # value bit casts, version 1\n" in source
    assert ("B[bx * 8 + tx] = _pp_bits.as_float32(np.int32(np.int32(np.int64(A[bx * 8 + tx] + 1))))"
            in source)
    assert ".view(" not in source


def test_fast_exps_power_of_two_in_the_exponent_bits():
    x = np.random.default_rng(2).uniform(-20, 20, (4, 8)).astype("float32")
    gpu, ref = K.run_both(EXP2, [x, np.zeros((4, 8), "float32")])
    np.testing.assert_array_equal(gpu[1], ref[1])
    np.testing.assert_array_equal(gpu[1], np.float32(3) * np.exp2(np.floor(x)))


@pytest.mark.parametrize("source, target", [("int32", "float32"), ("float32", "int32"),
                                            ("int64", "float64"), ("float64", "uint64")])
def test_the_gpus_intrinsic_is_llvms_bitcast_giving_numpys_view(source, target):
    """The GPU intrinsic's typing and LLVM, compiled by Numba's CPU target."""
    cast = intrinsic(bitcast_typer(target))

    @njit
    def run(values, out):
        for k in range(values.shape[0]):
            out[k] = cast(values[k])

    values = np.random.default_rng(3).integers(-2 ** 20, 2 ** 20, 5).astype(source)
    out = np.zeros(5, target)
    run(values, out)
    assert out.tobytes() == values.tobytes()


def test_the_intrinsic_types_no_value_of_another_width():
    from numba import types

    assert bitcast_typer("float32")(None, types.int64) is None
    assert bitcast_typer("float32")(None, types.int32) is not None


SHIFTS = pp.parse('''
@T.prim_func
def shifts(A: T.Buffer((16,), "int32"), S: T.Buffer((16,), "int32"),
           L: T.Buffer((16,), "int32"), R: T.Buffer((16,), "int32"),
           N: T.Buffer((16,), "int32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        L[tx] = T.shift_left(A[tx], S[tx])
        R[tx] = T.shift_right(A[tx], S[tx])
        N[tx] = T.bitwise_not(A[tx])
''')


def test_shifts_by_any_amount_give_numpys_answer():
    """An amount outside [0, 32) is tested where it runs: 0, or the sign shifting right."""
    rng = np.random.default_rng(4)
    a = rng.integers(-2 ** 31, 2 ** 31, 16).astype("int32")
    s = rng.integers(-3, 40, 16).astype("int32")
    s[:3] = (0, 31, 32)
    gpu, ref = K.run_both(SHIFTS, [a, s] + [np.zeros(16, "int32")] * 3)
    for got, want in zip(gpu, ref, strict=True):
        np.testing.assert_array_equal(got, want)
    source = K.codegen.build(SHIFTS, target="cuda").source
    assert "L[tx] = _pp_shift_left_int32(A[tx], S[tx])" in source
    assert "def _pp_shift_left_int32(value, amount):\n    if 0 <= amount < 32:" \
        in source
    # fast_exp's constant amount needs no test.
    assert ("np.int32((np.int32(np.int64(np.int32(math.floor(X[bx, tx])) + 127))) << (23))"
            in K.codegen.build(EXP2, target="cuda").source)


def test_off_the_simulator_each_cast_is_a_numba_cuda_intrinsic():
    """The GPU's definitions, made in a process of their own (this one runs the
    simulator); compiling them needs NVVM, which the GPU check runs."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("from codegen.cuda import bits\n"
            "print(sorted({type(getattr(bits, f'as_{t}')).__name__ for t in bits.TARGETS}))")
    # The project first, then whatever the caller's path holds (the GPU check's wheels).
    path = os.pathsep.join(x for x in (str(root), os.environ.get("PYTHONPATH")) if x)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "PYTHONPATH": path}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=root)
    assert out.stdout.strip() == "['_Intrinsic']"


def test_a_bit_cast_between_widths_is_refused_saying_the_widths_differ():
    f = pp.parse('''
@T.prim_func
def bits(A: T.Buffer((16,), "int64"), B: T.Buffer((16,), "float32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        B[tx] = T.reinterpret("float32", A[tx])
''')
    with pytest.raises(BuildError, match=r'^cannot build \'bits\': T\.reinterpret\("float32", '
                                         r"<int64>\) at line 5 reads the bits of a 64-bit "
                                         r"int64 as a 32-bit float32: the widths differ"):
        K.codegen.build(f, target="cuda")
