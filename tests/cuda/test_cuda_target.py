"""The cuda target on Numba's CUDA simulator: each kernel against the reference executor.

Inputs are small integers, so that every float result is exact whatever the order
of a sum: the GPU's results must equal the reference's bit for bit.
"""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from polypad.errors import ArgumentError, BuildArgumentError, BuildError, RaceError


def _equal(gpu, ref):
    for got, want in zip(gpu, ref):
        np.testing.assert_array_equal(got, want)


def test_cuda_is_a_registered_target_and_its_source_reads_as_python():
    assert "cuda" in codegen.targets()
    kernel = codegen.build(K.ELEMENTWISE, target="cuda")
    assert kernel.target == "cuda"
    assert "@cuda.jit(fastmath=False)\ndef kernel_0(A, B):\n" in kernel.source
    # The indices read once at the top (the compiler does not hoist those reads out of
    # loops), each bound loop's counter then one of them.
    assert ("    bid_x = cuda.blockIdx.x\n    tid_x = cuda.threadIdx.x\n    bx = bid_x\n"
            "    tx = tid_x\n") in kernel.source
    assert "def launch_0():\n    return (3, 1, 1), (4, 1, 1)\n" in kernel.source
    assert "syncthreads" not in kernel.source  # no value flows between threads
    compile(kernel.source, "kernel", "exec")


def test_elementwise_matches_the_reference():
    _equal(*K.run_both(K.ELEMENTWISE, K.inputs(K.ELEMENTWISE)))


def test_every_spelling_of_the_thread_axes_builds_the_same_kernel():
    assert (codegen.build(K.ELEMENTWISE_LAUNCH, target="cuda").source
            == codegen.build(K.ELEMENTWISE, target="cuda").source)


@pytest.mark.parametrize("n", [5, 10])
def test_a_launch_extent_of_a_scalar_parameter_is_computed_at_the_call(n):
    kernel = codegen.build(K.SYMBOLIC, target="cuda")
    # n + 3 may wrap around int32, as it would in the kernel.
    assert ("def launch_0(n):\n    return (int(np.int32(np.int64(n + 3)) // 4), 1, 1), (4, 1, 1)"
            in kernel.source)
    rng = np.random.default_rng(n)
    a = rng.integers(-4, 5, n).astype("float32")
    _equal(*K.run_both(K.SYMBOLIC, [n, a, np.zeros(n, "float32")]))


def test_two_thread_loops_of_one_extent_launch_it_once():
    func = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(n, thread="threadIdx.x"):
            A[t] = A[t] + T.float32(1)
        for t2 in T.thread_binding(n, thread="threadIdx.x"):
            B[t2] = A[t2] * T.float32(2)
''')
    kernel = codegen.build(func, target="cuda")
    assert "def launch_0(n):\n    return (1, 1, 1), (int(n), 1, 1)" in kernel.source
    a = np.arange(6, dtype="float32")
    _equal(*K.run_both(func, [6, a, np.zeros(6, "float32")]))


def test_device_arrays_are_used_in_place():
    from numba import cuda

    a, b = K.inputs(K.ELEMENTWISE)
    want = [a.copy(), b.copy()]
    codegen.build(K.ELEMENTWISE, target="python")(*want)
    da, db = cuda.to_device(a), cuda.to_device(np.zeros(12, "float32"))
    codegen.build(K.ELEMENTWISE, target="cuda")(da, db)
    np.testing.assert_array_equal(db.copy_to_host(), want[1])
    with pytest.raises(ArgumentError, match=r"argument 'B' must have shape \(12,\), got \(4,\)"):
        codegen.build(K.ELEMENTWISE, target="cuda")(da, cuda.to_device(np.zeros(4, "float32")))
    with pytest.raises(ArgumentError, match="argument 'B' must have dtype float32, got float64"):
        codegen.build(K.ELEMENTWISE, target="cuda")(da, cuda.to_device(np.zeros(12)))


def test_bound_loops_of_a_schedule_with_a_partial_tile():
    f = pp.parse('''
@T.prim_func
def add_one(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        B[i] = A[i] + T.float32(1)
''')
    sch = pp.Schedule(f)
    io, ii = sch.split("i", [None, 4])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.x")
    assert 'T.thread_binding(3, thread="blockIdx.x")' in pp.script(sch.func)
    _equal(*K.run_both(sch.func, K.inputs(f), reference=f))


def test_tiled_matmul_with_shared_memory_has_its_two_barriers():
    sch = K.tiled_matmul()
    source = codegen.build(sch.func, target="cuda").source
    # One before the tiles are overwritten (the last step's readers), one after they
    # are loaded; none between the two loads.
    body = [line.strip() for line in source.splitlines()]
    start = body.index("for k_0 in range(2):")
    assert body[start + 1] == "cuda.syncthreads()"
    assert body.count("cuda.syncthreads()") == 2
    second = body.index("cuda.syncthreads()", start + 2)
    assert body[second - 1].startswith("A_shared[") and body[second + 1] == "i_1 = tid_y"
    gpu, ref = K.run_both(sch.func, K.inputs(K.MATMUL), reference=K.MATMUL)
    _equal(gpu, ref)


def test_block_reduction_through_rfactor_in_shared_memory():
    sch = K.block_row_sum()
    source = codegen.build(sch.func, target="cuda").source
    assert "B_rf = cuda.shared.array((4,), np.float32)" in source
    assert source.count("cuda.syncthreads()") == 1
    lines = [line.strip() for line in source.splitlines()]
    assert lines[lines.index("cuda.syncthreads()") + 1] == "for k_1_wb in range(4):"
    _equal(*K.run_both(sch.func, K.inputs(K.ROW_SUM), reference=K.ROW_SUM))


def test_stencil_pipeline_with_a_halo_loaded_by_fewer_threads():
    source = codegen.build(K.STENCIL, target="cuda").source
    assert "    if tid_x < 4:\n" in source  # the halo loop runs on 4 of 8 threads
    assert source.count("cuda.syncthreads()") == 2
    _equal(*K.run_both(K.STENCIL, K.inputs(K.STENCIL)))


def test_options_and_what_the_target_cannot_run():
    with pytest.raises(BuildArgumentError, match="fastmath"):
        codegen.build(K.ELEMENTWISE, target="cuda", fastmath="full")
    assert "@cuda.jit(fastmath=True)" in codegen.build(K.ELEMENTWISE, target="cuda",
                                                       fastmath=True).source
    nested = pp.parse('''
@T.prim_func
def nested(A: T.Buffer((4, 4), "float32")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        for j in T.thread_binding(4, thread="threadIdx.x"):
            A[i, j] = T.float32(1)
''')
    # A loop inside one bound to its axis is TVM's cooperative copy, which must not
    # depend on the outer loop (tests/cuda/test_tvm_gpu_schedules.py).
    with pytest.raises(BuildError, match="the copy in loop 'j' uses 'i'"):
        codegen.build(nested, target="cuda")
    global_inside = pp.parse('''
@T.prim_func
def scratch(A: T.Buffer((4,), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        X = T.alloc_buffer((1,), "float32")
        X[0] = A[tx]
        A[tx] = X[0] + T.float32(1)
''')
    with pytest.raises(BuildError, match="'X' is allocated in global memory inside a kernel"):
        codegen.build(global_inside, target="cuda")


HALF_WRITTEN = '''
@T.prim_func
def half_written(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    scratch = T.alloc_buffer((8,), "float32")
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        scratch[tx] = A[tx]
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        B[tx] = scratch[tx] + T.float32(1)
'''


def test_a_buffer_the_host_allocates_is_zeros_at_every_call():
    from numba import cuda

    func = pp.parse(HALF_WRITTEN)
    kernel = codegen.build(func, target="cuda")
    # Two launches, the scratch buffer between them allocated by the host for each call
    # (filled with zeros on the device), as the reference executor fills it.
    assert kernel.source.count("@cuda.jit") == 2
    assert [b.name for b in kernel.compile()._impl.host] == ["scratch"]
    for seed in (1, 2):
        a = np.random.default_rng(seed).integers(-4, 5, 8).astype("float32")
        want = [a.copy(), np.zeros(8, "float32")]
        codegen.build(func, target="python")(*want)
        np.testing.assert_array_equal(want[1][4:], 1)
        db = cuda.to_device(np.full(8, 7, "float32"))
        kernel(cuda.to_device(a), db)
        np.testing.assert_array_equal(db.copy_to_host(), want[1])


VIRTUAL_THREADS = '''
@T.prim_func
def reverse_pairs(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((32,), "float32", scope="shared")
        for vx in T.thread_binding(2, thread="vthread.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                S[vx * 16 + tx] = A[bx * 32 + vx * 16 + tx]
        for vx in T.thread_binding(2, thread="vthread.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                B[bx * 32 + vx * 16 + tx] = S[READ] * T.float32(2)
'''


def test_virtual_threads_run_in_turn_on_each_thread():
    # TVM's vthread: each of the 16 threads runs both virtual threads' iterations
    # (unrolled), one barrier between the copy into shared memory and the reads.
    func = pp.parse(VIRTUAL_THREADS.replace("READ", "31 - vx * 16 - tx"))
    kernel = codegen.build(func, target="cuda")
    assert "def launch_0():\n    return (2, 1, 1), (16, 1, 1)" in kernel.source
    lines = [line.strip() for line in kernel.source.splitlines()]
    assert lines.count("cuda.syncthreads()") == 1
    assert "S[16 + tx] = A_v_1" in lines and "S_v_1 = S[15 - tx_1]" in lines
    args = [np.arange(64, dtype="float32"), np.zeros(64, "float32")]
    _equal(*K.run_both(func, args))


def test_virtual_threads_that_race_are_refused_with_both_threads():
    # Reading the next thread's element after every copy is fine (one barrier); in the
    # same loop as the copies, thread 0 reads S[1] before thread 1 writes it in the
    # serial order, which no barrier can keep on a GPU.
    func = pp.parse(VIRTUAL_THREADS.replace("READ", "(vx * 16 + tx + 1) % 32"))
    _equal(*K.run_both(func, [np.arange(64, dtype="float32"), np.zeros(64, "float32")]))
    racing = pp.parse('''
@T.prim_func
def racing(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for vx in T.thread_binding(2, thread="vthread.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            S[vx * 16 + tx] = A[vx * 16 + tx]
            B[vx * 16 + tx] = S[(vx * 16 + tx + 1) % 32]
''')
    with pytest.raises(RaceError) as caught:
        codegen.build(racing, target="cuda")
    assert caught.value.evidence.element.buffer == "S"
