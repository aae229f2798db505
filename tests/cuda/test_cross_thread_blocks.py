"""Reduction blocks over a thread axis, lowered as TVM's ``tvm_thread_allreduce``.

``sch.bind(k, "threadIdx.x")`` on a reduction block's loop leaves a ``T.init()``
block that TVM's ``LowerCrossThreadReduction`` turns into a tree;
:mod:`polypad.transform.lower_cross_thread_reduction` does the same for the cuda
target: the block's combiner (:mod:`polypad.transform.block_combiner`), proved
commutative and associative by Z3, each thread's serial passes folded first,
then the tree of :mod:`polypad.semantics.lower_allreduce`.  Each kernel runs on
Numba's simulator against the reference executor (small integers: sums are exact
in any order, and argmax meets ties), its barriers are checked by enumerating
every thread, and the rewrite is compared with the function it should give.
"""

from __future__ import annotations

from pathlib import Path

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses.gpu_sync import BarrierPlan
from polypad.errors import BuildError, RaceError
from polypad.ir import nodes as ir
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.semantics.lower_allreduce import lower_allreduce
from polypad.transform.lower_cross_thread_reduction import lower_cross_thread_reduction
from polypad.transform.place_gpu_allocations import place_gpu_allocations
from polypad.transform.unify_thread_bindings import unify_thread_bindings

ROW = '''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = INIT
                B[vi] = UPDATE
'''

SUM = ROW.replace("INIT", "T.float32(0)").replace("UPDATE", "B[vi] + A[vi, vk]")
MAX = ROW.replace("INIT", "T.float32(-100)").replace("UPDATE", "T.max(B[vi], A[vi, vk])")

#: TOPI's argmax (as TVM 0.27 prints it) over 6 threads: the index and the value.
ARGMAX = '''
@T.prim_func
def f(x: T.Buffer((3, 6), "float32"), idx: T.Buffer((3,), "int32"),
      val: T.Buffer((3,), "float32")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        for k in T.thread_binding(6, thread="threadIdx.x"):
            with T.block("x_red_temp"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                with T.init():
                    idx[v_i] = -1
                    val[v_i] = T.min_value("float32")
                v_idx: T.let[T.int32] = T.Select(
                    val[v_i] > x[v_i, v_k] or val[v_i] == x[v_i, v_k] and idx[v_i] < v_k,
                    idx[v_i], v_k)
                v_val: T.let[T.float32] = T.Select(val[v_i] > x[v_i, v_k], val[v_i], x[v_i, v_k])
                idx[v_i] = v_idx
                val[v_i] = v_val
'''

#: ``k = ko * 6 + tx``: the threads cover the reduction in 4 passes, ``ko`` serial
#: outside the thread loop (TVM's split) or inside it.
PASSES = '''
@T.prim_func
def f(A: T.Buffer((4, 24), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ko in range(4):
            for tx in T.thread_binding(6, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(24, ko * 6 + tx)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''
PASSES_INSIDE = PASSES.replace('''
        for ko in range(4):
            for tx in T.thread_binding(6, thread="threadIdx.x"):''', '''
        for tx in T.thread_binding(6, thread="threadIdx.x"):
            for ko in range(4):''')

#: A group of threads per row (threadIdx.y), 4 rows of threads for 3 rows of data: the
#: last group masked whole by a T.where that reads no reduction loop (dlight's GEMV).
ROWS_MASKED = '''
@T.prim_func
def f(A: T.Buffer((3, 24), "float32"), B: T.Buffer((3,), "float32")):
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        for ko in range(4):
            for tx in T.thread_binding(6, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(3, ty)
                    vk = T.axis.reduce(24, ko * 6 + tx)
                    T.where(ty < 3)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''

#: 20 columns in 3 passes of 8 threads: TVM's split that does not divide, whose last
#: pass is masked by a T.where on the reduction's loops.
UNEVEN = """
@T.prim_func
def f(A: T.Buffer((4, 20), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ko in range(3):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(20, ko * 8 + tx)
                    T.where(ko * 8 + tx < 20)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
"""


def _planned(func):
    """The function whose barriers the cuda target plans (its rewrites of ``func``)."""
    func = unify_thread_bindings(place_gpu_allocations(codegen.lower(func)))
    return lower_allreduce(lower_cross_thread_reduction(func))


def _every_barrier_needed(func) -> int:
    """The enumeration accepts the plan, and rejects it without any one barrier."""
    planned = _planned(func)
    plan = check_by_enumeration(planned)
    for key in list(plan.slots):
        for slot in sorted(plan.slots[key]):
            fewer = BarrierPlan(plan.structure, {k: set(v) for k, v in plan.slots.items()},
                                dict(plan.nodes))
            fewer.slots[key].discard(slot)
            with pytest.raises(AssertionError):
                check_by_enumeration(planned, plan=fewer)
    return plan.count


@pytest.mark.parametrize("text, want", [
    (SUM, lambda a: a.sum(axis=1)),
    (MAX, lambda a: a.max(axis=1)),
    (PASSES, lambda a: a.sum(axis=1)),
    (PASSES_INSIDE, lambda a: a.sum(axis=1)),
    (ROWS_MASKED, lambda a: a.sum(axis=1)),
    (UNEVEN, lambda a: a.sum(axis=1)),
    (SUM.replace("with T.init():", "T.where(k < 6)\n                with T.init():"),
     lambda a: a[:, :6].sum(axis=1)),
], ids=["sum", "max", "passes", "passes_inside", "rows_masked", "uneven", "masked_threads"])
def test_a_reduction_block_over_threads_runs_as_a_tree(text, want):
    func = pp.parse(text)
    args = K.inputs(func, seed=3)
    gpu, ref = K.run_both(func, args)
    np.testing.assert_array_equal(gpu[1], ref[1])
    np.testing.assert_array_equal(gpu[1], want(args[0]))
    source = codegen.build(func, target="cuda").source
    assert "atomic" not in source and "red_buf0 = cuda.shared.array(" in source


def test_argmax_as_a_block_gives_the_reference_indices_and_values_ties_included():
    func = pp.parse(ARGMAX)
    for seed in range(3):
        args = K.inputs(func, seed=seed)
        assert any(len(set(row)) < len(row) for row in args[0])  # ties
        gpu, ref = K.run_both(func, args)
        np.testing.assert_array_equal(gpu[1], ref[1])
        np.testing.assert_array_equal(gpu[2], ref[2])
        np.testing.assert_array_equal(gpu[1], np.argmax(args[0], axis=1))
        np.testing.assert_array_equal(gpu[2], args[0].max(axis=1))
    # Every value the init's own: the serial program keeps the init's index -1, and so
    # does the tree, the init combined last.
    lowest = [np.full((3, 6), np.finfo("float32").min, "float32"),
              np.zeros(3, "int32"), np.zeros(3, "float32")]
    gpu, ref = K.run_both(func, lowest)
    np.testing.assert_array_equal(ref[1], [-1, -1, -1])
    np.testing.assert_array_equal(gpu[1], ref[1])


@pytest.mark.parametrize("text, barriers", [(SUM, 4), (ARGMAX, 3), (PASSES, 3),
                                             (ROWS_MASKED, 3), (UNEVEN, 4)],
                         ids=["sum", "argmax", "passes", "rows_masked", "uneven"])
def test_the_trees_barriers_are_proved_and_each_is_needed(text, barriers):
    assert _every_barrier_needed(pp.parse(text)) == barriers


def test_the_row_sum_becomes_tvms_allreduce_with_the_init_added_by_thread_0():
    expected = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(8, thread="threadIdx.x"):
            B_cross_thread = T.alloc_buffer((1,), "float32", scope="local")
            vi: T.let[T.int32] = i
            vk: T.let[T.int32] = k
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], T.bool(True), B_cross_thread[0], k)
            with T.block("B_write_back"):
                if k == 0:
                    B[vi] = T.float32(0) + B_cross_thread[0]
''')
    assert_structural_equal(lower_cross_thread_reduction(pp.parse(SUM)), expected)


def test_the_passes_are_folded_in_each_thread_first():
    expected = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4, 24), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(6, thread="threadIdx.x"):
            B_in_thread = T.alloc_buffer((1,), "float32", scope="local")
            B_cross_thread = T.alloc_buffer((1,), "float32", scope="local")
            for ko in range(4):
                with T.block("B_in_thread"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(24, ko * 6 + tx)
                    if ko == 0:
                        B_in_thread[0] = A[vi, vk]
                    else:
                        B_in_thread[0] = B_in_thread[0] + A[vi, vk]
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), B_in_thread[0], T.bool(True),
                                       B_cross_thread[0], tx)
            with T.block("B_write_back"):
                vi = T.axis.spatial(4, i)
                T.where(tx == 0)
                B[vi] = T.float32(0) + B_cross_thread[0]
''')
    for text in (PASSES, PASSES_INSIDE):
        assert_structural_equal(lower_cross_thread_reduction(pp.parse(text)), expected)


def test_argmax_becomes_one_allreduce_of_the_index_and_the_value():
    lowered = lower_cross_thread_reduction(pp.parse(ARGMAX))
    expected = pp.parse('''
@T.prim_func
def f(x: T.Buffer((3, 6), "float32"), idx: T.Buffer((3,), "int32"),
      val: T.Buffer((3,), "float32")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        for k in T.thread_binding(6, thread="threadIdx.x"):
            idx_cross_thread = T.alloc_buffer((1,), "int32", scope="local")
            val_cross_thread = T.alloc_buffer((1,), "float32", scope="local")
            v_i: T.let[T.int32] = i
            v_k: T.let[T.int32] = k
            with T.attr(T.comm_reducer(
                    lambda x0, x1, y0, y1: (T.Select(x1 > y1 or x1 == y1 and x0 < y0, x0, y0),
                                            T.Select(x1 > y1, x1, y1)),
                    [0, T.float32(0)]), "reduce_scope", 0):  # offered by no thread
                T.tvm_thread_allreduce(T.uint32(2), v_k, x[v_i, v_k], T.bool(True),
                                       idx_cross_thread[0], val_cross_thread[0], k)
            with T.block("x_red_temp_write_back"):
                if k == 0:
                    # The init (-1, lowest) combined with the tree's result.
                    idx[v_i] = T.Select(
                        T.min_value("float32") > val_cross_thread[0]
                        or T.min_value("float32") == val_cross_thread[0]
                        and -1 < idx_cross_thread[0], -1, idx_cross_thread[0])
                    val[v_i] = T.Select(T.min_value("float32") > val_cross_thread[0],
                                        T.min_value("float32"), val_cross_thread[0])
''')
    assert_structural_equal(lowered, expected)


def test_a_combiner_that_is_not_commutative_is_refused_with_z3s_values():
    func = pp.parse(ROW.replace("INIT", "T.float32(0)").replace(
        "UPDATE", "B[vi] * T.float32(2) + A[vi, vk]"))
    with pytest.raises(BuildError) as info:
        codegen.build(func, target="cuda")
    message = str(info.value)
    assert message.startswith("cannot build 'f': the cross-thread reduction at <string>:")
    assert "has a combiner that is not commutative: its threads' offers would combine " \
           "differently in another order (the combiner is not commutative" in message
    assert "B_old_a" in message and "B_old_b" in message


def test_a_block_of_another_shape_is_left_to_the_atomics():
    # An update reading another element of its target is no reduction into one element.
    other = ROW.replace("INIT", "T.float32(0)").replace("UPDATE", "B[vi] + B[0] + A[vi, vk]")
    func = pp.parse(other)
    assert lower_cross_thread_reduction(func) is func
    # An init that never runs (the axis never meets its start): the serial program adds
    # to what B held, which the tree's write-back would not (Z3 finds the init's runs).
    never = PASSES.replace("T.axis.reduce(24, ko * 6 + tx)", "T.axis.reduce(25, ko * 6 + tx + 1)")
    func = pp.parse(never)
    assert lower_cross_thread_reduction(func) is func
    # A T.where on the reduction's thread: the masked threads would offer an identity,
    # and a max has none (Z3 reads floats as reals); left as it is, it runs as atomic
    # updates, as before.
    where = MAX.replace("with T.init():", "T.where(k < 6)\n                with T.init():")
    func = pp.parse(where)
    assert lower_cross_thread_reduction(func) is func
    args = K.inputs(func, seed=1)
    gpu, ref = K.run_both(func, args)
    np.testing.assert_array_equal(gpu[1], ref[1])
    assert "cuda.atomic.max(B, vi, A[vi, vk])" in codegen.build(func, target="cuda").source


def test_tvms_own_loop_split_case_runs_with_its_passes_folded_first():
    # TVM's test of LowerCrossThreadReduction (``loop_split``): a serial row loop, 4
    # passes of 32 threads; 4 rows here instead of 128, for the simulator.
    path = Path(__file__).resolve().parents[1] / "examples" / "tvm_legacy" / \
        "lower_cross_thread_reduction__loop_split.py"
    text = path.read_text().replace("T.grid(128, 4)", "T.grid(4, 4)").replace(
        "[128, 128]", "[4, 128]").replace("[128]", "[4]").replace("T.axis.S(128, i)",
                                                                  "T.axis.S(4, i)")
    func = pp.parse(text)
    lowered = lower_cross_thread_reduction(func)
    assert any(isinstance(x, ir.ThreadAllReduce) for x in walk(lowered.body))
    assert "B_in_thread[0] = B_in_thread[0] + A[vi, vk]" in pp.script(lowered)
    args = K.inputs(func)
    gpu, ref = K.run_both(func, args)
    np.testing.assert_array_equal(gpu[1], ref[1])
    np.testing.assert_array_equal(gpu[1], args[0].sum(axis=1))


def test_a_group_masked_whole_offers_under_its_condition_and_stores_nothing():
    expected = pp.parse('''
@T.prim_func
def f(A: T.Buffer((3, 24), "float32"), B: T.Buffer((3,), "float32")):
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        for tx in T.thread_binding(6, thread="threadIdx.x"):
            B_in_thread = T.alloc_buffer((1,), "float32", scope="local")
            B_cross_thread = T.alloc_buffer((1,), "float32", scope="local")
            for ko in range(4):
                with T.block("B_in_thread"):
                    vi = T.axis.spatial(3, ty)
                    vk = T.axis.reduce(24, ko * 6 + tx)
                    T.where(ty < 3)
                    if ko == 0:
                        B_in_thread[0] = A[vi, vk]
                    else:
                        B_in_thread[0] = B_in_thread[0] + A[vi, vk]
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), B_in_thread[0], ty < 3, B_cross_thread[0],
                                       tx)
            with T.block("B_write_back"):
                vi = T.axis.spatial(3, ty)
                T.where(ty < 3 and tx == 0)
                B[vi] = T.float32(0) + B_cross_thread[0]
''')
    assert_structural_equal(lower_cross_thread_reduction(pp.parse(ROWS_MASKED)), expected)


def test_masked_iterations_offer_the_init_proved_an_identity():
    # TVM's in-thread reduction for a split that does not divide: the fold starts from
    # the identity (the sum's init, 0, which Z3 proves one) and skips the masked passes.
    expected = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4, 20), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B_in_thread = T.alloc_buffer((1,), "float32", scope="local")
            B_cross_thread = T.alloc_buffer((1,), "float32", scope="local")
            B_in_thread[0] = T.float32(0)
            for ko in range(3):
                with T.block("B_in_thread"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(20, ko * 8 + tx)
                    T.where(ko * 8 + tx < 20)
                    B_in_thread[0] = B_in_thread[0] + A[vi, vk]
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), B_in_thread[0], T.bool(True),
                                       B_cross_thread[0], tx)
            with T.block("B_write_back"):
                vi = T.axis.spatial(4, i)
                T.where(tx == 0)
                B[vi] = T.float32(0) + B_cross_thread[0]
''')
    assert_structural_equal(lower_cross_thread_reduction(pp.parse(UNEVEN)), expected)
    # Where the first pass may be masked, the serial program skips the init there: left.
    late = UNEVEN.replace("T.where(", "T.where(ko * 8 + tx > 3 and ")
    func = pp.parse(late)
    assert lower_cross_thread_reduction(func) is func


#: Two targets whose init reads the other: the serial program's ``Q`` starts from the
#: init of ``S`` (3), not from what the write-back stores into ``S`` first.
INIT_READS_A_TARGET = '''
@T.prim_func
def f(A: T.Buffer((4, 8), "int32"), S: T.Buffer((4,), "int32"), Q: T.Buffer((4,), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = 3
                    Q[vi] = S[vi]
                S[vi] = S[vi] + A[vi, vk]
                Q[vi] = Q[vi] + A[vi, vk] * 2
'''


def test_an_init_that_reads_another_target_is_not_lowered():
    # The write-back would store S first and then read it for Q's init: Q = S + ... with
    # S's new value (the tree gave 3 + 2 * sum + sum instead of 3 + 2 * sum).  Left, it
    # is refused as before: no atomic form for two targets.
    func = pp.parse(INIT_READS_A_TARGET)
    assert lower_cross_thread_reduction(func) is func
    with pytest.raises(RaceError, match="is a cross-thread reduction"):
        codegen.build(func, target="cuda")


def test_a_combiner_z3_does_not_decide_is_left_to_the_atomics():
    # A bitwise or: Z3 gives no answer in time (5 s, once: one build); numba.cuda has the
    # atomic, as before the tree.
    func = pp.parse(ROW.replace('"float32"', '"int32"').replace("INIT", "0").replace(
        "UPDATE", "B[vi] | A[vi, vk]"))
    kernel = codegen.build(func, target="cuda")
    assert "cuda.atomic.or_(B, vi, A[vi, vk])" in kernel.source
    args = K.inputs(func, seed=0)
    gpu = [a.copy() for a in args]
    kernel(*gpu)
    np.testing.assert_array_equal(gpu[1], np.bitwise_or.reduce(args[0], axis=1))
