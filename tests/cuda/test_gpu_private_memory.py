"""Private GPU memory: a local buffer is a copy per thread, a shared one a copy per
block, so only a value passed from one copy to another is a race -- not two
threads writing one element of their own copies (analyses.gpu_private_flow)."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses import Element, Instance, Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from analyses.gpu_threads import structure
from polypad.errors import RaceError

# TVM prints a thread's scratch as one local buffer at the top of the kernel, every
# thread using its element 0: two threads write L[0], each reads back its own value.
ROOT_SCRATCH = pp.parse('''
@T.prim_func
def scratch(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    L = T.alloc_buffer((2,), "float32", scope="local")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            L[0] = A[bx * 8 + tx] * T.float32(2)
            L[1] = L[0] + T.float32(1)
            B[bx * 8 + tx] = L[1] * L[0]
''')

# The same scratch read in a second loop: thread tx reads L[0], which the serial
# program last wrote in thread 7's iteration.
ACROSS_THREADS = pp.parse('''
@T.prim_func
def across(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        L = T.alloc_buffer((1,), "float32", scope="local")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            L[0] = A[tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[tx] = L[0]
''')


def test_a_local_scratch_every_thread_writes_is_private_to_each():
    plan = check_by_enumeration(ROOT_SCRATCH)
    assert plan.count == 0
    source = codegen.build(ROOT_SCRATCH, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    assert "L_0 = A[bx * 8 + tx] * np.float32(2.0)" in lines  # each thread's registers
    assert "cuda.syncthreads()" not in source
    gpu, ref = K.run_both(ROOT_SCRATCH, K.inputs(ROOT_SCRATCH))
    np.testing.assert_array_equal(gpu[1], ref[1])
    a = K.inputs(ROOT_SCRATCH)[0]
    np.testing.assert_array_equal(ref[1], (2 * a + 1) * (2 * a))


def test_a_value_from_another_threads_local_copy_is_refused():
    found = plan_barriers(ACROSS_THREADS)
    assert isinstance(found, Refuted)
    cex = found.counterexample
    assert cex.element == Element("L", (0,))
    assert cex.instances == (Instance("S0", {"bx": 0, "tx": 7}), Instance("S1", {"bx": 0, "tx": 0}))
    assert cex.values == {"first thread": "block (0, 0, 0) thread (7, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (0, 0, 0)"}
    with pytest.raises(RaceError, match="local memory, private to each thread") as info:
        codegen.build(ACROSS_THREADS, target="cuda")
    assert info.value.evidence == cex
    # The enumeration finds it too: thread 0 reads the value thread 7 wrote.
    with pytest.raises(AssertionError, match=r"'L', \(0,\), \(0, 0, 0, 7, 0, 0\)"):
        check_by_enumeration(ACROSS_THREADS, plan=BarrierPlan(structure(ACROSS_THREADS)))


def test_a_value_kept_by_the_thread_that_wrote_it_passes_between_loops():
    # Each thread reads back the element only it wrote: its own copy holds the value.
    func = pp.parse('''
@T.prim_func
def kept(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        L = T.alloc_buffer((8,), "float32", scope="local")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            L[tx] = A[tx] + T.float32(3)
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[tx] = L[tx] * L[tx]
''')
    assert check_by_enumeration(func).count == 0
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_shared_memory_written_by_two_blocks_is_two_copies():
    # S is allocated once, outside the block loop, and both blocks fill all of it
    # before reading: each block's copy holds its own values.
    func = pp.parse('''
@T.prim_func
def two(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            S[tx] = A[bx * 8 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = S[7 - tx]
''')
    assert check_by_enumeration(func).count == 1
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
    # Block 1 reading what block 0 left, before writing its own, is refused.
    stale = pp.parse('''
@T.prim_func
def stale(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = S[7 - tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            S[tx] = A[bx * 8 + tx]
''')
    with pytest.raises(RaceError, match="shared memory, private to each block") as info:
        codegen.build(stale, target="cuda")
    cex = info.value.evidence
    assert cex.values["first thread"].startswith("block (0, 0, 0)")
    assert cex.values["second thread"].startswith("block (1, 0, 0)")
