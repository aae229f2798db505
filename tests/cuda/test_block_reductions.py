"""Block-level reductions on the simulator: ``tree_reduce`` (a tree combine in shared
memory, with exactly one barrier between two steps) and ``atomic`` (cuda.atomic.*),
each against the reference executor, and their refusals with evidence."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from analyses import Element, Instance
from analyses.gpu_sync import BarrierPlan
from polypad.errors import IllegalTransformError, PolypadError


def _tree_row_sum() -> pp.Schedule:
    sch = K.block_row_sum()
    sch.tree_reduce("k_1_wb")
    sch.bind("k_1_wb_s0", "threadIdx.x")
    sch.bind("k_1_wb_s1", "threadIdx.x")
    return sch


def test_tree_reduce_rewrites_the_combine_into_log2_steps():
    sch = K.block_row_sum()
    sch.tree_reduce("k_1_wb")
    text = pp.script(sch.func)
    assert ("for k_1_wb_s0 in T.serial(2):\n"
            "                B_rf[k_1_wb_s0] = B_rf[k_1_wb_s0] + B_rf[k_1_wb_s0 + 2]\n"
            "            for k_1_wb_s1 in T.serial(1):\n"
            "                B_rf[k_1_wb_s1] = B_rf[k_1_wb_s1] + B_rf[k_1_wb_s1 + 1]\n"
            "            B[i] = B[i] + B_rf[0]") in text
    # Serially too it is the row sum (small integers: exact in any order).
    args = K.inputs(K.ROW_SUM)
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    codegen.build(K.ROW_SUM, target="python")(*want)
    codegen.build(sch.func, target="python")(*got)
    np.testing.assert_array_equal(got[1], want[1])


def test_a_tree_bound_to_threads_gets_one_barrier_between_steps_and_matches():
    sch = _tree_row_sum()
    source = codegen.build(sch.func, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    first = lines.index("k_1_wb_s0 = tid_x")
    second = lines.index("k_1_wb_s1 = tid_x")
    # The partial sums are complete before the first step; each step is complete
    # before the next; the last fold runs on thread 0, which did the last step: none.
    assert lines[first - 1] == "cuda.syncthreads()"
    assert lines[second - 1] == "cuda.syncthreads()"
    assert lines.count("cuda.syncthreads()") == 2
    assert "if tid_x < 2:" in lines and "if tid_x < 1:" in lines
    gpu, ref = K.run_both(sch.func, K.inputs(K.ROW_SUM), reference=K.ROW_SUM)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_every_barrier_of_the_tree_is_needed():
    # Brute force, as tests/cuda/test_gpu_races.py does: with any one barrier left out,
    # some pair of threads touching one element runs out of the serial order.
    from gpu_enumeration import check_by_enumeration

    func = _tree_row_sum().func
    plan = check_by_enumeration(func)
    assert plan.count == 2
    for key in list(plan.slots):
        for slot in sorted(plan.slots[key]):
            fewer = BarrierPlan(plan.structure, {k: set(v) for k, v in plan.slots.items()},
                                dict(plan.nodes))
            fewer.slots[key].discard(slot)
            with pytest.raises(AssertionError):
                check_by_enumeration(func, plan=fewer)


def test_tree_reduce_refusals():
    sch = K.block_row_sum()
    with pytest.raises(PolypadError, match=r"tree_reduce: loop 'k_0' must index one axis of "
                                           r"the partial results A by itself, and not B_rf"):
        sch.tree_reduce("k_0")
    with pytest.raises(PolypadError, match=r"tree_reduce: the body of loop 'tx' must be one "
                                           r"update"):
        pp.Schedule(K.ELEMENTWISE).tree_reduce("tx")
    odd = pp.parse(K.ROW_SUM_TEXT.replace("16", "12"))
    sch = pp.Schedule(odd)
    _, k = sch.get_loops("B")
    sch.split(k, [None, 3])
    sch.rfactor("k_1", 0)
    with pytest.raises(PolypadError, match=r"constant power of two T >= 2"):
        sch.tree_reduce("k_1_wb")
    # The partial sums read again after the tree: the values the tree wrote over.
    reread = pp.parse('''
@T.prim_func
def reread(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32"),
           C: T.Buffer((1,), "float32")):
    P = T.alloc_buffer((4,), "float32")
    for k in range(4):
        P[k] = A[k]
    for k in range(4):
        B[0] = B[0] + P[k]
    C[0] = P[1]
''')
    sch = pp.Schedule(reread)
    with pytest.raises(IllegalTransformError, match=r"tree_reduce of loop 'k#1': the tree "
                                                    r"overwrites partial results that are read "
                                                    r"after it") as info:
        sch.tree_reduce("k#1")
    assert info.value.evidence.element == Element("P", (1,))
    assert info.value.evidence.instances[1] == Instance("S4", {})  # C[0] = P[1]


def test_atomic_update_bound_to_threads_matches_and_emits_cuda_atomic():
    sch = pp.Schedule(K.ROW_SUM)
    i, k = sch.get_loops("B")
    sch.atomic(k)
    assert 'T.sblock_attr({"atomic": "+"})' in pp.script(sch.func)
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.x")  # refused without atomic: test_gpu_races
    source = codegen.build(sch.func, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    # The init on thread 0 comes before every thread's atomic add: one barrier.
    assert lines[lines.index("cuda.atomic.add(B, i, A[i, k])") - 4:][:4] == [
        "B[i] = np.float32(0.0)", "cuda.syncthreads()", "k = tid_x",
        "# block B_atomic"]
    gpu, ref = K.run_both(sch.func, K.inputs(K.ROW_SUM), reference=K.ROW_SUM)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_atomic_max_across_blocks_with_the_init_in_a_launch_before():
    f = pp.parse('''
@T.prim_func
def col_max(A: T.Buffer((8, 4), "int32"), B: T.Buffer((4,), "int32")):
    for j in range(4):
        B[j] = -2147483648
    for k, j in T.grid(8, 4):
        B[j] = T.max(B[j], A[k, j])
''')
    sch = pp.Schedule(f)
    sch.atomic("k")
    sch.bind("j#0", "threadIdx.x")
    sch.bind("k", "blockIdx.x")  # blocks update one element: atomics commute
    sch.bind("B_atomic/j", "threadIdx.x")
    source = codegen.build(sch.func, target="cuda").source
    assert "cuda.atomic.max(B, j_1, A[k, j_1])" in source
    gpu, ref = K.run_both(sch.func, K.inputs(f))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_atomics_do_not_cover_the_other_accesses_of_the_element():
    sch = pp.Schedule(K.ROW_SUM)
    i, k = sch.get_loops("B")
    sch.atomic(k)
    # The init B[i] = 0 runs on block 0, the adds on every block: blocks never wait.
    with pytest.raises(IllegalTransformError, match=r"bind of loop 'k' to blockIdx.x would "
                                                    r"race: B\(i=0\) on block \(0, 0, 0\) "
                                                    r"thread \(0, 0, 0\) writes B\[0\] and "
                                                    r"B_atomic\(i=0, k=1\) on block "
                                                    r"\(1, 0, 0\)") as info:
        sch.bind(k, "blockIdx.x")
    assert info.value.evidence.element == Element("B", (0,))
    assert info.value.evidence.values["second thread"] == "block (1, 0, 0) thread (0, 0, 0)"


def test_atomic_refuses_what_numba_cuda_has_no_atomic_for():
    product = pp.parse(K.ROW_SUM_TEXT.replace("B[i] + A[i, k]", "B[i] * A[i, k]"))
    with pytest.raises(PolypadError, match=r"atomic: numba.cuda has no atomic \* on float32"):
        pp.Schedule(product).atomic("k")
    wide = pp.parse(K.ROW_SUM_TEXT.replace('"float32"', '"int64"').replace("T.float32(0)", "0"))
    with pytest.raises(PolypadError, match=r"no atomic \+ on int64"):
        pp.Schedule(wide).atomic("k")
    with pytest.raises(PolypadError, match=r"is no update X\[idx\] = combine"):
        pp.Schedule(K.ELEMENTWISE).atomic("tx")


BLOCK_REDUCTION = '''
@T.prim_func
def row_reduce(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(INIT)
            B[vi] = COMBINE
'''


def _block_reduction(init: str, combine: str) -> pp.PrimFunc:
    return pp.parse(BLOCK_REDUCTION.replace("INIT", init).replace("COMBINE", combine))


def test_binding_a_blocks_reduction_axis_to_threads_is_a_cross_thread_reduction():
    # TVM's sch.bind of a block's reduction loop: accepted, as TVM accepts it, and built
    # as TVM's allreduce (the cuda target's lower_cross_thread_reduction: a tree);
    # before, bind refused what the target then built.
    func = _block_reduction("0", "B[vi] + A[vi, vk]")
    sch = pp.Schedule(func)
    sch.bind("i", "blockIdx.x")
    sch.bind("k", "threadIdx.x")
    expected = pp.parse('''
@T.prim_func
def row_reduce(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
''')
    assert pp.structural_equal(sch.func, expected)
    source = codegen.build(sch.func, target="cuda").source
    assert "atomic" not in source
    assert source.count("cuda.syncthreads()") == 6  # before each of 5 steps, and the total
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])
    cpu = K.inputs(func)
    codegen.build(sch.func, target="numba")(*cpu)
    np.testing.assert_array_equal(cpu[1], ref[1])


def test_binding_a_product_reduction_to_threads_gives_its_tree():
    # numba.cuda has no atomic product, but the product is commutative and associative.
    func = _block_reduction("1", "B[vi] * A[vi, vk]")
    sch = pp.Schedule(func)
    sch.bind("i", "blockIdx.x")
    sch.bind("k", "threadIdx.x")
    args = K.inputs(func)
    args[0] = np.where(args[0] == 0, 1, np.sign(args[0])).astype("float32")  # exact
    gpu, ref = K.run_both(sch.func, args, reference=func)
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_binding_a_reduction_whose_combiner_is_not_associative_is_refused():
    func = _block_reduction("0", "B[vi] * A[vi, vk] + T.float32(1)")
    sch = pp.Schedule(func)
    sch.bind("i", "blockIdx.x")
    with pytest.raises(IllegalTransformError, match="bind of loop 'k' to threadIdx.x: cannot "
                       "build 'row_reduce': the cross-thread reduction at .* has a combiner "
                       r"that is not associative: .* \(the combiner is not associative; "
                       "values: B_old_a="):
        sch.bind("k", "threadIdx.x")


def test_binding_a_reduction_of_no_combiner_without_an_atomic_is_refused():
    # Two offers into one target (no reduction TVM lowers) and no atomic: the bind
    # races, with both threads.
    func = _block_reduction("1", "B[vi] * A[vi, vk] + A[vi, 0]")
    sch = pp.Schedule(func)
    sch.bind("i", "blockIdx.x")
    with pytest.raises(IllegalTransformError, match="bind of loop 'k' to threadIdx.x would "
                       "race") as caught:
        sch.bind("k", "threadIdx.x")
    evidence = caught.value.evidence
    assert evidence.element == Element("B", (0,))
    assert evidence.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                               "second thread": "block (0, 0, 0) thread (1, 0, 0)"}
    # The reduction written without a block is a plain race too (the bind's docstring).
    plain = pp.parse('''
@T.prim_func
def row_reduce(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 32):
        B[i] = B[i] + A[i, k]
''')
    sch = pp.Schedule(plain)
    with pytest.raises(IllegalTransformError, match="would race"):
        sch.bind("k", "threadIdx.x")
