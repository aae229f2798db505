"""Shared memory as the reference sees it: a read that may find no earlier write of the
same allocation reads a zero (polypad.transform.shared_zero_fill), proved unnecessary elsewhere
(analyses.gpu_shared_reads)."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from analyses import Element, Instance
from analyses.gpu_shared_reads import unwritten_shared_reads
from polypad.errors import BuildError, IllegalTransformError

# Two of four threads load the tile; all four read it: S[2] and S[3] (and the two past
# the end of what they read) are never written, and the reference reads zeros there.
PARTIAL = pp.parse('''
@T.prim_func
def partial(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((6,), "float32", scope="shared")
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            S[tx] = A[bx * 4 + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = S[3 - tx]
''')


def test_reads_after_writes_of_the_same_allocation_need_no_fill():
    for func in (K.REVERSE, K.STENCIL, K.tiled_matmul().func, K.block_row_sum().func):
        assert unwritten_shared_reads(func) == {}
        assert "_zero_" not in codegen.build(func, target="cuda").source


def test_a_tile_in_a_loop_is_written_in_each_iteration_before_it_is_read():
    # The tiles of the tiled matmul are allocated in each step of k_0: the step's own
    # loads feed its reads (the loads of the step before do not count).
    func = K.tiled_matmul().func
    assert unwritten_shared_reads(func) == {}


def test_an_unwritten_read_is_found_and_the_buffer_zero_filled_before_it():
    found = unwritten_shared_reads(PARTIAL)
    (buffer, (read, element)), = found.items()
    assert buffer.name == "S"
    assert read == Instance("S1", {"bx": 0, "tx": 0}) and element == Element("S", (3,))
    source = codegen.build(PARTIAL, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    fill = lines.index("S[S_zero_o * 4 + S_zero_0] = np.float32(0.0)")
    # Spread over the block's four threads, inside the block loop; the loads run on the
    # threads that zeroed those elements, the reads after the one barrier.
    assert lines[fill - 3:fill] == ["for S_zero_o in range(2):", "S_zero_0 = tid_x",
                                    "if S_zero_o * 4 + S_zero_0 < 6:"]
    assert lines.index("bx = bid_x") < fill
    assert lines.count("cuda.syncthreads()") == 1
    assert lines.index("cuda.syncthreads()") > lines.index("S[tx] = A[bx * 4 + tx]")
    gpu, ref = K.run_both(PARTIAL, K.inputs(PARTIAL))
    np.testing.assert_array_equal(gpu[1], ref[1])
    np.testing.assert_array_equal(ref[1][[0, 1, 4, 5]], [0, 0, 0, 0])


def test_the_fill_is_ordered_by_barriers_like_any_store():
    # The fill, spread over the threads, zeroes elements that other threads then load
    # (S[2] by thread 2, loaded by thread 1), in each step of k, after the step before
    # has read them: the plan puts barriers around it as around any store.
    f = pp.parse('''
@T.prim_func
def spread(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for k in range(2):
            S = T.alloc_buffer((4,), "float32", scope="shared")
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                if tx < 2:
                    S[tx * 2] = A[tx] + T.float32(k)
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                B[tx] = B[tx] + S[3 - tx]
''')
    source = codegen.build(f, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    fill = lines.index("S[S_zero_0] = np.float32(0.0)")  # one pass of the four threads
    assert lines[fill - 2] == "cuda.syncthreads()" and lines[fill + 1] == "cuda.syncthreads()"
    assert lines.count("cuda.syncthreads()") == 3
    gpu, ref = K.run_both(f, K.inputs(f))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_a_shared_buffer_allocated_outside_the_launch_and_read_unwritten_is_refused():
    f = pp.parse('''
@T.prim_func
def outside(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        if tx < 2:
            S[tx] = A[tx]
        B[tx] = S[tx]
''')
    with pytest.raises(BuildError, match=r"shared buffer 'S' is read before anything writes it "
                                         r"\(S1\(tx=2\) reads S\[2\]\), where the reference "
                                         r"reads 0, and it is allocated outside every kernel "
                                         r"launch"):
        codegen.build(f, target="cuda")


def test_local_memory_is_zero_filled_only_where_a_read_may_come_first():
    text = '''
@T.prim_func
def local(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        L = T.alloc_buffer((2,), "float32", scope="local")
        L[0] = A[tx]
        SECOND
        B[tx] = L[0] + L[1]
'''
    unset = pp.parse(text.replace("SECOND", "T.evaluate(0)"))
    (buffer, (read, element)), = unwritten_shared_reads(unset, "local").items()
    assert buffer.name == "L" and element == Element("L", (1,))
    source = codegen.build(unset, target="cuda").source
    assert "L[_z] = np.float32(0)" in source  # the reference's zero in L[1]
    gpu, ref = K.run_both(unset, K.inputs(unset))
    np.testing.assert_array_equal(gpu[1], ref[1])
    written = pp.parse(text.replace("SECOND", "L[1] = A[tx] * T.float32(2)"))
    assert unwritten_shared_reads(written, "local") == {}
    assert "_z" not in codegen.build(written, target="cuda").source


def test_bind_refuses_what_the_build_would_refuse_for_the_zero_fill():
    # The same shared buffer, allocated outside the loop that becomes the launch: the
    # schedule-time check sees the fill the build would need, and refuses the bind.
    f = pp.parse('''
@T.prim_func
def outside(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32", scope="shared")
    for tx in range(4):
        if tx < 2:
            S[tx] = A[tx]
        B[tx] = S[tx]
''')
    sch = pp.Schedule(f)
    with pytest.raises(IllegalTransformError,
                       match=r"^bind of loop 'tx' to threadIdx.x: shared buffer 'S' is read "
                             r"before anything writes it \(S1\(tx=2\) reads S\[2\]\)"):
        sch.bind("tx", "threadIdx.x")
    assert sch.func is f and not sch.trace.steps
