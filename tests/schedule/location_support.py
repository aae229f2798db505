"""Functions and helpers the location-primitive tests share."""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# A 3-point stencil: C, tiled by io/ii, reads B[i], B[i + 1], B[i + 2].
STENCIL_HEAD = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
'''
PRODUCER = '''    for i in T.serial(18):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
'''
CONSUMER = '''    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]
'''
STENCIL = STENCIL_HEAD + PRODUCER + CONSUMER

REDUCTION = '''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        with T.block("B"):
            B[i] = T.float32(0)
            for k in T.serial(4):
                B[i] = B[i] + A[i, k]
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] * T.float32(2)
'''


def run(func, arrays, target: str = "python") -> list[np.ndarray]:
    out = [a.copy() for a in arrays]
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    codegen.build(func, target=target, fastmath=None)(*out)
    return out


def random_inputs(func, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(int(e) for e in p.shape)).astype(p.dtype)
            for p in func.params]


def same_results(before, after, target: str = "python") -> None:
    """``after`` (built for ``target``) leaves every buffer as ``before`` (the reference
    interpreter) does, from the same random inputs."""
    arrays = random_inputs(before)
    for want, got in zip(run(before, arrays), run(after, arrays, target), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def scheduled(src: str, primitive: str, *args) -> Schedule:
    sch = Schedule(parse(src))
    getattr(sch, primitive)(*args)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(parse(src)).func, sch.func)
    return sch
