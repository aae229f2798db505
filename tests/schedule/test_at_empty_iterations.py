"""A block placed at a loop some of whose iterations hold no instance of the
statements under it (the tail of a split: ``if 32 * j_1 + j_2 < 16`` leaves
``j_1 >= 2`` empty).  What the primitive puts there -- a producer
(``compute_at``), a cache's copies (``cache_read``/``cache_write`` with
``at=``) -- runs at every iteration, so it carries its own guard: before the
fix, it ran unguarded over elements past the end (``C[0, 64]`` of a 64-wide C)."""

from __future__ import annotations

from location_support import same_results

from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

PIPELINE = '''
@T.prim_func
def f(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((64,), "float32")
    for i in T.serial(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
    for i in T.serial(64):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + T.float32(1)
'''

PIPELINE_AT_I_1 = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.sblock_alloc_buffer((64,), "float32")
    for i_0 in T.serial(1):
        for i_1 in T.serial(4):
            with T.sblock("B"):
                if i_1 < 2:
                    for i in T.serial(32 * i_1, 32 * i_1 + 32):
                        B[i] = A[i] * 2.0
            for i_2 in T.serial(32):
                if i_0 * 128 + i_1 * 32 + i_2 < 64:
                    with T.sblock("C"):
                        vi = T.axis.spatial(64, i_0 * 128 + i_1 * 32 + i_2)
                        C[vi] = B[vi] + 1.0
'''


def test_compute_at_a_loop_with_empty_iterations_guards_the_producer():
    sch = Schedule(parse(PIPELINE))
    _, i_1, _ = sch.split(sch.get_loops("C")[0], [None, 4, 32])
    sch.compute_at("B", i_1)
    verify(sch.func)
    assert_structural_equal(sch.func, parse(PIPELINE_AT_I_1))
    for target in ("python", "numba"):
        same_results(parse(PIPELINE), sch.func, target)


MATMUL = '''
@T.prim_func
def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16, 16), "float32"),
      C: T.Buffer((4, 16), "float32")):
    for i, j, k in T.grid(4, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

# Panels of 32 columns in a 16-wide C: tiles j_1 = 2 and 3 are empty.
MATMUL_CACHED_AT_J_1 = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16, 16), "float32"),
      C: T.Buffer((4, 16), "float32")):
    for j_0 in T.serial(1):
        for i in T.serial(4):
            for j_1 in T.serial(4):
                B_local = T.alloc_buffer((16, 8), "float32", scope="local")
                with T.sblock("B_local"):
                    if j_1 <= 1:
                        for ax0 in T.serial(16):
                            for ax1 in T.serial(8):
                                B_local[ax0, ax1] = B[ax0, 8 * j_1 + ax1]
                C_local = T.alloc_buffer((1, 8), "float32", scope="local")
                for k in T.serial(16):
                    for j_2 in T.serial(8):
                        if j_0 * 32 + j_1 * 8 + j_2 < 16:
                            with T.sblock("C"):
                                vi = T.axis.remap("S", [i])
                                vj = T.axis.spatial(16, j_0 * 32 + j_1 * 8 + j_2)
                                vk = T.axis.remap("R", [k])
                                with T.init():
                                    C_local[vi - i, vj - 8 * j_1] = 0.0
                                C_local[vi - i, vj - 8 * j_1] = (
                                    C_local[vi - i, vj - 8 * j_1]
                                    + A[vi, vk] * B_local[vk, vj - 8 * j_1])
                with T.sblock("C_local"):
                    if j_1 <= 1:
                        for ax1 in T.serial(8):
                            C[i + 0, 8 * j_1 + ax1] = C_local[0, ax1]
'''


def test_caches_at_a_loop_with_empty_iterations_guard_their_copies():
    sch = Schedule(parse(MATMUL))
    i, j, k = sch.get_loops("C")
    j_0, j_1, j_2 = sch.split(j, [None, 4, 8])
    sch.reorder(j_0, i, j_1, k, j_2)
    sch.cache_write("C", "C", "local", at=j_1)
    sch.cache_read("C", "B", "local", at=j_1)
    verify(sch.func)
    assert_structural_equal(sch.func, parse(MATMUL_CACHED_AT_J_1))
    for target in ("python", "numba"):
        same_results(parse(MATMUL), sch.func, target)
