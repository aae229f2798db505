"""The zoo's kernels beyond the eight of issue 24: layer norm, matrix-vector, argmax,
a 1-D stencil, a prefix sum and the shipped row sum (see zoo_kernels.py)."""

from __future__ import annotations

import numpy as np

import polypad as pp
from polypad.examples import row_summation


def _parse(text: str):
    return pp.parse(text)


# -- layer norm --------------------------------------------------------------------

def layernorm(n, m):
    return _parse(f'''
@T.prim_func
def layernorm(A: T.Buffer(({n}, {m}), "float32"), G: T.Buffer(({m},), "float32"),
              Be: T.Buffer(({m},), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    S = T.alloc_buffer(({n},), "float32")
    Q = T.alloc_buffer(({n},), "float32")
    for i, j in T.grid({n}, {m}):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("sumsq"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                Q[vi] = T.float32(0)
            Q[vi] = Q[vi] + A[vi, vj] * A[vi, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("norm"):
            B[i, j] = (A[i, j] - S[i] * T.float32({1 / m!r})) / T.sqrt(
                Q[i] * T.float32({1 / m!r}) - S[i] * S[i] * T.float32({1 / (m * m)!r})
                + T.float32(1e-5)) * G[j] + Be[j]
''')


def layernorm_schedule(f):
    """The softmax recipe: both row sums computed inside the row loop, each in 16
    partial sums (rfactor), the row on the cores and in vector lanes."""
    sch = pp.Schedule(f)
    i, j = sch.get_loops("norm")
    for producer in ("sumsq", "sum"):
        sch.compute_at(producer, i)
    sch.parallel(i)
    sch.vectorize(j)
    for block in ("sum", "sumsq"):
        _, lanes = sch.split(sch.get_loops(block)[-1], [None, 16], tail="partition")
        sch.rfactor(lanes)
        sch.vectorize(lanes)
    return sch


def layernorm_peer(A, G, Be, B):
    mean = A.mean(axis=1, keepdims=True)
    var = A.var(axis=1, keepdims=True)
    np.add((A - mean) / np.sqrt(var + np.float32(1e-5)) * G, Be, out=B)


# -- matrix-vector -----------------------------------------------------------------

def matvec(n, m):
    return _parse(f'''
@T.prim_func
def matvec(A: T.Buffer(({n}, {m}), "float32"), x: T.Buffer(({m},), "float32"),
           y: T.Buffer(({n},), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("y"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vj] * x[vj]
''')


def matvec_schedule(f):
    """docs/schedules.md, "Row reduction": rows on the cores, each in 32 partial
    sums on the stack (the init first moves into the row: decompose_reduction) --
    two vectors, so two chains of multiply-adds overlap (one chain waits on the
    latency of each: 16 lanes ran 1.1x numpy's sgemv on one core, 32 lanes 1.2x)."""
    sch = pp.Schedule(f)
    i, j = sch.get_loops("y")
    sch.decompose_reduction("y", j)       # y[i] = 0 before the row's loop, inside i
    j_0, j_1 = sch.split(j, [None, 32], tail="partition")
    sch.rfactor(j_1)                      # y_rf: 32 partial sums per row, on the stack
    sch.parallel(i)
    sch.vectorize(j_1)
    return sch


def matvec_peer(A, x, y):
    np.matmul(A, x, out=y)


# -- argmax ------------------------------------------------------------------------

def argmax(n, m):
    return _parse(f'''
@T.prim_func
def argmax(A: T.Buffer(({n}, {m}), "float32"), I: T.Buffer(({n},), "int32")):
    M = T.alloc_buffer(({n},), "float32")
    for i in T.serial({n}):
        with T.block("argmax"):
            M[i] = A[i, 0]
            I[i] = 0
            for j in T.serial(1, {m}):
                I[i] = T.if_then_else(A[i, j] > M[i], j, I[i])   # before M moves on
                M[i] = T.max(M[i], A[i, j])
''')


def argmax_schedule(f):
    """docs/schedules.md, "Argmax": each row in 16 partial winners (rfactor of the
    index and value stores together: exact, the first index of the largest value),
    in vector lanes; the rows on the cores."""
    sch = pp.Schedule(f)
    _, lanes = sch.split("j", [None, 16], tail="partition")
    sch.rfactor(lanes)                    # M_rf, I_rf: 16 values and their indices
    sch.vectorize(lanes)
    sch.parallel("i")
    return sch


def argmax_peer(A, I):
    I[:] = np.argmax(A, axis=1)  # numpy's argmax writes intp; I is int32


# -- 1-D stencil -------------------------------------------------------------------

def stencil(n):
    return _parse(f'''
@T.prim_func
def stencil(A: T.Buffer(({n + 2},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.serial({n}):
        with T.block("B"):
            B[i] = T.float32(0.25) * A[i] + T.float32(0.5) * A[i + 1] + T.float32(0.25) * A[i + 2]
''')


def stencil_schedule(f):
    """docs/schedules.md, "Elementwise": chunks on the cores, each in 16 lanes."""
    sch = pp.Schedule(f)
    (i,) = sch.get_loops("B")
    i_0, i_1 = sch.split(i, [None, 4096])  # chunks on the cores
    _, i_3 = sch.split(i_1, [None, 16])    # a chunk in 16 lanes
    sch.parallel(i_0)
    sch.vectorize(i_3)
    return sch


def stencil_peer(A, B):
    n = B.shape[0]
    np.multiply(A[:n], np.float32(0.25), out=B)
    B += np.float32(0.5) * A[1:n + 1]
    B += np.float32(0.25) * A[2:n + 2]


# -- prefix sum --------------------------------------------------------------------

def prefix(n):
    return _parse(f'''
@T.prim_func
def prefix(A: T.Buffer(({n},), "int32"), B: T.Buffer(({n},), "int32")):
    B[0] = A[0]
    for i in T.serial(1, {n}):
        with T.block("scan"):
            B[i] = B[i - 1] + A[i]
''')


def prefix_schedule(f):
    """docs/schedules.md, "Scan": in order, as written.  Each i reads what i - 1
    wrote: no loop may run in parallel or in lanes (both refused), and the loop
    streams at what one core moves; unrolling it by 4 or 8 ran 0.95 to 1.0x the
    plain nest, and a parallel two-pass scan reads the input twice."""
    return pp.Schedule(f)


def prefix_peer(A, B):
    np.cumsum(A, out=B)


# -- row sum (polypad.examples.row_summation) --------------------------------------

def row_sum(n, m):
    """The shipped example; its extents are scalar parameters, passed at each call."""
    return row_summation.row_summation


def row_sum_schedule(f):
    return row_summation.schedule(f)


def row_sum_peer(A, B):
    np.sum(A, axis=1, out=B)
