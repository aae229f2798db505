"""The barrier plan on random kernels, checked by running every thread's loops.

:mod:`gpu_random_programs` makes the kernels and the verdicts; this asks that
none is wrong.  ``POLYPAD_GPU_FUZZ=N`` runs N kernels instead of the default, and
``POLYPAD_GPU_FUZZ_GATHERS=N`` N kernels with gathers and scatters.
"""

from __future__ import annotations

import os
import re

import cuda_kernels as K
import gpu_random_programs as G
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from analyses.gpu_sync import BarrierPlan, plan_barriers
from polypad.errors import NotAffineError
from polypad.ir import nodes as n

COUNT = int(os.environ.get("POLYPAD_GPU_FUZZ", "120"))
GATHER_COUNT = int(os.environ.get("POLYPAD_GPU_FUZZ_GATHERS", "40"))


def test_every_plan_orders_its_pairs_and_every_refusal_is_real():
    answers: dict[str, int] = {}
    findings = []
    for seed in range(COUNT):
        found = G.verdict(G.parse(seed))
        answers[found.answer] = answers.get(found.answer, 0) + 1
        if found.finding is not None:
            findings.append((seed, found))
    assert findings == []
    # Both answers stay common, so that both checks keep checking something.
    assert answers["plan"] >= COUNT // 4 and answers["refused"] >= COUNT // 4


def test_random_kernels_with_gathers_and_scatters_against_actual_index_arrays():
    # Gathers through X from the shared buffers the block writes, scatters into them,
    # gathers from the input: each plan checked with several actual arrays X.
    answers: dict[str, int] = {}
    findings, may_races, shared_gathers = [], 0, 0
    for seed in range(GATHER_COUNT):
        text = G.program_text(seed, gathers=True)
        found = G.verdict(pp.parse(text))
        answers[found.answer] = answers.get(found.answer, 0) + 1
        if found.finding is not None:
            findings.append((seed, found))
        shared_gathers += found.answer == "plan" and re.search(
            r"[SR]\[(T\.min\(T\.max\(|T\.floormod\()?X\[", text) is not None
        may_races += found.answer == "refused"
    assert findings == []
    assert shared_gathers >= GATHER_COUNT // 8 and may_races >= GATHER_COUNT // 4


def test_accepted_random_kernels_match_the_reference_in_the_simulator():
    ran = 0
    for seed in range(60):
        func = G.parse(seed)
        try:
            if not isinstance(plan_barriers(func), BarrierPlan):
                continue
        except NotAffineError:
            continue
        rng = np.random.default_rng(seed)
        args = [rng.integers(-4, 5, [int(s) for s in p.shape]).astype(p.dtype)
                if isinstance(p, n.Buffer) else 5 for p in func.params]  # n = 5
        gpu, ref = K.run_both(func, args)
        np.testing.assert_array_equal(gpu[1], ref[1], err_msg=G.program_text(seed))
        ran += 1
        if ran == 8:
            break
    assert ran == 8


# Random kernel 3141: block 1 alone runs the loop whose barriers order its writes of
# R; block 0 skips it.  The plan counted those barriers as ordering the write of S[12]
# by thread 3 and its read by thread 2 in every block, and put none before the last
# loop: block 0 raced.
UNDER_A_BLOCK_CONDITION = '''
@T.prim_func
def rand(A: T.Buffer((32,), "float32"), B: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((16,), "float32", scope="shared")
        R = T.alloc_buffer((16,), "float32", scope="shared")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(2):
                S[k * 8 + tx] = A[bx * 16 + k * 8 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            S[T.floormod(3 * tx + 3, 16)] = R[T.floordiv(tx, 2) + 3] + A[bx * 16 + tx]
        if bx == 1:
            for k3 in range(2):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    R[T.floormod(tx + k3 + 7, 16)] = A[bx * 16 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = S[T.floormod(tx + 10, 16)] + R[T.floormod(tx + 8, 16)]
'''


def test_a_barrier_only_some_blocks_reach_orders_nothing_in_the_others():
    func = pp.parse(UNDER_A_BLOCK_CONDITION)
    plan = check_by_enumeration(func)
    assert plan.count == 3
    lines = [line.strip() for line in codegen.build(func, target="cuda").source.splitlines()]
    last = lines.index("B[bx * 8 + tx_3] = S[(tx_3 + 10) % 16] + R[(tx_3 + 8) % 16]")
    assert lines[last - 2:last] == ["cuda.syncthreads()", "tx_3 = tid_x"]
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
    # Without the barrier before the last loop, the enumeration finds block 0's race.
    without = plan_barriers(func)
    last = [key for key, node in without.nodes.items()
            if isinstance(node, n.SeqStmt) and len(node.stmts) - 1 in without.slots[key]]
    assert len(last) == 1
    without.slots[last[0]].discard(len(without.nodes[last[0]].stmts) - 1)
    with pytest.raises(AssertionError, match=r"'S', \(12,\), \(0, 0, 0, 3, 0, 0\)"):
        check_by_enumeration(func, plan=without)


# Random kernel 13142: at k2 == 0 no statement of the k2 loop's body runs before the
# barrier inside it (both are under `k2 == 1`), and in block 1 none after it either
# (`bx == 0`); yet every thread of every block passes that barrier at k2 == 0, and it
# orders the first loop's writes of S before the reads at k2 == 1.  The plan took the
# barrier to run only where a statement of its sequence runs and added one before the
# k2 loop, which the enumeration found redundant.
EVERY_STATEMENT_UNDER_A_CONDITION = '''
@T.prim_func
def rand(A: T.Buffer((32,), "float32"), B: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((16,), "float32", scope="shared")
        R = T.alloc_buffer((16,), "float32", scope="shared")
        L = T.alloc_buffer((2,), "float32", scope="local")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(2):
                S[k * 8 + tx] = A[bx * 16 + k * 8 + tx]
        for k2 in range(2):
            if k2 == 1:
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    L[T.floormod(tx, 2)] = S[T.floormod(2 * tx + k2 + 13, 16)]
                    R[T.floormod(tx + k2 + 6, 16)] = L[T.floormod(tx, 2)] + A[tx]
            else:
                if k2 == 1:
                    for tx in T.thread_binding(8, thread="threadIdx.x"):
                        S[T.floormod(3 * tx + 2 * k2 + 12, 16)] = A[bx * 16 + tx]
            if bx == 0:
                for k4 in range(2):
                    for tx in T.thread_binding(8, thread="threadIdx.x"):
                        if tx < 2:
                            R[T.floormod(tx + 2 * k2 + 4, 16)] = \\
                                S[T.floormod(tx + k2 + k4 + 7, 16)] + A[bx * 16 + tx]
                    for tx in T.thread_binding(4, thread="threadIdx.x"):
                        S[T.floormod(2 * tx + 2 * k2 + k4 + 13, 16)] = A[bx * 16 + tx]
        for k2 in range(2):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                for j in range(2):
                    S[T.floormod(3 * tx + 3 * k2 + 10, 16)] = A[bx * 16 + tx]
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            B[bx * 8 + tx] = S[T.floormod(tx + 11, 16)] + R[T.floormod(tx + 12, 16)]
'''


def test_a_barrier_runs_where_its_sequence_runs_though_no_statement_of_it_does():
    func = pp.parse(EVERY_STATEMENT_UNDER_A_CONDITION)
    plan = check_by_enumeration(func)
    assert plan.count == 3
    outer = next(node for node in plan.nodes.values()
                 if isinstance(node, n.SeqStmt) and len(node.stmts) == 4)
    assert plan.at(outer) == {3}  # none before the k2 loop: the one inside it serves
    assert G.verdict(func) == G.Verdict("plan", None)  # each of the 3 is needed
    gpu, ref = K.run_both(func, K.inputs(func))
    np.testing.assert_array_equal(gpu[1], ref[1])
