"""Kernels and schedules the cuda tests share (tiny sizes: the simulator runs every
GPU thread as a Python thread)."""

from __future__ import annotations

import numpy as np

import codegen
import polypad as pp

ELEMENTWISE = pp.parse('''
@T.prim_func
def scale(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    for bx in T.thread_binding(3, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = A[bx * 4 + tx] * T.float32(2) + T.float32(1)
''')

# The same kernel in the two other spellings of TVMScript's thread axes.
ELEMENTWISE_LAUNCH = pp.parse('''
@T.prim_func
def scale(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    bx = T.env_thread("blockIdx.x")
    T.launch_thread(bx, 3)
    tx = T.launch_thread("threadIdx.x", 4)
    B[bx * 4 + tx] = A[bx * 4 + tx] * T.float32(2) + T.float32(1)
''')

SYMBOLIC = pp.parse('''
@T.prim_func
def shift(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for bx in T.thread_binding((n + 3) // 4, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if bx * 4 + tx < n:
                B[bx * 4 + tx] = A[bx * 4 + tx] + T.float32(1)
''')

MATMUL = pp.parse('''
@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
           C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in range(8):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
''')

ROW_SUM_TEXT = '''
@T.prim_func
def row_sum(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            B[i] = T.float32(0)
            for k in range(16):
                B[i] = B[i] + A[i, k]
'''
ROW_SUM = pp.parse(ROW_SUM_TEXT)

# Two 3-point blurs, each block computing 8 outputs of the second from a shared tile
# of the first (10 values, with a halo of one on each side, the last two loaded by a
# thread loop of 2 of the 8 threads), itself from a shared tile of the input.
STENCIL = pp.parse('''
@T.prim_func
def blur2(A: T.Buffer((20,), "float32"), C: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        A_s = T.alloc_buffer((12,), "float32", scope="shared")
        B_s = T.alloc_buffer((10,), "float32", scope="shared")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            A_s[tx] = A[bx * 8 + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A_s[8 + tx] = A[bx * 8 + 8 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B_s[tx] = A_s[tx] + A_s[tx + 1] + A_s[tx + 2]
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            B_s[8 + tx] = A_s[8 + tx] + A_s[9 + tx] + A_s[10 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            C[bx * 8 + tx] = B_s[tx] + B_s[tx + 1] + B_s[tx + 2]
''')

# Thread t writes S[t] in iteration t and reads S[t - 1], which thread t - 1 wrote in
# iteration t - 1: a barrier at the start of each iteration orders them.
PIPELINE = '''
@T.prim_func
def pipeline(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        if GUARD:
            for k in range(4):
                if k == tx:
                    S[tx] = A[tx] * T.float32(2)
                    if tx > 0:
                        B[tx] = S[tx - 1]
'''

# Thread 0 reads S[3] before thread 3 writes it in the serial program: no barrier
# can make every thread read the old value.
REVERSE_IN_ONE_LOOP = pp.parse('''
@T.prim_func
def reverse(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        S[tx] = A[tx]
        B[tx] = S[3 - tx]
''')

REVERSE = pp.parse('''
@T.prim_func
def reverse(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[tx] = A[bx * 4 + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = S[3 - tx]
''')


def tiled_matmul() -> pp.Schedule:
    """MATMUL in 4x4 tiles: a block per tile of C, a thread per element, the tiles of A
    and B loaded into shared memory by all the block's threads at each step of k."""
    sch = pp.Schedule(MATMUL)
    i, j, k = sch.get_loops("C")
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 4])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.cache_read("C", "A", "shared", at=ko)
    sch.cache_read("C", "B", "shared", at=ko)
    sch.bind(io, "blockIdx.y")
    sch.bind(jo, "blockIdx.x")
    sch.bind(ii, "threadIdx.y")
    sch.bind(ji, "threadIdx.x")
    for block in ("A_shared", "B_shared"):
        rows, cols = sch.get_loops(block)[-2:]
        sch.bind(rows, "threadIdx.y")
        sch.bind(cols, "threadIdx.x")
    return sch


def block_row_sum() -> pp.Schedule:
    """ROW_SUM with a block per row: rfactor's partial sums in shared memory, a thread
    per partial sum, then one thread adds them up."""
    sch = pp.Schedule(ROW_SUM)
    i, k = sch.get_loops("B")
    _, ki = sch.split(k, [None, 4])
    sch.rfactor(ki, 0)
    sch.reorder("k_1", "k_0")
    sch.set_scope("B_rf", "shared")
    sch.bind(i, "blockIdx.x")
    sch.bind("k_1_init", "threadIdx.x")
    sch.bind("k_1", "threadIdx.x")
    return sch


def inputs(func, seed: int = 0) -> list:
    """Random arguments for ``func``'s buffers (small integers, so float sums are exact
    in any order)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-4, 5, [int(s) for s in p.shape]).astype(p.dtype)
            for p in func.params]


def run_both(func, args, *, reference=None) -> tuple[list, list]:
    """``func`` built for cuda and ``reference`` (default ``func``) run by the reference
    executor, each on its own copy of ``args``; the arguments after each run."""
    gpu = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    codegen.build(func, target="cuda")(*gpu)
    codegen.build(reference if reference is not None else func, target="python")(*ref)
    return gpu, ref
