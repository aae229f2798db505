"""Data-dependent indices on the cuda target: gathers (``A[X[i]]``), scatters
(``B[X[i]] = ...``) and atomic scatters.

The barrier plan over-approximates an index that reads memory by every element of
its buffer's extent on that axis (:func:`polypad.model.extract_gathers`): a gather
from memory no thread of the launch writes needs no barrier, a gather from a
shared tile the block wrote gets the barriers of a may-dependence, a scatter two
threads may aim at one element is refused, and an atomic scatter commutes.  Every
plan here is checked by brute force with the actual index values of a few random
index arrays (:func:`gpu_enumeration.check_by_enumeration`), and every kernel run
against the reference executor.
"""

from __future__ import annotations

import functools

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses import Instance, Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from polypad.errors import BoundsCheckError, IllegalTransformError, NotAffineError, RaceError
from polypad.model import extract, extract_gathers

LOOKUP = pp.parse('''
@T.prim_func
def lookup(A: T.Buffer((16,), "float32"), X: T.Buffer((64,), "int32"),
           B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[bx * 32 + tx] = A[X[bx * 32 + tx]]
''')

# Rows of a table, one block per looked-up row and one thread per column.
EMBEDDING = pp.parse('''
@T.prim_func
def embedding(A: T.Buffer((16, 8), "float32"), X: T.Buffer((4,), "int32"),
              B: T.Buffer((4, 8), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(8, thread="threadIdx.x"):
            B[i, j] = A[X[i], j]
''')

# Each step, the block's threads copy 8 values into a shared tile and then gather
# from it: a barrier after the copy (the gather may read any thread's element) and
# one before the next step's copy (which may overwrite an element a slower thread
# has still to gather).
TILE_GATHER = pp.parse('''
@T.prim_func
def tile_gather(A: T.Buffer((64,), "float32"), X: T.Buffer((64,), "int32"),
                B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((8,), "float32", scope="shared")
        for k in range(4):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                S[tx] = A[bx * 32 + k * 8 + tx]
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                B[bx * 32 + k * 8 + tx] = S[X[bx * 32 + k * 8 + tx]]
''')

SCATTER = pp.parse('''
@T.prim_func
def scatter(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "int32"),
            B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[X[i]] = A[i]
''')

HISTOGRAM = pp.parse('''
@T.prim_func
def histogram(X: T.Buffer((64,), "int32"), H: T.Buffer((8,), "int32")):
    for i in range(64):
        H[X[i]] = H[X[i]] + 1
''')


def _lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()]


def _indices(size: int, high: int, seeds=(0, 1, 2)) -> list[np.ndarray]:
    return [np.random.default_rng(s).integers(0, high, size).astype("int32") for s in seeds]


@functools.cache
def _kernel(name: str):
    return codegen.build(globals()[name], target="cuda")


def test_the_gather_model_over_approximates_by_the_extent_and_extract_still_refuses():
    with pytest.raises(NotAffineError, match=r"X\[bx \* 32 \+ tx\] is not quasi-affine: it "
                                             r"reads a buffer"):
        extract(LOOKUP)
    (s,) = extract_gathers(LOOKUP).statements
    write, gather, index = s.accesses
    assert not write.may and not write.gathered and not index.gathered
    assert gather.may and [str(x.buffer.name) for x in gather.gathered] == ["X"]
    want = "{ S0[bx, tx] -> A[e0] : 0 <= bx <= 1 and 0 <= tx <= 31 and 0 <= e0 <= 15 }"
    assert gather.relation.is_equal(gather.relation.read_from_str(
        gather.relation.get_ctx(), want))
    # Only the gathered axis is free: the column of A[X[i], j] is exact.
    (row,) = extract_gathers(EMBEDDING).statements
    relation = row.accesses[1].relation
    assert relation.is_equal(relation.read_from_str(relation.get_ctx(
    ), "{ S0[i, j] -> A[e0, j] : 0 <= i <= 3 and 0 <= j <= 7 and 0 <= e0 <= 15 }"))


def test_an_embedding_lookup_needs_no_barrier_and_matches_the_reference():
    plan = plan_barriers(LOOKUP)
    assert isinstance(plan, BarrierPlan) and plan.count == 0
    lines = _lines(_kernel("LOOKUP").source)
    assert "cuda.syncthreads()" not in lines
    # Only the gathered index is checked at run time, the rest is proved inside.
    assert "B[bx * 32 + tx] = A[_pp_at_1(X[bx * 32 + tx], A.shape, 0, bounds_fail)]" in lines
    table = np.random.default_rng(5).standard_normal(16).astype("float32")
    for x in _indices(64, 16):
        check_by_enumeration(LOOKUP, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(LOOKUP, [table, x, np.zeros(64, "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])
        np.testing.assert_array_equal(gpu[2], table[x])


def test_the_serial_lookup_split_and_bound_by_the_schedule_builds_as_written_bound():
    serial = pp.parse('''
@T.prim_func
def lookup(A: T.Buffer((16,), "float32"), X: T.Buffer((64,), "int32"),
           B: T.Buffer((64,), "float32")):
    for i in range(64):
        B[i] = A[X[i]]
''')
    sch = pp.Schedule(serial)
    bx, tx = sch.split("i", [None, 32])
    sch.bind(bx, "blockIdx.x")  # checked by the barrier plan: no pair, no barrier
    sch.bind(tx, "threadIdx.x")
    lines = _lines(codegen.build(sch.func, target="cuda").source)
    assert "cuda.syncthreads()" not in lines
    assert "B[i_0 * 32 + i_1] = A[_pp_at_1(X[i_0 * 32 + i_1], A.shape, 0, bounds_fail)]" \
        in lines
    x = _indices(64, 16)[0]
    table = np.arange(16, dtype="float32")
    gpu, ref = K.run_both(sch.func, [table, x, np.zeros(64, "float32")], reference=serial)
    np.testing.assert_array_equal(gpu[2], ref[2])


@pytest.mark.parametrize("bad", [16, -1])
def test_a_gathered_index_outside_the_table_raises_as_the_reference_does(bad):
    x = _indices(64, 16)[0]
    x[37] = bad
    args = [np.zeros(16, "float32"), x, np.zeros(64, "float32")]
    message = (f"load of A[{bad}] is outside its shape (16,) in 'lookup' at <string>:7 "
               "(as written: A[X[bx * 32 + tx]])")
    for kernel in (_kernel("LOOKUP"), codegen.build(LOOKUP, target="python")):
        with pytest.raises(BoundsCheckError) as info:
            kernel(*[a.copy() for a in args])
        assert str(info.value) == message


def test_a_2d_embedding_checks_only_the_row_and_matches_the_reference():
    lines = _lines(_kernel("EMBEDDING").source)
    assert "cuda.syncthreads()" not in lines
    assert "B[i, j] = A[_pp_at_2_0(X[i], j, A.shape, 0, bounds_fail)]" in lines
    plan = plan_barriers(EMBEDDING)
    table = np.random.default_rng(6).standard_normal((16, 8)).astype("float32")
    for x in _indices(4, 16):
        check_by_enumeration(EMBEDDING, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(EMBEDDING, [table, x, np.zeros((4, 8), "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])
        np.testing.assert_array_equal(gpu[2], table[x])


def test_a_gather_from_a_shared_tile_gets_the_barriers_of_a_may_dependence():
    plan = plan_barriers(TILE_GATHER)
    assert isinstance(plan, BarrierPlan) and plan.count == 2
    lines = _lines(_kernel("TILE_GATHER").source)
    step = lines.index("for k in range(4):")
    copy = lines.index("S[tx] = A[bx * 32 + k * 8 + tx]")
    gather = lines.index("B[bx * 32 + k * 8 + tx_1] = S[_pp_at_1(X[bx * 32 + k * 8 + tx_1], "
                         "S.shape, 0, bounds_fail)]")
    # One at the start of each step (the last step's gathers before this copy), one
    # between the copy and the gather.
    assert lines[step + 1] == "cuda.syncthreads()"
    assert lines[copy + 1] == "cuda.syncthreads()" and copy < gather
    assert lines.count("cuda.syncthreads()") == 2
    a = np.random.default_rng(7).standard_normal(64).astype("float32")
    for x in _indices(64, 8):
        check_by_enumeration(TILE_GATHER, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(TILE_GATHER, [a, x, np.zeros(64, "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])
    # Each barrier is needed: without either, the brute-force check fails for an
    # actual X (every thread gathers the element thread 7 copies).
    x = np.full(64, 7, "int32")
    (container, slots), = plan.slots.items()
    for slot in sorted(slots):
        fewer = plan_barriers(TILE_GATHER)
        fewer.slots[container] = {s for s in slots if s != slot}
        with pytest.raises(AssertionError):
            check_by_enumeration(TILE_GATHER, plan=fewer, memory={"X": x})


def test_a_scatter_bound_to_threads_is_refused_as_a_may_race():
    sch = pp.Schedule(SCATTER)
    with pytest.raises(IllegalTransformError, match=r"bind of loop 'i' to threadIdx.x would "
                                                    r"race: S0\(i=0\) on block \(0, 0, 0\) "
                                                    r"thread \(0, 0, 0\) and S0\(i=1\) on "
                                                    r"block \(0, 0, 0\) thread \(1, 0, 0\) "
                                                    r"may write the same element \(B\[7\], "
                                                    r"for one; .*\): X\[i\] is read from "
                                                    r"memory") as info:
        sch.bind("i", "threadIdx.x")
    cex = info.value.evidence
    assert cex.instances == (Instance("S0", {"i": 0}), Instance("S0", {"i": 1}))
    assert cex.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (1, 0, 0)"}
    # The same function written bound: the cuda target refuses it with that evidence.
    bound = pp.parse('''
@T.prim_func
def scatter(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "int32"),
            B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        B[X[i]] = A[i]
''')
    found = plan_barriers(bound)
    assert isinstance(found, Refuted) and found.counterexample.instances == cex.instances
    with pytest.raises(RaceError, match=r"may write the same element .*: X\[i\] is read "
                                        r"from memory, so the index may take any value "
                                        r"inside B, and two threads of one block run them "
                                        r"in either order"):
        codegen.build(bound, target="cuda")


def test_a_histogram_scatters_through_atomics():
    sch = pp.Schedule(HISTOGRAM)
    with pytest.raises(IllegalTransformError, match=r"may write the same element"):
        sch.bind("i", "threadIdx.x")
    sch.atomic("i")
    sch.bind("i", "threadIdx.x")
    kernel = codegen.build(sch.func, target="cuda")
    lines = _lines(kernel.source)
    at = lines.index("cuda.atomic.add(H, _g, _v)")
    # The gathered bin is checked before the update: an index outside H updates nothing.
    assert lines[at - 2:at] == ["_g = X[i]", "if _pp_inside_1(_g, H.shape, 0, bounds_fail):"]
    for x in _indices(64, 8):
        gpu, ref = K.run_both(sch.func, [x, np.zeros(8, "int32")], reference=HISTOGRAM)
        np.testing.assert_array_equal(gpu[1], ref[1])
        np.testing.assert_array_equal(gpu[1], np.bincount(x, minlength=8))
    x = _indices(64, 8)[0]
    x[3] = 8
    with pytest.raises(BoundsCheckError, match=r"H\[8\] is outside its shape \(8,\)"):
        kernel(x, np.zeros(8, "int32"))


# A gather in a vectorized loop, and one from a thread's own local buffer (each thread
# reads only its copy, whatever the index: no barrier, and the buffer keeps its shape).
VECTOR_GATHER = pp.parse('''
@T.prim_func
def vector_gather(A: T.Buffer((16,), "float32"), X: T.Buffer((64,), "int32"),
                  B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for v in T.vectorized(4):
                B[bx * 32 + tx * 4 + v] = A[X[bx * 32 + tx * 4 + v]]
''')

LOCAL_GATHER = pp.parse('''
@T.prim_func
def local_gather(A: T.Buffer((64,), "float32"), X: T.Buffer((64,), "int32"),
                 B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        L = T.alloc_buffer((4,), "float32", scope="local")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(4):
                L[k] = A[bx * 32 + tx * 4 + k]
            for k in range(4):
                B[bx * 32 + tx * 4 + k] = L[X[bx * 32 + tx * 4 + k]]
''')


@pytest.mark.parametrize("name, size, high", [("VECTOR_GATHER", 16, 16),
                                              ("LOCAL_GATHER", 64, 4)])
def test_vector_and_local_gathers_need_no_barrier(name, size, high):
    func = globals()[name]
    plan = plan_barriers(func)
    assert isinstance(plan, BarrierPlan) and plan.count == 0
    assert "syncthreads" not in _kernel(name).source
    a = np.random.default_rng(8).standard_normal(size).astype("float32")
    for x in _indices(64, high):
        check_by_enumeration(func, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(func, [a, x, np.zeros(64, "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])


# Each thread scatters into its own four elements (tx * 4 + X[...] % 4): no element
# is named by two threads, so the scatter needs neither a barrier nor an atomic.  With
# the segments of two threads overlapping (tx // 2 * 4), two threads may write one.
SEGMENTED = '''
@T.prim_func
def segmented(A: T.Buffer((32,), "float32"), X: T.Buffer((32,), "int32"),
              B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for k in range(4):
            B[SEGMENT * 4 + T.floormod(X[tx * 4 + k], 4)] = A[tx * 4 + k]
'''


def test_a_scatter_into_each_threads_own_segment_builds_and_overlapping_ones_race():
    func = pp.parse(SEGMENTED.replace("SEGMENT", "tx"))
    plan = plan_barriers(func)
    assert isinstance(plan, BarrierPlan) and plan.count == 0
    a = np.arange(32, dtype="float32")
    for x in [*_indices(32, 100), np.full(32, -3, "int32")]:
        check_by_enumeration(func, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(func, [a, x, np.zeros(32, "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])
    overlapping = pp.parse(SEGMENTED.replace("SEGMENT", "tx // 2"))
    found = plan_barriers(overlapping)
    assert isinstance(found, Refuted)
    cex = found.counterexample
    assert cex.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (1, 0, 0)"}
    assert "may write the same element (B[" in cex.description
    assert "X[tx * 4 + k] is read from memory" in cex.description


# Each thread adds into its own four elements at an index read from X, and moves its
# index on at every step: the element the store names changes inside the loop, so it
# is no element to keep in a register for the loop's length (.registers).
MOVING_SCATTER = pp.parse('''
@T.prim_func
def moving_scatter(A: T.Buffer((4,), "float32"), X: T.Buffer((8,), "uint8"),
                   B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for k in range(4):
            B[tx * 4 + T.min(T.max(T.Cast("int32", X[tx]), 0), 3)] = \\
                B[tx * 4 + T.min(T.max(T.Cast("int32", X[tx]), 0), 3)] + A[k]
            X[tx] = X[tx] + T.uint8(1)
''')


def test_a_scatter_whose_index_the_loop_changes_is_not_kept_in_a_register():
    # Without run-time checks the clipped index is the only thing between the loads and
    # stores: every access is inside B, and the kernel must still add where the
    # reference does.
    kernel = codegen.build(MOVING_SCATTER, target="cuda", boundscheck=False)
    assert "B_reg" not in kernel.source
    a = np.arange(1, 5, dtype="float32")
    x = np.arange(8, dtype="uint8")
    gpu = [a.copy(), x.copy(), np.zeros(32, "float32")]
    ref = [a.copy(), x.copy(), np.zeros(32, "float32")]
    kernel(*gpu)
    codegen.build(MOVING_SCATTER, target="python")(*ref)
    np.testing.assert_array_equal(gpu[2], ref[2])
    np.testing.assert_array_equal(gpu[1], ref[1])


# A gather only where its index is inside the table, in an unrolled nest whose loads
# move first (.batch): the guarded load must stay under its guard.
GUARDED_GATHER = pp.parse('''
@T.prim_func
def guarded_gather(A: T.Buffer((16,), "float32"), X: T.Buffer((16,), "int32"),
                   B: T.Buffer((16,), "float32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for j in T.unroll(2):
            B[tx * 2 + j] = T.if_then_else(X[tx * 2 + j] >= 0, A[X[tx * 2 + j]],
                                           T.float32(0))
''')


def test_a_gather_in_a_lazy_arm_reads_only_where_its_condition_holds():
    plan = plan_barriers(GUARDED_GATHER)
    assert isinstance(plan, BarrierPlan) and plan.count == 0
    a = np.arange(1, 17, dtype="float32")
    for x in [np.array([-1, 3] * 8, "int32"), np.full(16, -7, "int32"), *_indices(16, 16)]:
        check_by_enumeration(GUARDED_GATHER, plan=plan, memory={"X": x})
        gpu, ref = K.run_both(GUARDED_GATHER, [a, x, np.zeros(16, "float32")])
        np.testing.assert_array_equal(gpu[2], ref[2])
