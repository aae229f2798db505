"""The kernel zoo: each kernel as a plain loop nest, its schedule, and its numpy peer.

Each :class:`Zoo` entry gives

- ``kernel(**sizes)``: the plain nest in polypad's script syntax, written as a
  new user writes it (TVM's block form with ``T.init()``, or an init before
  the loop);
- ``schedule(f)``: the schedule docs/schedules.md teaches for its kind of
  kernel (the recipes there, or ``polypad.examples``), returning the
  ``Schedule``;
- ``peer(*arrays)``: numpy (BLAS where there is one) computing the same
  output, written into the output array;
- ``SIZES`` (the benchmark), ``QUICK`` (``--quick``) and ``TINY`` (the
  tests, against the reference executor).

The eight kernels of issue 24 are here, six more in zoo_extra.py; zoo.py lists
them all.  benchmarks/bench_zoo.py times them; tests/test_zoo.py runs them at
tiny sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import polypad as pp


@dataclass(frozen=True)
class Zoo:
    """One kernel of the zoo (see the module's docstring)."""

    name: str
    kind: str
    kernel: Callable[..., object]
    schedule: Callable[[object], object]
    peer: Callable[..., None]
    peer_name: str
    sizes: dict
    quick: dict
    tiny: dict
    #: Floating-point operations (or elements, for memory-bound kernels) per call,
    #: from the sizes, for the rate column.
    work: Callable[..., float] = lambda **s: 0.0
    unit: str = ""


def _parse(text: str):
    return pp.parse(text)


# -- matmul ------------------------------------------------------------------------

def matmul(n, b_transposed=False, name="matmul"):
    """C = A @ B, all n x n; with ``b_transposed``, A @ B.T (a linear layer's product,
    benchmarks/unseen_kernels.py's)."""
    b = "vj, vk" if b_transposed else "vk, vj"
    return _parse(f'''
@T.prim_func
def {name}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[{b}]
''')


def matmul_schedule(f, tile_i=8, tile_j=32, panel=128):
    """docs/schedules.md, "Matmul": in the BLIS shape.  The panels of C (128
    columns) on the cores; for each, B's panel packed into a buffer of its own
    (``cache_read(..., at=j_0)``: 512 KB, in L2); then, for each 8 x 32 tile of C,
    the tile in a buffer of its own (``cache_write(..., at=j_1)``, before
    ``decompose_reduction``, so that its zeros start in the 16 vector registers),
    1024 steps of ``k`` with 16 broadcast-FMAs each, and the tile stored once."""
    sch = pp.Schedule(f)
    i, j, k = sch.get_loops("C")
    i_0, i_1 = sch.split(i, [None, tile_i])
    j_0, j_1, j_2 = sch.split(j, [None, panel // tile_j, tile_j])
    sch.reorder(j_0, i_0, j_1, k, i_1, j_2)
    tile = sch.cache_write("C", "C", "local", at=j_1)
    init = sch.decompose_reduction("C", k)
    block = sch.cache_read("C", "B", "local", at=j_0)
    sch.parallel(j_0)
    sch.unroll(i_1)
    sch.vectorize(j_2)
    sch.vectorize(init[-1])
    for copy in (block, tile):
        sch.vectorize(sch.get_loops(copy)[-1])
    return sch


def matmul_peer(A, B, C):
    np.matmul(A, B, out=C)


# -- batched small matmul ----------------------------------------------------------

def bmm(b):
    return _parse(f'''
@T.prim_func
def bmm(A: T.Buffer(({b}, 16, 16), "float32"), B: T.Buffer(({b}, 16, 16), "float32"),
        C: T.Buffer(({b}, 16, 16), "float32")):
    for n, i, j, k in T.grid({b}, 16, 16, 16):
        with T.block("C"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                C[vn, vi, vj] = T.float32(0)
            C[vn, vi, vj] = C[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
''')


def bmm_schedule(f):
    """docs/schedules.md, "Batched small matmul": a row of C in one vector."""
    sch = pp.Schedule(f)
    n, i, j, k = sch.get_loops("C")
    sch.reorder(i, k, j)
    init = sch.decompose_reduction("C", k)
    sch.parallel(n)
    sch.vectorize(j)
    sch.vectorize(init[-1])
    return sch


# -- depthwise conv ----------------------------------------------------------------

def depthwise(h, w, c):
    return _parse(f'''
@T.prim_func
def depthwise(I: T.Buffer((1, {h + 2}, {w + 2}, {c}), "float32"),
              W: T.Buffer((3, 3, {c}), "float32"), O: T.Buffer((1, {h}, {w}, {c}), "float32")):
    for n, y, x, ch, ry, rx in T.grid(1, {h}, {w}, {c}, 3, 3):
        with T.block("conv"):
            vn, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRR", [n, y, x, ch, ry, rx])
            with T.init():
                O[vn, vy, vx, vc] = T.float32(0)
            O[vn, vy, vx, vc] = O[vn, vy, vx, vc] + I[vn, vy + vry, vx + vrx, vc] * W[vry, vrx, vc]
''')


def depthwise_schedule(f):
    """docs/schedules.md, "Conv and depthwise conv": channels in lanes around the window."""
    sch = pp.Schedule(f)
    n, y, x, ch, ry, rx = sch.get_loops("conv")
    (ch_init,) = sch.decompose_reduction("conv", ch)
    sch.parallel(y)
    sch.vectorize(ch)
    sch.vectorize(ch_init)
    return sch


def depthwise_peer(I, W, O):
    h, w = O.shape[1], O.shape[2]
    out = O[0]
    out[...] = 0
    for ry in range(3):
        for rx in range(3):
            out += I[0, ry:ry + h, rx:rx + w, :] * W[ry, rx]


# -- transpose ---------------------------------------------------------------------

def transpose(n):
    return _parse(f'''
@T.prim_func
def transpose(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32")):
    for i, j in T.grid({n}, {n}):
        with T.block("B"):
            B[i, j] = A[j, i]
''')


def transpose_schedule(f):
    """docs/schedules.md, "Transpose": 16 x 16 blocks, block rows on the cores."""
    sch = pp.Schedule(f)
    i, j = sch.get_loops("B")
    i_0, j_0, i_1, j_1 = sch.tile([i, j], [16, 16])
    sch.parallel(i_0)
    sch.vectorize(j_1)
    return sch


def transpose_peer(A, B):
    np.copyto(B, A.T)


# -- softmax -----------------------------------------------------------------------

def softmax(n, m):
    return _parse(f'''
@T.prim_func
def softmax(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    M = T.alloc_buffer(({n},), "float32")
    E = T.alloc_buffer(({n}, {m}), "float32")
    S = T.alloc_buffer(({n},), "float32")
    for i, j in T.grid({n}, {m}):
        with T.block("max"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid({n}, {m}):
        with T.block("exp"):
            E[i, j] = T.exp(A[i, j] - M[i])
    for i, j in T.grid({n}, {m}):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("div"):
            B[i, j] = E[i, j] / S[i]
''')


def softmax_schedule(f):
    """docs/schedules.md, "Softmax": four stages inside the row loop."""
    sch = pp.Schedule(f)
    i, j = sch.get_loops("div")
    for producer in ("sum", "exp", "max"):
        sch.compute_at(producer, i)
    sch.store_at("E", i)
    sch.parallel(i)
    sch.vectorize(j)
    sch.vectorize(sch.get_loops("exp")[-1])
    for stage in ("max", "sum"):  # each row in 16 partial results
        _, lanes = sch.split(sch.get_loops(stage)[-1], [None, 16], tail="partition")
        sch.rfactor(lanes)
        sch.vectorize(lanes)
    return sch


def softmax_peer(A, B):
    e = np.exp(A - A.max(axis=1, keepdims=True))
    np.divide(e, e.sum(axis=1, keepdims=True), out=B)


# -- two-stage blur ----------------------------------------------------------------

def blur(h, w):
    return _parse(f'''
@T.prim_func
def blur(A: T.Buffer(({h + 2}, {w + 2}), "float32"), B: T.Buffer(({h}, {w}), "float32")):
    Bx = T.alloc_buffer(({h + 2}, {w}), "float32")
    for y, x in T.grid({h + 2}, {w}):
        with T.block("Bx"):
            Bx[y, x] = (A[y, x] + A[y, x + 1] + A[y, x + 2]) / T.float32(3)
    for y, x in T.grid({h}, {w}):
        with T.block("By"):
            B[y, x] = (Bx[y, x] + Bx[y + 1, x] + Bx[y + 2, x]) / T.float32(3)
''')


def blur_schedule(f):
    """docs/schedules.md, "Stencil and pipeline": bands of rows, each with its own Bx."""
    sch = pp.Schedule(f)
    y, x = sch.get_loops("By")
    y_0, y_1 = sch.split(y, [None, 8])
    sch.compute_at("Bx", y_0)
    sch.store_at("Bx", y_0)
    sch.parallel(y_0)
    sch.vectorize(sch.get_loops("Bx")[-1])
    sch.vectorize(x)
    return sch


def blur_peer(A, B):
    w = B.shape[1]
    bx = (A[:, 0:w] + A[:, 1:w + 1] + A[:, 2:w + 2]) / np.float32(3)
    np.divide(bx[:-2] + bx[1:-1] + bx[2:], np.float32(3), out=B)


# -- max-pool ----------------------------------------------------------------------

def pool(h, w, c):
    return _parse(f'''
@T.prim_func
def pool(A: T.Buffer((1, {h}, {w}, {c}), "float32"),
         P: T.Buffer((1, {h // 2}, {w // 2}, {c}), "float32")):
    for n, y, x, ch, ry, rx in T.grid(1, {h // 2}, {w // 2}, {c}, 2, 2):
        with T.block("pool"):
            vn, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRR", [n, y, x, ch, ry, rx])
            with T.init():
                P[vn, vy, vx, vc] = T.float32(-3.4e38)
            P[vn, vy, vx, vc] = T.max(P[vn, vy, vx, vc], A[vn, vy * 2 + vry, vx * 2 + vrx, vc])
''')


def pool_schedule(f):
    """docs/schedules.md, "Pooling": channels in lanes around the window."""
    sch = pp.Schedule(f)
    n, y, x, ch, ry, rx = sch.get_loops("pool")
    (ch_init,) = sch.decompose_reduction("pool", ch)
    sch.parallel(y)
    sch.vectorize(ch)
    sch.vectorize(ch_init)
    return sch


def pool_peer(A, P):
    _, h, w, c = A.shape
    np.max(A.reshape(h // 2, 2, w // 2, 2, c), axis=(1, 3), out=P[0])


# -- int8 dot ----------------------------------------------------------------------

def dot(n):
    return _parse(f'''
@T.prim_func
def dot(A: T.Buffer(({n},), "int8"), B: T.Buffer(({n},), "int8"), C: T.Buffer((1,), "int32")):
    for k in T.serial({n}):
        with T.block("dot"):
            vk = T.axis.reduce({n}, k)
            with T.init():
                C[0] = 0
            C[0] = C[0] + T.int32(A[vk]) * T.int32(B[vk])
''')


def dot_schedule(f, chunks=1):
    """docs/schedules.md, "Full reduction": the products in vector lanes on one core
    (a million int8 take 0.03 ms, less than waking a second thread costs); with
    ``chunks`` > 1, that many chunks on the cores, one partial sum each."""
    sch = pp.Schedule(f)
    (k,) = sch.get_loops("dot")
    if chunks > 1:
        chunk, k = sch.split(k, [chunks, None])
        sch.rfactor(chunk)
        sch.parallel(chunk)
    else:
        sch.decompose_reduction("dot", k)
    sch.vectorize(k)
    return sch


def dot_peer(A, B, C):
    C[0] = np.dot(A.astype(np.int32), B.astype(np.int32))
