"""Small kernels for the tuner's tests, and a check of a schedule against the
reference executor."""

from __future__ import annotations

import json

import numpy as np

import codegen
import polypad as pp
from analyses.witness_inputs import make_inputs
from polypad.tuner.measure import trace_from_json, trace_json


def matmul_text(m: int = 16, n: int = 16, k: int = 16, name: str = "matmul",
                b_transposed: bool = False) -> str:
    """TVMScript of C (m x n) = A (m x k) @ B (k x n), in TVM's block form with an init;
    with ``b_transposed``, A @ B.T with B (n x k)."""
    b_shape, b_index = ((n, k), "vj, vk") if b_transposed else ((k, n), "vk, vj")
    return f'''
@T.prim_func
def {name}(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer({b_shape}, "float32"),
           C: T.Buffer(({m}, {n}), "float32")):
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[{b_index}]
'''


MATMUL = matmul_text()

BLUR = '''
@T.prim_func
def blur(A: T.Buffer((18, 22), "float32"), B: T.Buffer((16, 20), "float32")):
    Bx = T.alloc_buffer((18, 20), "float32")
    for y, x in T.grid(18, 20):
        with T.block("Bx"):
            Bx[y, x] = (A[y, x] + A[y, x + 1] + A[y, x + 2]) / T.float32(3)
    for y, x in T.grid(16, 20):
        with T.block("By"):
            B[y, x] = (Bx[y, x] + Bx[y + 1, x] + Bx[y + 2, x]) / T.float32(3)
'''

PREFIX = '''
@T.prim_func
def prefix(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):
    for i in T.serial(1, 14):
        with T.block("scan"):
            B[i] = B[i - 1] + A[i]
'''


DOT = '''
@T.prim_func
def dot(A: T.Buffer((320,), "int8"), B: T.Buffer((320,), "int8"), C: T.Buffer((1,), "int32")):
    for k in T.serial(320):
        with T.block("dot"):
            vk = T.axis.reduce(320, k)
            with T.init():
                C[0] = 0
            C[0] = C[0] + T.int32(A[vk]) * T.int32(B[vk])
'''


def dot():
    return pp.parse(DOT)


def matmul():
    return pp.parse(MATMUL)


def blur():
    return pp.parse(BLUR)


def prefix():
    return pp.parse(PREFIX)


def assert_log_replays(original, sch) -> None:
    """``sch``'s trace, written to a tuning log's JSON and read back, replays on
    ``original`` to the same function."""
    replayed = trace_from_json(json.loads(json.dumps(trace_json(sch.trace)))).apply_to(original)
    pp.assert_structural_equal(replayed.func, sch.func)


def assert_matches_reference(original, scheduled, seed: int = 1) -> None:
    """``scheduled`` (built with Numba) computes what ``original`` does under the
    reference executor, on random inputs."""
    want = make_inputs(original, np.random.default_rng(seed))
    have = [np.copy(a) for a in want]
    codegen.build(original, target="python")(*want)
    codegen.build(scheduled)(*have)
    for w, h in zip(want, have):
        np.testing.assert_allclose(h, w, rtol=1e-4, atol=1e-4)


SOFTMAX = '''
@T.prim_func
def softmax(A: T.Buffer((6, 40), "float32"), B: T.Buffer((6, 40), "float32")):
    M = T.alloc_buffer((6,), "float32")
    E = T.alloc_buffer((6, 40), "float32")
    S = T.alloc_buffer((6,), "float32")
    for i, j in T.grid(6, 40):
        with T.block("max"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid(6, 40):
        with T.block("exp"):
            E[i, j] = T.exp(A[i, j] - M[i])
    for i, j in T.grid(6, 40):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vj]
    for i, j in T.grid(6, 40):
        with T.block("div"):
            B[i, j] = E[i, j] / S[i]
'''


def softmax():
    return pp.parse(SOFTMAX)


def softmax_text(n: int = 6, m: int = 40) -> str:
    """:data:`SOFTMAX` at ``n`` x ``m``."""
    return SOFTMAX.replace("(6, 40)", f"({n}, {m})").replace("(6,)", f"({n},)").replace(
        "T.grid(6, 40)", f"T.grid({n}, {m})")


STENCIL = '''
@T.prim_func
def stencil(A: T.Buffer((34,), "float32"), B: T.Buffer((32,), "float32")):
    for i in T.serial(32):
        with T.block("B"):
            B[i] = T.float32(0.25) * A[i] + T.float32(0.5) * A[i + 1] + T.float32(0.25) * A[i + 2]
'''
