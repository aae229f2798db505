"""Reductions: ``rfactor`` and ``decompose_reduction``, then the kinds they allow.

Each rewrite is checked against the script it should print, run against the
original on random inputs (reference executor; two Numba kernels: floats to
rounding, since rfactor reassociates, integers exactly), and replayed from
its trace; each refusal names its error class and evidence.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kind_support import (
    MAP,
    accumulate,
    assert_same,
    check_schedule,
    row_sum,
    run,
)

from analyses import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.schedule.rfactor import Factored
from polypad.script import parse

# ---------------------------------------------------------------- rfactor


def test_rfactor_a_reduction_inside_its_init_loop():
    f = row_sum()
    sch = Schedule(f)
    assert sch.rfactor("k") == Factored("B_rf", ["k_init"], ["k"], ["k_wb"])
    sch.vectorize("k")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("sum"):
        for i in T.serial(8):
            B[i] = T.float32(0)
            B_rf = T.alloc_buffer((16,), "float32")
            for k_init in T.serial(16):
                B_rf[k_init] = T.float32(0)
            for k in T.vectorized(16):
                B_rf[k] = B_rf[k] + A[i, k]
            for k_wb in T.serial(16):
                B[i] = B[i] + B_rf[k_wb]
''')
    assert str(sch.trace).splitlines() == ["sch.rfactor(loop='k', factor_axis=0)",
                                           "sch.vectorize(loop='k')"]
    # The partial sums live in one iteration of i: i stays parallel.
    sch.parallel("i")
    assert_same(run(f), run(sch.func))


def test_rfactor_after_split_then_vectorize_and_parallel_runs_on_numba():
    f = accumulate()
    sch = Schedule(f)
    sch.split("k", [None, 4])
    made = sch.rfactor("k_1", factor_axis=1)
    assert made == Factored("B_rf", ["i_init", "k_1_init"], ["i", "k_0", "k_1"],
                            ["i_wb", "k_1_wb"])
    sch.vectorize("k_1")
    sch.parallel("i")
    sch.unroll("k_1_wb")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 14), "float32"), B: T.Buffer((8,), "float32")):
    B_rf = T.alloc_buffer((8, 4), "float32")
    for i_init, k_1_init in T.grid(8, 4):
        B_rf[i_init, k_1_init] = T.float32(0)
    for i in T.parallel(8):
        for k_0 in T.serial(4):
            for k_1 in T.vectorized(4):
                if k_0 * 4 + k_1 < 14:
                    B_rf[i, k_1] = B_rf[i, k_1] + A[i, k_0 * 4 + k_1]
    for i_wb in T.serial(8):
        for k_1_wb in T.unroll(4):
            B[i_wb] = B[i_wb] + B_rf[i_wb, k_1_wb]
''')
    # k_0 still carries the partial sums.
    with pytest.raises(IllegalTransformError) as info:
        sch.parallel("k_0")
    assert info.value.evidence.instances[0].indices == {"i": 0, "k_0": 0, "k_1": 0}
    assert info.value.evidence.instances[1].indices == {"i": 0, "k_0": 1, "k_1": 0}
    assert info.value.evidence.element == Element("B_rf", (0, 0))
    want = run(f)
    assert_same(want, run(sch.func))
    assert_same(want, run(sch.func, target="numba"))


def test_rfactor_of_integers_is_exact_on_numba():
    f = accumulate("int32")
    sch = Schedule(f)
    sch.rfactor("k")
    sch.parallel("k")
    want = run(f)
    for w, g in zip(want, run(sch.func, target="numba"), strict=True):
        np.testing.assert_array_equal(g, w)


def test_rfactor_of_a_block_inside_the_loops_keeps_the_block_on_the_update():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("acc"):
            B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    assert sch.rfactor("k").write_back == ["i_wb", "k_wb"]
    sch.parallel("k")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    B_rf = T.alloc_buffer((16, 8), "float32")
    for i_init, k_init in T.grid(8, 16):
        B_rf[k_init, i_init] = T.float32(0)
    for i in T.serial(8):
        for k in T.parallel(16):
            with T.block("acc"):
                B_rf[k, i] = B_rf[k, i] + A[i, k]
    for i_wb, k_wb in T.grid(8, 16):
        B[i_wb] = B[i_wb] + B_rf[k_wb, i_wb]
''')
    assert_same(run(f), run(sch.func))


GUARDED = '''
@T.prim_func
def f(A: T.Buffer((10, 4), "int32"), B: T.Buffer((8,), "int32")):
    for i, j, k in T.grid(10, 2, 2):
        if {cond}:
            B[i] = B[i] + A[i, j * 2 + k]
'''


def test_rfactor_keeps_the_conjuncts_of_a_guard_over_the_kept_loops():
    f = parse(GUARDED.format(cond="i < 8 and j < 1"))
    sch = Schedule(f)
    sch.rfactor("k")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((10, 4), "int32"), B: T.Buffer((8,), "int32")):
    B_rf = T.alloc_buffer((2, 10), "int32")
    for i_init, k_init in T.grid(10, 2):
        if i_init < 8:
            B_rf[k_init, i_init] = 0
    for i, j, k in T.grid(10, 2, 2):
        if i < 8 and j < 1:
            B_rf[k, i] = B_rf[k, i] + A[i, j * 2 + k]
    for i_wb, k_wb in T.grid(10, 2):
        if i_wb < 8:
            B[i_wb] = B[i_wb] + B_rf[k_wb, i_wb]
''')
    assert_same(run(f), run(sch.func))


def test_rfactor_refuses_a_write_back_outside_the_buffer():
    # i + j < 8 bounds i through j, a reduction loop the write-back does not have:
    # it would add into B[8] and B[9].
    sch = Schedule(parse(GUARDED.format(cond="i + j < 8")))
    with pytest.raises(IllegalTransformError, match="outside a buffer") as info:
        sch.rfactor("k")
    assert info.value.evidence.instances == (Instance("S2", {"i_wb": 8, "k_wb": 0}),)
    assert info.value.evidence.element == Element("B", (8,))
    assert len(sch.trace) == 0


def test_rfactor_refuses_what_is_not_a_reduction_over_the_loop():
    sch = Schedule(row_sum())
    with pytest.raises(PolypadError, match="must hold one store, a reduction; it holds 2"):
        sch.rfactor("i")
    sch = Schedule(accumulate())
    with pytest.raises(PolypadError, match="not a reduction loop"):
        sch.rfactor("i")
    with pytest.raises(PolypadError, match="factor_axis"):
        sch.rfactor("k", factor_axis=2)
    sch = Schedule(parse(MAP))
    with pytest.raises(PolypadError, match="no reduction"):
        sch.rfactor("j")
    assert len(sch.trace) == 0


# ---------------------------------------------------------------- decompose_reduction


def test_decompose_reduction_moves_the_init_before_the_loop():
    f = row_sum("int32")
    sch = Schedule(f)
    assert sch.decompose_reduction("sum", "i") == ["i_init"]
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32")):
    with T.block("sum"):
        for i_init in T.serial(8):
            B[i_init] = 0
        for i in T.serial(8):
            for k in T.serial(16):
                B[i] = B[i] + A[i, k]
''')
    assert str(sch.trace) == "sch.decompose_reduction(block='sum', loop='i')"
    assert_same(run(f), run(sch.func))
    # block=None looks in the whole function; k holds no init.
    whole = Schedule(f)
    whole.decompose_reduction(None, "i")
    assert_structural_equal(whole.func, sch.func)
    with pytest.raises(PolypadError, match="no reduction of the function with an init"):
        whole.decompose_reduction(None, "k")


def test_decompose_reduction_refuses_to_overwrite_before_a_read():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    with T.block("sum"):
        for i in T.serial(8):
            C[i] = B[(i + 1) % 8]
            B[i] = 0
            for k in T.serial(16):
                B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError) as info:
        sch.decompose_reduction("sum", "i")
    evidence = info.value.evidence
    # C[0] = B[1] must read B[1] before the init of i = 1 clears it.
    assert evidence.instances == (Instance("sum_0", {"i": 0}), Instance("sum_1", {"i": 1}))
    assert evidence.element == Element("B", (1,))
    assert evidence.description.startswith("anti dependence")
    assert len(sch.trace) == 0


def test_decompose_reduction_of_an_init_guarded_by_the_first_iteration():
    # The T.init form: the init runs at k == 0 inside the block.  Its copy runs that
    # iteration alone, outside the block, with neither the loop over k nor the guard.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32")):
    for i, k in T.grid(8, 16):
        with T.block("sum"):
            if k == 0:
                B[i] = 0
            B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    assert sch.decompose_reduction("sum", "i") == ["i_init"]
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32")):
    for i_init in T.serial(8):
        B[i_init] = 0
    for i, k in T.grid(8, 16):
        with T.block("sum"):
            B[i] = B[i] + A[i, k]
''')
    assert_same(run(f), run(sch.func))
    # Now k carries the reduction alone, and i can run in parallel.  An integer sum is
    # exact in any order: k runs in lanes without rfactor, but not in parallel.
    sch.parallel("i")
    with pytest.raises(IllegalTransformError, match=r"sch.rfactor\('k'\)"):
        sch.parallel("k")
    sch.vectorize("k")
    assert_same(run(f), run(sch.func, target="numba"))


def test_decompose_reduction_inside_a_sequence_and_rfactor_of_two_reductions():
    text = '''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    with T.block("sum"):
        for j in T.serial(8):
            C[j] = 1
        for i in T.serial(8):
            B[i] = 0
            for k in T.serial(16):
                B[i] = B[i] + A[i, k]
        for m, k in T.grid(8, 16):
            C[m] = A[m, k] * C[m]
'''
    f = parse(text)
    sch = Schedule(f)
    sch.decompose_reduction("sum", "i")
    # Two loops over k: the first is k#0.  The product's partial results start at 1.
    assert sch.rfactor("k#1").buffer == "C_rf"
    # With its init moved out, i holds the sum alone: B_rf has an axis for i too.
    # The names it returns are the loops' names: two loops run over k.
    assert sch.rfactor("k#0") == Factored("B_rf", ["i_init_1", "k_init_1"], ["i", "k#0"],
                                          ["i_wb", "k_wb_1"])
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    with T.block("sum"):
        for j in T.serial(8):
            C[j] = 1
        for i_init in T.serial(8):
            B[i_init] = 0
        with T.decl_buffer((16, 8), "int32") as B_rf:
            for i_init_1, k_init_1 in T.grid(8, 16):
                B_rf[k_init_1, i_init_1] = 0
            for i, k in T.grid(8, 16):
                B_rf[k, i] = B_rf[k, i] + A[i, k]
            for i_wb, k_wb_1 in T.grid(8, 16):
                B[i_wb] = B[i_wb] + B_rf[k_wb_1, i_wb]
        C_rf = T.alloc_buffer((16, 8), "int32")
        for m_init, k_init in T.grid(8, 16):
            C_rf[k_init, m_init] = 1
        for m, k in T.grid(8, 16):
            C_rf[k, m] = A[m, k] * C_rf[k, m]
        for m_wb, k_wb in T.grid(8, 16):
            C[m_wb] = C_rf[k_wb, m_wb] * C[m_wb]
''')
    assert_same(run(f), run(sch.func))


@settings(max_examples=20, deadline=None)
@given(extents=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4)),
       loop=st.sampled_from(["j", "k"]), factor_axis=st.integers(0, 1),
       guard=st.sampled_from(["", "j * 4 + k < 7", "i + k < 4", "i < 2 and j * 4 + k < 9"]),
       then=st.sampled_from(["parallel", "vectorize", "unroll"]))
def test_rfactor_of_random_reductions(extents, loop, factor_axis, guard, then):
    """Any reduction loop of a random guarded sum factors, then runs in parallel or in
    lanes (integers: exactly the sum of the original)."""
    a, b, c = extents
    body = "B[i] = B[i] + A[i, j * 4 + k]"
    if guard:
        body = f"if {guard}:\n            {body}"
    f = parse(f'''
@T.prim_func
def f(A: T.Buffer((3, 12), "int32"), B: T.Buffer((3,), "int32")):
    for i, j, k in T.grid({a}, {b}, {c}):
        {body}
''')
    sch = Schedule(f)
    made = sch.rfactor(loop, factor_axis=factor_axis)
    getattr(sch, then)(loop)
    assert made.update == ["i", "j", "k"] and made.buffer == "B_rf"
    assert_same(run(f), run(sch.func))
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)
