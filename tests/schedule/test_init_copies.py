"""The copies a split and ``decompose_reduction`` make of a reduction's init: no init
that never runs, no guard that always holds.

* ``split(tail="partition")`` copies the body into a tail nest; a ``T.init()`` there
  goes where isl proves the reduce axes never at their starts over that nest (the
  tail of the reduce axis), and stays where they may be (the tail of a spatial
  loop, a reduce axis counted down, an extent ``n`` below the factor).  So do the
  ``if k == 0:`` init and ``if k == 29:`` write-back that ``reorder`` sinks.
* ``decompose_reduction`` copies the guards around the init; they are simplified
  over the copy's loops: ``if 0 * 8 + 0 < 30`` goes, ``if i_init < n`` stays.

Each rewrite: the script it should print (read back and replayed), and the original
and rewritten kernels run on random inputs, reference executor and Numba, bit for bit
(no sum changes its order).
"""

from __future__ import annotations

import numpy as np
import pytest
from kind_support import check_schedule

import codegen
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

SUM = '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32")):
    for i, j in T.grid(4, 30):
        with T.block("sum"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.reduce(30, {vj})
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vj]
'''

# The rows of A are summed into B where i < n, from a T.init().
SUM_N = '''
@T.prim_func
def s(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (4, {m}), "float32")
    B = T.match_buffer(b, (4,), "float32")
    for i in T.serial(4):
        if i < {rows}:
            for j in T.serial({m}):
                with T.block("sum"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj]
'''


def arrays(func: n.PrimFunc, seed: int, size: int | None) -> list:
    """Random float32 buffers for ``func``, ``n`` columns where a dimension is ``n``,
    and ``size`` for the scalar ``n`` (``None``: there is none)."""
    rng = np.random.default_rng(seed)
    shapes = [p.shape for p in func.params if isinstance(p, n.Buffer)]
    out = [rng.standard_normal([d if isinstance(d, int) else size for d in shape])
           .astype("float32") for shape in shapes]
    return out + ([] if size is None else [size])


def assert_runs_the_same(original: n.PrimFunc, rewritten: n.PrimFunc, sizes=(None,)) -> None:
    """``rewritten`` leaves the buffers as ``original`` does, bit for bit, on the reference
    executor and Numba; ``sizes``: the values of the scalar ``n`` (``None``: none)."""
    reference = codegen.build(original, target="python")
    kernels = [codegen.build(rewritten, target=t) for t in ("python", "numba")]
    for size in sizes:
        for seed in range(3):
            want = arrays(original, seed, size)
            reference(*want)
            for kernel in kernels:
                got = arrays(original, seed, size)
                kernel(*got)
                for w, g in zip(want[:2], got[:2], strict=True):
                    np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- split, partition


def test_the_tails_of_the_reduce_axis_leave_out_the_init():
    f = parse(SUM.format(vj="j"))
    sch = Schedule(f)
    assert sch.split("j", [2, 4, 4], tail="partition") == ["j_0", "j_1", "j_2"]
    # vj starts at 16 and at 28 in the two tails: the init ran in the main nest.
    check_schedule(f, sch, '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j_0, j_1, j_2 in T.grid(1, 4, 4):
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, j_0 * 16 + j_1 * 4 + j_2)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]
        for j_1_tail, j_2_tail in T.grid(3, 4):
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, j_1_tail * 4 + j_2_tail + 16)
                B[vi] = B[vi] + A[vi, vj]
        for j_2_tail in T.serial(2):
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, j_2_tail + 28)
                B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func)


def test_a_reduce_axis_counted_down_keeps_the_init_in_the_tail_alone():
    # vj = 29 - j is at its start, 0, at the last j: in the tail, not in the main nest.
    f = parse(SUM.format(vj="29 - j"))
    sch = Schedule(f)
    sch.split("j", [None, 8], tail="partition")
    check_schedule(f, sch, '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j_0, j_1 in T.grid(3, 8):
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, 29 - (j_0 * 8 + j_1))
                B[vi] = B[vi] + A[vi, vj]
        for j_1_tail in T.serial(6):
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, 29 - (j_1_tail + 24))
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func)


def test_the_tail_of_a_spatial_loop_keeps_the_init():
    f = parse(SUM.format(vj="j"))
    sch = Schedule(f)
    sch.split("i", [None, 3], tail="partition")
    check_schedule(f, sch, '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32")):
    for i_0, i_1, j in T.grid(1, 3, 30):
        with T.block("sum"):
            vi = T.axis.spatial(4, i_0 * 3 + i_1)
            vj = T.axis.reduce(30, j)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vj]
    for i_1_tail, j in T.grid(1, 30):
        with T.block("sum"):
            vi = T.axis.spatial(4, i_1_tail + 3)
            vj = T.axis.reduce(30, j)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func)


def test_a_tail_that_may_be_the_whole_axis_keeps_the_init():
    # With n < 8 the main nest runs nothing and the tail starts at vj == 0.  n is A's
    # size, never negative, so the tail's extent stays n % 8 and its script reads back
    # (the parser checks vj's domain for every n).
    f = parse(SUM_N.format(m="n", rows=4))
    sch = Schedule(f)
    sch.split("j", [None, 8], tail="partition")
    blocks = [x for x in walk(sch.func.body) if isinstance(x, n.Block)]
    assert [(x.name, x.header.init) for x in blocks] == [("sum", True), ("sum", True)]
    assert [show(x.extent) for x in walk(sch.func.body) if isinstance(x, n.For)] == [
        "4", "n // 8", "8", "n % 8"]
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert_runs_the_same(f, sch.func, sizes=(3, 8, 13))


def test_the_init_and_write_back_reorder_sank_stay_where_they_run():
    # reorder puts the init under `if k == 0` and what follows the loop under
    # `if k == 29`: the split's main nest (k < 24) keeps the init alone, its tail
    # the write-back alone.
    f = parse('''
@T.prim_func
def rows(A: T.Buffer((4, 30), "float32"), C: T.Buffer((4,), "float32"),
         D: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        C[i] = T.float32(0)
        for k in T.serial(30):
            C[i] = C[i] + A[i, k]
        D[i] = C[i] * T.float32(2)
''')
    sch = Schedule(f)
    sch.reorder("k", "i")
    assert sch.split("k", [None, 8], tail="partition") == ["k_0", "k_1"]
    check_schedule(f, sch, '''
@T.prim_func
def rows(A: T.Buffer((4, 30), "float32"), C: T.Buffer((4,), "float32"),
         D: T.Buffer((4,), "float32")):
    for k_0, k_1, i in T.grid(3, 8, 4):
        if k_0 * 8 + k_1 == 0:
            C[i] = T.float32(0)
        C[i] = C[i] + A[i, k_0 * 8 + k_1]
    for k_1_tail, i in T.grid(6, 4):
        C[i] = C[i] + A[i, k_1_tail + 24]
        if k_1_tail + 24 == 29:
            D[i] = C[i] * T.float32(2)
''')
    assert_runs_the_same(f, sch.func)


# ---------------------------------------------------------------- decompose_reduction


def test_decompose_reduction_drops_the_copied_guards_that_always_hold():
    f = parse(SUM.format(vj="j"))
    sch = Schedule(f)
    sch.split("j", [None, 8])
    # The guard j_0 * 8 + j_1 < 30 at j_0 = j_1 = 0 always holds.
    assert sch.decompose_reduction("sum", "j_0") == []
    check_schedule(f, sch, '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = T.float32(0)
        for j_0, j_1 in T.grid(4, 8):
            if j_0 * 8 + j_1 < 30:
                with T.block("sum"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.reduce(30, j_0 * 8 + j_1)
                    B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func)


@pytest.mark.parametrize("m", [30, 6])
def test_decompose_reduction_keeps_a_copied_guard_that_may_fail(m):
    # i_init < n depends on n: it stays.  j_0 * 8 + j_1 < m at j_0 = j_1 = 0 holds for
    # either extent (with 6, j_0 runs once).
    f = parse(SUM_N.format(m=m, rows="n"))
    sch = Schedule(f)
    sch.split("j", [None, 8])
    assert sch.decompose_reduction("sum", "i") == ["i_init"]
    check_schedule(f, sch, f'''
@T.prim_func
def s(A: T.Buffer((4, {m}), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
    for i_init in T.serial(4):
        if i_init < n:
            B[i_init] = T.float32(0)
    for i in T.serial(4):
        if i < n:
            for j_0, j_1 in T.grid({(m + 7) // 8}, 8):
                if j_0 * 8 + j_1 < {m}:
                    with T.block("sum"):
                        vi = T.axis.spatial(4, i)
                        vj = T.axis.reduce({m}, j_0 * 8 + j_1)
                        B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func, sizes=(0, 2, 4))


def test_decompose_reduction_keeps_the_guard_of_an_axis_that_may_be_empty():
    # Over n columns the init's copy runs at j == 0, which exists only for n > 0.  The
    # split writes the forms that cannot wrap: n is bounded by nothing but its dtype.
    f = parse(SUM_N.format(m="n", rows=4))
    sch = Schedule(f)
    sch.split("j", [None, 8])
    assert sch.decompose_reduction("sum", "i") == ["i_init", "j_0_init", "j_1_init"]
    check_schedule(f, sch, '''
@T.prim_func
def s(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (4, n), "float32")
    B = T.match_buffer(b, (4,), "float32")
    for i_init in T.serial(4):
        for j_0_init, j_1_init in T.grid(n // 8 + (n % 8 + 7) // 8, 8):
            if j_1_init < n - j_0_init * 8:
                if j_0_init * 8 + j_1_init == 0:
                    B[i_init] = T.float32(0)
    for i in T.serial(4):
        if i < 4:
            for j_0, j_1 in T.grid(n // 8 + (n % 8 + 7) // 8, 8):
                if j_1 < n - j_0 * 8:
                    with T.block("sum"):
                        vi = T.axis.spatial(4, i)
                        vj = T.axis.reduce(n, j_0 * 8 + j_1)
                        B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func, sizes=(0, 3, 13))


def test_decompose_reduction_folds_a_copied_guard_it_keeps():
    # T.where(j < n) at the pinned j_0 = j_1 = 0 is 0 * 8 + 0 < n: folded to 0 < n, and
    # kept (with n <= 0 no step runs, nor the init); the split's guard goes.
    f = parse('''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
    for i, j in T.grid(4, 30):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            T.where(j < n)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vj]
''')
    sch = Schedule(f)
    sch.split("j", [None, 8])
    assert sch.decompose_reduction("sum", "i") == ["i_init"]
    check_schedule(f, sch, '''
@T.prim_func
def s(A: T.Buffer((4, 30), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
    for i_init in T.serial(4):
        if 0 < n:
            B[i_init] = T.float32(0)
    for i, j_0, j_1 in T.grid(4, 4, 8):
        if j_0 * 8 + j_1 < 30:
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.reduce(30, j_0 * 8 + j_1)
                T.where(j_0 * 8 + j_1 < n)
                B[vi] = B[vi] + A[vi, vj]
''')
    assert_runs_the_same(f, sch.func, sizes=(-1, 0, 5, 40))


# ---------------------------------------------------------------- every if of a nest dead

GUARDS = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in T.serial(4):
        if 0 <= 2 * i - 1 and i % 2 == 0:
            A[2 * i - 1] = A[i + 2] + B[2 * i - 1] + 2.0
        if i % 2 == 0:
            A[2 * i] = C[3] + 3.0
'''


def test_a_tail_whose_every_if_never_runs_runs_nothing():
    # The fuzzer's case 342 of seed 6006: in the tail (i = 3) both ifs are dead; the
    # second one left, after the first, as its loop's whole body, and its removal
    # failed inside split ('For' object has no attribute 'stmts').
    original = parse(GUARDS)
    sch = Schedule(original)
    sch.split("i", [None, 3], tail="partition")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i_0 in T.serial(1):
        for i_1 in T.serial(3):
            if 0 <= 2 * (i_0 * 3 + i_1) - 1 and (i_0 * 3 + i_1) % 2 == 0:
                A[2 * (i_0 * 3 + i_1) - 1] = A[i_0 * 3 + i_1 + 2] + B[2 * (i_0 * 3 + i_1) - 1] + 2.0
            if (i_0 * 3 + i_1) % 2 == 0:
                A[2 * (i_0 * 3 + i_1)] = C[3] + 3.0
    for i_1_tail in T.serial(1):
        T.evaluate(0)
'''))
    assert_runs_the_same(original, sch.func)
