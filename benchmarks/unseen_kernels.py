"""Kernels a new user brings, which no recipe of docs/schedules.md covers and the
search was not tuned on: ``bench_autoschedule.py --unseen`` searches them with no
hand schedule to compare, only the plain nest and numpy.

- ``A @ B.T``, a linear layer's product (the weights stored one output per row);
- a column sum, the reduction over the outer axis;
- a 1-D convolution of 17 taps;
- a bias and ReLU over a matrix (elementwise, a broadcast row);
- an outer product (a store-bound broadcast);
- ``A.T @ x``, a matrix-vector product down the columns (the reduction outside);
- a 3-D add with a broadcast middle axis (``b[n, 0, w]``);
- a 5 x 5 stencil, one stage (the blur's taps, as a reduction);
- a linear layer, ``relu(X @ W + b)``: a product and its epilogue.
"""

from __future__ import annotations

import numpy as np
from zoo_kernels import matmul

import polypad as pp


def matmul_nt(n):
    return matmul(n, b_transposed=True, name="matmul_nt")


def column_sum(n, m):
    return pp.parse(f'''
@T.prim_func
def column_sum(A: T.Buffer(({n}, {m}), "float32"), S: T.Buffer(({m},), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("S"):
            vi, vj = T.axis.remap("RS", [i, j])
            with T.init():
                S[vj] = T.float32(0)
            S[vj] = S[vj] + A[vi, vj]
''')


def conv1d(n, taps=17):
    return pp.parse(f'''
@T.prim_func
def conv1d(X: T.Buffer(({n + taps - 1},), "float32"), W: T.Buffer(({taps},), "float32"),
           Y: T.Buffer(({n},), "float32")):
    for i, r in T.grid({n}, {taps}):
        with T.block("Y"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                Y[vi] = T.float32(0)
            Y[vi] = Y[vi] + X[vi + vr] * W[vr]
''')


def bias_relu(n, m):
    return pp.parse(f'''
@T.prim_func
def bias_relu(X: T.Buffer(({n}, {m}), "float32"), b: T.Buffer(({m},), "float32"),
              Y: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(X[vi, vj] + b[vj], T.float32(0))
''')


def outer(n):
    return pp.parse(f'''
@T.prim_func
def outer(x: T.Buffer(({n},), "float32"), y: T.Buffer(({n},), "float32"),
          Z: T.Buffer(({n}, {n}), "float32")):
    for i, j in T.grid({n}, {n}):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = x[vi] * y[vj]
''')


def gemv_t(n, m):
    return pp.parse(f'''
@T.prim_func
def gemv_t(A: T.Buffer(({n}, {m}), "float32"), x: T.Buffer(({n},), "float32"),
           y: T.Buffer(({m},), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("y"):
            vi, vj = T.axis.remap("RS", [i, j])
            with T.init():
                y[vj] = T.float32(0)
            y[vj] = y[vj] + A[vi, vj] * x[vi]
''')


def add_broadcast(n, h, w):
    return pp.parse(f'''
@T.prim_func
def add_broadcast(X: T.Buffer(({n}, {h}, {w}), "float32"), b: T.Buffer(({n}, 1, {w}), "float32"),
                  Y: T.Buffer(({n}, {h}, {w}), "float32")):
    for i, j, k in T.grid({n}, {h}, {w}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            Y[vi, vj, vk] = X[vi, vj, vk] + b[vi, 0, vk]
''')


def stencil5(n, taps=5):
    return pp.parse(f'''
@T.prim_func
def stencil5(A: T.Buffer(({n + taps - 1}, {n + taps - 1}), "float32"),
             W: T.Buffer(({taps}, {taps}), "float32"), B: T.Buffer(({n}, {n}), "float32")):
    for y, x, ry, rx in T.grid({n}, {n}, {taps}, {taps}):
        with T.block("B"):
            vy, vx, vry, vrx = T.axis.remap("SSRR", [y, x, ry, rx])
            with T.init():
                B[vy, vx] = T.float32(0)
            B[vy, vx] = B[vy, vx] + A[vy + vry, vx + vrx] * W[vry, vrx]
''')


def linear_relu(m, n, k):
    return pp.parse(f'''
@T.prim_func
def linear_relu(X: T.Buffer(({m}, {k}), "float32"), W: T.Buffer(({k}, {n}), "float32"),
                b: T.Buffer(({n},), "float32"), Y: T.Buffer(({m}, {n}), "float32")):
    Z = T.alloc_buffer(({m}, {n}), "float32")
    for i, j, r in T.grid({m}, {n}, {k}):
        with T.block("Z"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                Z[vi, vj] = T.float32(0)
            Z[vi, vj] = Z[vi, vj] + X[vi, vr] * W[vr, vj]
    for i, j in T.grid({m}, {n}):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(Z[vi, vj] + b[vj], T.float32(0))
''')


def _linear_relu_peer(X, W, b, Y):
    np.matmul(X, W, out=Y)
    np.add(Y, b, out=Y)
    np.maximum(Y, np.float32(0), out=Y)


def _stencil5_peer(A, W, B):
    # numpy's own: 25 shifted multiply-adds over the whole image
    n = B.shape[0]
    B[...] = 0
    for ry in range(W.shape[0]):
        for rx in range(W.shape[1]):
            B += A[ry:ry + n, rx:rx + n] * W[ry, rx]


def _conv1d_peer(X, W, Y):
    np.copyto(Y, np.convolve(X, W[::-1], mode="valid"))


#: name, kernel, sizes, quick sizes, small sizes (the check against the reference
#: executor), numpy peer
UNSEEN = [
    ("A @ B.T", matmul_nt, dict(n=1024), dict(n=256), dict(n=16),
     lambda A, B, C: np.matmul(A, B.T, out=C)),
    ("column sum", column_sum, dict(n=4096, m=2048), dict(n=1024, m=512), dict(n=8, m=40),
     lambda A, S: np.sum(A, axis=0, out=S)),
    ("conv1d 17", conv1d, dict(n=1 << 20), dict(n=1 << 16), dict(n=40), _conv1d_peer),
    ("bias relu", bias_relu, dict(n=2048, m=2048), dict(n=512, m=512), dict(n=4, m=40),
     lambda X, b, Y: np.maximum(X + b, np.float32(0), out=Y)),
    ("outer", outer, dict(n=4096), dict(n=1024), dict(n=24),
     lambda x, y, Z: np.multiply.outer(x, y, out=Z)),
    ("A.T @ x", gemv_t, dict(n=4096, m=4096), dict(n=1024, m=1024), dict(n=24, m=40),
     lambda A, x, y: np.matmul(A.T, x, out=y)),
    ("add bcast", add_broadcast, dict(n=64, h=256, w=256), dict(n=16, h=64, w=256),
     dict(n=2, h=3, w=40), lambda X, b, Y: np.add(X, b, out=Y)),
    ("stencil 5x5", stencil5, dict(n=2048), dict(n=512), dict(n=20), _stencil5_peer),
    ("linear relu", linear_relu, dict(m=512, n=1024, k=1024), dict(m=128, n=256, k=256),
     dict(m=8, n=40, k=24), _linear_relu_peer),
]
