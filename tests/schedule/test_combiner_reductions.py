"""``rfactor`` and ``decompose_reduction`` with every combiner, and with TVM's ``T.init()``.

Each rewrite is checked against the script it should print (the combiner's identity
in the partial results, the update's own form in the write-back), read back and
replayed (``check_schedule``), and run against the original on random inputs with the
reference executor and Numba: integers and ``min``/``max`` bit for bit, float sums to
rounding.  Refusals name their class and what to do.
"""

from __future__ import annotations

import numpy as np
import pytest
from kind_support import check_schedule, inputs

import codegen
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.schedule.rfactor import Factored
from polypad.script import parse

ROWS = '''
@T.prim_func
def f(A: T.Buffer((4, 12), "{t}"), B: T.Buffer((4,), "{t}")):
    for i, k in T.grid(4, 12):
        B[i] = {update}
'''

DOT = '''
@T.prim_func
def dot(A: T.Buffer((64,), "int8"), B: T.Buffer((64,), "int8"), C: T.Buffer((1,), "int32")):
    for k in T.serial(64):
        with T.block("dot"):
            vk = T.axis.reduce(64, k)
            with T.init():
                C[0] = 0
            C[0] = C[0] + T.int32(A[vk]) * T.int32(B[vk])
'''

POOL = '''
@T.prim_func
def pool(A: T.Buffer((1, 8, 8, 4), "float32"), P: T.Buffer((1, 4, 4, 4), "float32")):
    for n, h, w, c, rh, rw in T.grid(1, 4, 4, 4, 2, 2):
        with T.block("pool"):
            vn, vh, vw, vc, vrh, vrw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
            with T.init():
                P[vn, vh, vw, vc] = T.float32(-3.4e38)
            P[vn, vh, vw, vc] = T.max(P[vn, vh, vw, vc], A[vn, vh * 2 + vrh, vw * 2 + vrw, vc])
'''


def outputs(func: n.PrimFunc, target: str, seed: int = 0) -> list[np.ndarray]:
    arrays = inputs(func, seed)
    with np.errstate(over="ignore"):
        codegen.build(func, target=target, fastmath=None)(*arrays)
    return arrays


def assert_runs_the_same(original: n.PrimFunc, scheduled: n.PrimFunc, *, exact: bool) -> None:
    want = outputs(original, "python")
    for target in ("python", "numba"):
        for w, g in zip(want, outputs(scheduled, target), strict=True):
            if exact:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_rfactor_of_a_max_starts_the_partial_results_at_minus_infinity():
    f = parse(ROWS.format(t="float32", update="T.max(B[i], A[i, k])"))
    sch = Schedule(f)
    _, k_1 = sch.split("k", [None, 4])
    assert sch.rfactor(k_1) == Factored("B_rf", ["i_init", "k_1_init"], ["i", "k_0", "k_1"],
                                        ["i_wb", "k_1_wb"])
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((4, 12), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((4, 4), "float32")
    for i_init, k_1_init in T.grid(4, 4):
        B_rf[k_1_init, i_init] = T.float32("-inf")
    for i, k_0, k_1 in T.grid(4, 3, 4):
        B_rf[k_1, i] = T.max(B_rf[k_1, i], A[i, k_0 * 4 + k_1])
    for i_wb, k_1_wb in T.grid(4, 4):
        B[i_wb] = T.max(B[i_wb], B_rf[k_1_wb, i_wb])
''')
    sch.vectorize(k_1)  # the lanes carry nothing now
    assert_runs_the_same(f, sch.func, exact=True)  # max is exact in any order


def test_rfactor_keeps_the_select_form_of_a_max():
    f = parse(ROWS.format(t="float32",
                          update="T.if_then_else(A[i, k] > B[i], A[i, k], B[i])"))
    sch = Schedule(f)
    sch.rfactor("k")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((4, 12), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((12, 4), "float32")
    for i_init, k_init in T.grid(4, 12):
        B_rf[k_init, i_init] = T.float32("-inf")
    for i, k in T.grid(4, 12):
        B_rf[k, i] = T.if_then_else(A[i, k] > B_rf[k, i], A[i, k], B_rf[k, i])
    for i_wb, k_wb in T.grid(4, 12):
        B[i_wb] = T.if_then_else(B_rf[k_wb, i_wb] > B[i_wb], B_rf[k_wb, i_wb], B[i_wb])
''')
    assert_runs_the_same(f, sch.func, exact=True)


@pytest.mark.parametrize(("update", "identity"), [
    ("B[i] & A[i, k]", "-1"), ("B[i] | A[i, k]", "0"), ("A[i, k] ^ B[i]", "0"),
    ("T.min(B[i], A[i, k])", "2147483647"), ("T.max(B[i], A[i, k])", "-2147483648"),
    ("B[i] * A[i, k]", "1"),
])
def test_rfactor_of_integer_combiners_is_exact(update, identity):
    f = parse(ROWS.format(t="int32", update=update))
    sch = Schedule(f)
    sch.rfactor("k")
    sch.parallel("k")
    init = next(x for x in walk(sch.func.body)
                if isinstance(x, n.BufferStore) and x.buffer.name == "B_rf")
    assert init.value == n.IntImm(int(identity), "int32")  # the combiner's identity
    assert_runs_the_same(f, sch.func, exact=True)


def test_rfactor_of_a_block_with_t_init_moves_the_init_out_first():
    f = parse(DOT)
    sch = Schedule(f)
    k_0, _ = sch.split("k", [None, 16])
    made = sch.rfactor(k_0)
    assert made == Factored("C_rf", ["k_0_init"], ["k_0", "k_1"], ["k_0_wb"], decomposed=[])
    sch.parallel(k_0)
    check_schedule(f, sch, '''
@T.prim_func
def dot(A: T.Buffer((64,), "int8"), B: T.Buffer((64,), "int8"), C: T.Buffer((1,), "int32")):
    C[0] = 0
    C_rf = T.alloc_buffer((4,), "int32")
    for k_0_init in T.serial(4):
        C_rf[k_0_init] = 0
    for k_0 in T.parallel(4):
        for k_1 in T.serial(16):
            with T.block("dot"):
                vk = T.axis.reduce(64, k_0 * 16 + k_1)
                C_rf[k_0] = C_rf[k_0] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vk])
    for k_0_wb in T.serial(4):
        C[0] = C[0] + C_rf[k_0_wb]
''')
    assert_runs_the_same(f, sch.func, exact=True)


def test_decompose_reduction_pins_the_reduce_axes_of_t_init():
    # The guard vrh == 0 and vrw == 0 holds at the first iteration of both window loops
    # and nowhere else (isl): the init's copy has neither loop.
    f = parse(POOL)
    sch = Schedule(f)
    assert sch.decompose_reduction("pool", "c") == ["c_init"]
    check_schedule(f, sch, '''
@T.prim_func
def pool(A: T.Buffer((1, 8, 8, 4), "float32"), P: T.Buffer((1, 4, 4, 4), "float32")):
    for n, h, w in T.grid(1, 4, 4):
        for c_init in T.serial(4):
            P[n, h, w, c_init] = T.float32(-3.4e38)
        for c, rh, rw in T.grid(4, 2, 2):
            with T.block("pool"):
                vn, vh, vw, vc, vrh, vrw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
                P[vn, vh, vw, vc] = T.max(P[vn, vh, vw, vc],
                                          A[vn, vh * 2 + vrh, vw * 2 + vrw, vc])
''')
    assert_runs_the_same(f, sch.func, exact=True)


def test_decompose_reduction_pins_a_split_axis():
    # vk == 0 with vk = k_0 * 16 + k_1 pins both loops.
    f = parse(DOT)
    sch = Schedule(f)
    k_0, _ = sch.split("k", [None, 16])
    assert sch.decompose_reduction("dot", k_0) == []
    check_schedule(f, sch, '''
@T.prim_func
def dot(A: T.Buffer((64,), "int8"), B: T.Buffer((64,), "int8"), C: T.Buffer((1,), "int32")):
    C[0] = 0
    for k_0, k_1 in T.grid(4, 16):
        with T.block("dot"):
            vk = T.axis.reduce(64, k_0 * 16 + k_1)
            C[0] = C[0] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vk])
''')
    assert_runs_the_same(f, sch.func, exact=True)


def test_a_loop_that_may_run_no_iteration_is_not_pinned():
    # With n == 0 the T.init never runs: its copy keeps the loop and the guard.
    f = parse('''
@T.prim_func
def f(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n), "int32")
    B = T.match_buffer(b, (8,), "int32")
    for i, k in T.grid(8, n):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
''')
    sch = Schedule(f)
    assert sch.decompose_reduction("sum", "i") == ["i_init", "k_init"]
    check_schedule(f, sch, '''
@T.prim_func
def f(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n), "int32")
    B = T.match_buffer(b, (8,), "int32")
    for i_init, k_init in T.grid(8, n):
        if k_init == 0:
            B[i_init] = 0
    for i, k in T.grid(8, n):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vi] = B[vi] + A[vi, vk]
''')
    for size in (0, 3):
        rng = np.random.default_rng(size)
        a = rng.integers(-9, 9, (8, size)).astype("int32")
        b = rng.integers(-9, 9, 8).astype("int32")
        want, got = b.copy(), b.copy()
        codegen.build(f, target="python")(a, want, size)
        codegen.build(sch.func, target="python")(a, got, size)
        np.testing.assert_array_equal(got, want)


def test_rfactor_refusals_name_the_combiners_and_the_reason():
    sch = Schedule(parse(ROWS.format(t="int32", update="B[i] - A[i, k]")))
    with pytest.raises(PolypadError, match=r"combiner \+, \*, max, min, &, \|, \^"):
        sch.rfactor("k")
    guarded = parse('''
@T.prim_func
def f(A: T.Buffer((4, 12), "int32"), B: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 12):
        if B[i] < 100:
            B[i] = B[i] + A[i, k]
''')
    with pytest.raises(PolypadError, match="reads B, so its terms depend on its order"):
        Schedule(guarded).rfactor("k")
    sch = Schedule(parse(ROWS.format(t="int32", update="B[i] + A[i, k]")))
    with pytest.raises(PolypadError, match="no reduction of block 'x'|no block 'x'"):
        sch.decompose_reduction("x", "i")
    with pytest.raises(PolypadError, match=r"no reduction of the function with an init store "
                                           r"under the loop over k \(an init writes"):
        sch.decompose_reduction(None, "k")
    assert len(sch.trace) == 0
