"""Shared by the tests of the loop-kind and reduction primitives: kernels, random
inputs, and the checks every rewrite gets (script text, read-back, replay)."""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse
from polypad.script.printer import script

PREFIX_SUM = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(1, 8):
        B[i] = B[i - 1] + A[i]
'''

MAP = '''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        C[i, j] = A[i, j] * T.float32(2)
'''

# A row sum whose init sits in the loop over i, as a hand-written kernel has it.
ROW_SUM = '''
@T.prim_func
def f(A: T.Buffer((8, 16), "{t}"), B: T.Buffer((8,), "{t}")):
    with T.block("sum"):
        for i in T.serial(8):
            B[i] = {zero}
            for k in T.serial(16):
                B[i] = B[i] + A[i, k]
'''

# The reduction alone, accumulating into B, over a k that does not divide by 4.
ACCUMULATE = '''
@T.prim_func
def f(A: T.Buffer((8, 14), "{t}"), B: T.Buffer((8,), "{t}")):
    for i, k in T.grid(8, 14):
        B[i] = B[i] + A[i, k]
'''


def row_sum(dtype: str = "float32") -> n.PrimFunc:
    return parse(ROW_SUM.format(t=dtype, zero="T.float32(0)" if dtype == "float32" else "0"))


def accumulate(dtype: str = "float32") -> n.PrimFunc:
    return parse(ACCUMULATE.format(t=dtype))


def inputs(func: n.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if p.dtype.startswith("float"):
            out.append(rng.standard_normal(p.shape).astype(p.dtype))
        else:
            out.append(rng.integers(-9, 9, p.shape).astype(p.dtype))
    return out


def run(func: n.PrimFunc, target: str = "python", seed: int = 0) -> list[np.ndarray]:
    arrays = inputs(func, seed)
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    codegen.build(func, target=target, fastmath=None)(*arrays)
    return arrays


def same_bits(original: n.PrimFunc, scheduled: n.PrimFunc) -> None:
    """``scheduled`` leaves every buffer as ``original`` does, bit for bit, under strict
    IEEE: on the reference executor and on Numba, against the original on the first."""
    want = inputs(original)
    codegen.build(original, target="python", fastmath=None)(*want)
    for target in ("python", "numba"):
        got = inputs(original)
        codegen.build(scheduled, target=target, fastmath=None)(*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)


def assert_same(want: list[np.ndarray], got: list[np.ndarray]) -> None:
    """Equal buffers: exactly for integers, to rounding for reassociated floats."""
    for w, g in zip(want, got, strict=True):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


def check_schedule(original: n.PrimFunc, sch: Schedule, expected: str) -> None:
    """The script reads as ``expected``, verifies, reads back, and replays from the trace."""
    verify(sch.func)
    assert_structural_equal(sch.func, parse(expected))
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert_structural_equal(sch.trace.apply_to(original).func, sch.func)
