"""Functions and helpers the tiling tests share: run on seeded inputs, compare, replay."""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule

HEAD = '@T.prim_func\ndef f(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):\n'

SCALE = HEAD + '''
    with T.block("compute"):
        for i in T.serial(14):
            B[i] = A[i] * 2
'''

SKEWED = '''
@T.prim_func
def f(A: T.Buffer((10, 10), "int32")):
    for i in T.serial(1, 10):
        for j in T.serial(9):
            A[i, j] = A[i - 1, j + 1] + 1
'''

TRANSPOSE = '''
@T.prim_func
def f(A: T.Buffer((6, 10), "int32"), B: T.Buffer((10, 6), "int32")):
    with T.block("t"):
        for i in T.serial(6):
            for j in T.serial(10):
                B[j, i] = A[i, j] + i
'''

SYMBOLIC = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    T.assume(0 <= n and n <= 64)
    for i in T.serial(n):
        B[i] = A[i] + 3
'''


def run(func: n.PrimFunc, target: str = "python", seed: int = 0, **scalars) -> list:
    """Every buffer of ``func`` after one run on seeded random inputs."""
    rng = np.random.default_rng(seed)
    args, arrays = [], []
    for p in func.params:
        if isinstance(p, n.Buffer):
            arrays.append(rng.integers(-9, 9, p.shape).astype(p.dtype))
            args.append(arrays[-1])
        else:
            args.append(scalars[p.name])
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    codegen.build(func, target=target, fastmath=None)(*args)
    return arrays


def same_results(before, after, **scalars) -> None:
    for want, got in zip(run(before, **scalars), run(after, **scalars), strict=True):
        np.testing.assert_array_equal(got, want)


def replays(sch: Schedule, original: n.PrimFunc) -> None:
    """The trace rebuilds ``sch.func``, as an object and as printed Python."""
    assert_structural_equal(sch.trace.apply_to(original).func, sch.func)
    again = Schedule(original)
    exec(str(sch.trace), {"sch": again})
    assert_structural_equal(again.func, sch.func)
