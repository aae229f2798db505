"""Barriers and races, decided by analyses.gpu_sync: a needed barrier is placed (and
the kernel then matches the reference); a race no barrier can order is refused with
both instances, both threads and the element; a barrier not every thread reaches is
refused."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses import Element, Instance, Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from polypad.errors import BuildError, IllegalTransformError, RaceError


def test_a_value_between_threads_gets_exactly_one_barrier():
    plan = plan_barriers(K.REVERSE)
    assert isinstance(plan, BarrierPlan) and plan.count == 1
    source = codegen.build(K.REVERSE, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    k = lines.index("cuda.syncthreads()")
    assert lines[k - 1] == "S[tx] = A[bx * 4 + tx]" and lines[k + 1] == "tx_1 = tid_x"
    gpu, ref = K.run_both(K.REVERSE, K.inputs(K.REVERSE))
    np.testing.assert_array_equal(gpu[1], ref[1])


def test_a_race_no_barrier_can_order_is_refused_with_both_threads_and_the_element():
    found = plan_barriers(K.REVERSE_IN_ONE_LOOP)
    assert isinstance(found, Refuted)
    cex = found.counterexample
    assert cex.instances == (Instance("S1", {"tx": 0}), Instance("S0", {"tx": 3}))
    assert cex.element == Element("S", (3,))
    assert cex.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (3, 0, 0)"}
    with pytest.raises(RaceError, match=r"S1\(tx=0\) on block \(0, 0, 0\) thread \(0, 0, 0\) "
                                        r"reads S\[3\] and S0\(tx=3\) on block \(0, 0, 0\) "
                                        r"thread \(3, 0, 0\) writes it after it") as info:
        codegen.build(K.REVERSE_IN_ONE_LOOP, target="cuda")
    assert info.value.evidence == cex


def test_a_needed_barrier_in_a_loop_is_placed_and_under_a_condition_refused():
    uniform = pp.parse(K.PIPELINE.replace("GUARD", "tx < 4"))
    source = codegen.build(uniform, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    assert lines[lines.index("for k in range(4):") + 1] == "cuda.syncthreads()"
    a = np.arange(1, 5, dtype="float32")
    gpu, ref = K.run_both(uniform, [a, np.zeros(4, "float32")])
    np.testing.assert_array_equal(gpu[1], ref[1])
    np.testing.assert_array_equal(ref[1], [0, 2, 4, 6])

    guarded = pp.parse(K.PIPELINE.replace("GUARD", "tx < 3"))
    with pytest.raises(RaceError, match=r"they need a barrier between them, under the "
                                        r"condition tx < 3, which not every thread of the "
                                        r"block reaches") as info:
        codegen.build(guarded, target="cuda")
    cex = info.value.evidence
    assert cex.element == Element("S", (0,))
    assert cex.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                          "second thread": "block (0, 0, 0) thread (1, 0, 0)"}


def test_binding_a_reduction_axis_to_threads_is_refused():
    sch = pp.Schedule(K.ROW_SUM)
    _, k = sch.get_loops("B")
    with pytest.raises(IllegalTransformError, match=r"bind of loop 'k' to threadIdx.x would "
                                                    r"race: B_1\(i=0, k=0\) on block "
                                                    r"\(0, 0, 0\) thread \(0, 0, 0\) writes "
                                                    r"B\[0\]") as info:
        sch.bind(k, "threadIdx.x")
    cex = info.value.evidence
    assert cex.element == Element("B", (0,))
    assert cex.instances == (Instance("B_1", {"i": 0, "k": 0}), Instance("B_1", {"i": 0, "k": 1}))
    assert "thread (1, 0, 0)" in cex.values["second thread"]
    assert "k" not in [s.name for s in sch.trace.steps]  # refused: nothing recorded


def test_two_blocks_writing_one_element_are_refused():
    f = pp.parse('''
@T.prim_func
def bump(A: T.Buffer((4,), "float32")):
    for b in range(2):
        for t in range(4):
            A[t] = A[t] + T.float32(1)
''')
    sch = pp.Schedule(f)
    sch.bind("t", "threadIdx.x")  # each thread its own element: fine
    with pytest.raises(IllegalTransformError, match=r"two blocks touch one element and "
                                                    r"blocks never wait for one another") as info:
        sch.bind("b", "blockIdx.x")
    assert info.value.evidence.values == {"first thread": "block (0, 0, 0) thread (0, 0, 0)",
                                          "second thread": "block (1, 0, 0) thread (0, 0, 0)"}


def test_private_memory_is_private():
    sch = K.block_row_sum()
    with pytest.raises(IllegalTransformError, match="local memory, private to each thread"):
        sch.set_scope("B_rf", "local")
    with pytest.raises(IllegalTransformError, match="it is a parameter of the function"):
        sch.set_scope("A", "shared")
    across_blocks = '''
@T.prim_func
def across(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[bx * 4 + tx] = A[bx * 4 + tx]
    SPLIT
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = S[7 - bx * 4 - tx]
'''
    one_launch = pp.parse(across_blocks.replace("    SPLIT\n", ""))
    with pytest.raises(RaceError, match="shared memory, private to each block") as info:
        codegen.build(one_launch, target="cuda")
    assert info.value.evidence.element == Element("S", (0,))
    two_launches = pp.parse(across_blocks.replace(
        "SPLIT", 'for bx in T.thread_binding(2, thread="blockIdx.x"):'))
    with pytest.raises(BuildError, match="shared buffer 'S' is used by 2 kernel launches"):
        codegen.build(two_launches, target="cuda")


@pytest.mark.parametrize("func", [K.REVERSE, K.STENCIL, K.ELEMENTWISE,
                                  pp.parse(K.PIPELINE.replace("GUARD", "tx < 4"))],
                         ids=["reverse", "stencil", "elementwise", "pipeline"])
def test_the_plan_orders_every_conflicting_pair_by_enumeration(func):
    check_by_enumeration(func)


def test_the_scheduled_plans_order_every_conflicting_pair_by_enumeration():
    from polypad.examples import conv_layer, matmul

    assert check_by_enumeration(K.tiled_matmul().func).count == 2
    assert check_by_enumeration(K.block_row_sum().func).count == 1
    registers = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=2, per_thread=2,
                                     k_tile=4, double_buffer=False)
    assert check_by_enumeration(registers.func).count == 2
    # Double-buffered (the default): one barrier per step orders every pair too.
    staged = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=2, per_thread=2, k_tile=4)
    assert check_by_enumeration(staged.func).count == 1
    # The conv layer's tiles are reloaded at each step of rz, ry and the input channels:
    # the barrier at the start of the innermost step's body serves the outer two too.
    conv = conv_layer.schedule_cuda(conv_layer.conv_layer(n=1, ci=16, co=8, w=4, h=1),
                                    x_threads=2, x_per_thread=2, c_threads=2,
                                    c_per_thread=2, k_tile=8)
    assert check_by_enumeration(conv.func).count == 2


def test_the_enumeration_fails_a_plan_without_its_barriers():
    for func in (K.REVERSE, K.STENCIL, K.tiled_matmul().func):
        with pytest.raises(AssertionError):
            check_by_enumeration(func, drop=True)


def test_a_barrier_in_a_loop_whose_trip_count_depends_on_the_thread_is_refused():
    # Row ty runs the loop ty times: the tree's barriers inside it (a reduction block
    # bound to threadIdx.x) would be reached by some threads of the block and not others.
    func = pp.parse('''
@T.prim_func
def f(A: T.Buffer((2, 4, 4, 8), "float32"), B: T.Buffer((2, 4, 4), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for j in range(ty):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    with T.block("B"):
                        vi, vy, vj, vk = T.axis.remap("SSSR", [i, ty, j, tx])
                        with T.init():
                            B[vi, vy, vj] = T.float32(0)
                        B[vi, vy, vj] = B[vi, vy, vj] + A[vi, vy, vj, vk]
''')
    with pytest.raises(RaceError, match=r"they need a barrier between them, under loop 'j', "
                                        r"whose bounds depend on the thread, which not every "
                                        r"thread of the block reaches"):
        codegen.build(func, target="cuda")
