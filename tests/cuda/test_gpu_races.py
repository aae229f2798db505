"""Barriers and races, decided by analyses.gpu_sync: a needed barrier is placed (and
the kernel then matches the reference); a race no barrier can order is refused with
both instances, both threads and the element; a barrier not every thread reaches is
refused."""

from __future__ import annotations

import itertools
import operator

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from analyses import Element, Instance, Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from analyses.gpu_threads import AXES
from polypad.errors import BuildError, IllegalTransformError, RaceError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk


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


_OPS = {n.Add: operator.add, n.Sub: operator.sub, n.Mul: operator.mul,
        n.FloorDiv: operator.floordiv, n.FloorMod: operator.mod, n.Min: min, n.Max: max,
        n.Lt: operator.lt, n.Le: operator.le, n.Gt: operator.gt, n.Ge: operator.ge,
        n.Eq: operator.eq, n.Ne: operator.ne}


def _value(e, env):
    """An integer or boolean expression of loop counters (enough for these kernels)."""
    match e:
        case n.IntImm() | n.BoolImm():
            return e.value
        case n.Var():
            return env[e]
        case n.And():
            return _value(e.a, env) and _value(e.b, env)
        case n.Or():
            return _value(e.a, env) or _value(e.b, env)
        case n.Not():
            return not _value(e.a, env)
    return _OPS[type(e)](_value(e.a, env), _value(e.b, env))


def _accesses(stmt, env, out, plan, thread=None, launch=None, barriers=None):
    """Walk ``stmt``: serially (``thread`` None: every bound loop runs all its
    iterations), or as the GPU thread ``thread`` (bound loops fixed to its index,
    a store outside a loop of a launched axis on index 0 only), counting the barriers
    of ``plan`` it passes.  Appends (statement, counters, buffer, element, kind,
    barriers passed) for every access."""
    def barrier():
        if barriers is not None:
            barriers[0] += 1

    match stmt:
        case n.SeqStmt():
            slots = plan.at(stmt)
            for k, child in enumerate(stmt.stmts):
                if k in slots:
                    barrier()
                _accesses(child, env, out, plan, thread, launch, barriers)
            if len(stmt.stmts) in slots:
                barrier()
        case n.For() if thread is not None and stmt.kind in AXES:
            index = thread[AXES.index(stmt.kind)]
            if index < _value(stmt.extent, env):
                _accesses(stmt.body, {**env, stmt.var: _value(stmt.min, env) + index}, out,
                          plan, thread, launch, barriers)
        case n.For():
            start = _value(stmt.min, env)
            for v in range(start, start + _value(stmt.extent, env)):
                if 0 in plan.at(stmt):
                    barrier()
                _accesses(stmt.body, {**env, stmt.var: v}, out, plan, thread, launch,
                          barriers)
                if 1 in plan.at(stmt):
                    barrier()
        case n.IfThenElse():
            branch = stmt.then_case if _value(stmt.condition, env) else stmt.else_case
            if branch is not None:
                _accesses(branch, env, out, plan, thread, launch, barriers)
        case n.BufferStore():
            if thread is not None:
                bound = {x.kind for x in _loops_around(launch.root, stmt)}
                if any(thread[k] != 0 for k, axis in enumerate(AXES) if axis not in bound):
                    return
            key = tuple(sorted((v.name, x) for v, x in env.items()))
            count = barriers[0] if barriers is not None else None
            for load in walk(stmt.value):
                if isinstance(load, n.BufferLoad):
                    out.append((id(stmt), key, load.buffer,
                                tuple(_value(i, env) for i in load.indices), "read", count))
            out.append((id(stmt), key, stmt.buffer,
                        tuple(_value(i, env) for i in stmt.indices), "write", count))
        case n.Block() | n.Allocate() | n.LetStmt():
            _accesses(stmt.body, env, out, plan, thread, launch, barriers)


def _loops_around(root, target):
    for node in walk(root):
        if isinstance(node, n.For) and any(x is target for x in walk(node.body)):
            yield node


def _check_by_enumeration(func, drop: bool = False, plan: BarrierPlan | None = None):
    """Every two accesses of one element, one a write, on two threads: in one block,
    the first in the serial order has passed fewer barriers than the second; never in
    two blocks (unless in a private buffer, where the element is not shared).
    ``drop`` checks a plan without its barriers (the check must then fail); ``plan``
    checks that plan instead of the one polypad makes."""
    plan = plan_barriers(func) if plan is None else plan
    assert isinstance(plan, BarrierPlan)
    if drop:
        plan.slots.clear()
    for launch in plan.structure.launches:
        serial: list = []
        _accesses(launch.root, {}, serial, plan)
        order = {(a[0], a[1], a[4], a[2], a[3]): k for k, a in enumerate(serial)}
        extents = [launch.constant_extent(axis) for axis in AXES]
        gpu = []
        for thread in itertools.product(*(range(e) for e in extents)):
            found: list = []
            _accesses(launch.root, {}, found, plan, thread, launch, [0])
            gpu += [(order[(a[0], a[1], a[4], a[2], a[3])], thread, a) for a in found]
        assert len(gpu) == len(serial)  # every instance runs once, on one thread
        by_element: dict = {}
        for entry in gpu:
            by_element.setdefault((entry[2][2], entry[2][3]), []).append(entry)
        for (buffer, _), touches in by_element.items():
            ordered = sorted(touches, key=lambda entry: entry[0])
            for (_, t1, a), (_, t2, b) in itertools.combinations(ordered, 2):
                if t1 == t2 or (a[4] == "read" and b[4] == "read"):
                    continue
                if buffer.scope == "local" or (buffer.scope == "shared" and t1[:3] != t2[:3]):
                    continue  # each thread (block) has its own copy
                assert t1[:3] == t2[:3], (buffer.name, t1, t2)
                assert a[5] < b[5], (buffer.name, a[3], t1, t2)
    return plan


@pytest.mark.parametrize("func", [K.REVERSE, K.STENCIL, K.ELEMENTWISE,
                                  pp.parse(K.PIPELINE.replace("GUARD", "tx < 4"))],
                         ids=["reverse", "stencil", "elementwise", "pipeline"])
def test_the_plan_orders_every_conflicting_pair_by_enumeration(func):
    _check_by_enumeration(func)


def test_the_scheduled_plans_order_every_conflicting_pair_by_enumeration():
    from polypad.examples import conv_layer, matmul

    assert _check_by_enumeration(K.tiled_matmul().func).count == 2
    assert _check_by_enumeration(K.block_row_sum().func).count == 1
    registers = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=2, per_thread=2,
                                     k_tile=4, double_buffer=False)
    assert _check_by_enumeration(registers.func).count == 2
    # Double-buffered (the default): one barrier per step orders every pair too.
    staged = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=2, per_thread=2, k_tile=4)
    assert _check_by_enumeration(staged.func).count == 1
    # The conv layer's tiles are reloaded at each step of rz, ry and the input channels:
    # the barrier at the start of the innermost step's body serves the outer two too.
    conv = conv_layer.schedule_cuda(conv_layer.conv_layer(n=1, ci=16, co=8, w=4, h=1),
                                    x_threads=2, x_per_thread=2, c_threads=2,
                                    c_per_thread=2, k_tile=8)
    assert _check_by_enumeration(conv.func).count == 2


def test_the_enumeration_fails_a_plan_without_its_barriers():
    for func in (K.REVERSE, K.STENCIL, K.tiled_matmul().func):
        with pytest.raises(AssertionError):
            _check_by_enumeration(func, drop=True)
