"""``reorder_by_map`` on TVM block programs: each block moves whole (reschedule_blocks).

The block keeps its axes, bound to the new loops, and its ``T.init()``,
``T.where`` and ``T.reads``/``T.writes``; the band names the block.  Each
case is checked three ways: the expected function in script syntax, the
trace replayed, and original against transformed on random inputs through
the reference executor and Numba.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from analyses.evidence import Counterexample
from polypad.errors import IllegalTransformError, NotFoundError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

MATMUL = '''
@T.prim_func
def mm(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
       C: T.Buffer((4, 5), "float32")):
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

ELEMENTWISE = '''
@T.prim_func
def f(A: T.Buffer((14, 3), "float32"), B: T.Buffer((14, 3), "float32")):
    for i, j in T.grid(14, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] + 1.0
'''


def same_results(before, after, seed: int = 0) -> None:
    """Both functions leave every buffer equal from the same random inputs (small
    integers, so that float sums are exact), on the reference executor and Numba."""
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-9, 9, p.shape).astype(p.dtype) for p in before.params]
    want = [a.copy() for a in arrays]
    codegen.build(before, target="python")(*want)
    for target in ("python", "numba"):
        got = [a.copy() for a in arrays]
        codegen.build(after, target=target)(*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=target)


def reordered(text: str, band: str, *, split: tuple | None = None) -> tuple:
    """(the original, the scheduled function) after ``reorder_by_map(None, band)``,
    checked well formed and replayed by the trace."""
    original = parse(text)
    sch = Schedule(original)
    if split is not None:
        sch.split(*split)
    sch.reorder_by_map(None, band)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(original).func, sch.func)
    return original, sch.func


@pytest.mark.numba
def test_matmul_with_init_moves_whole_under_the_new_loops():
    original, out = reordered(MATMUL, "{ C[i, j, k] -> [j, i, k] }")
    assert_structural_equal(out, parse('''
@T.prim_func
def mm(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
       C: T.Buffer((4, 5), "float32")):
    for b0 in T.serial(5):
        for b1 in T.serial(4):
            for b2 in T.serial(6):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [b1, b0, b2])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = 0.0
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''))
    same_results(original, out)


@pytest.mark.numba
def test_matmul_reduction_outermost_keeps_the_loop_the_band_leaves():
    # The init runs at vk == 0, the first iteration of the new outer loop: still
    # before every update of its element, as the dependence check proved.
    original, out = reordered(MATMUL, "{ C[i, j, k] -> [k, j] }")
    assert_structural_equal(out, parse('''
@T.prim_func
def mm(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
       C: T.Buffer((4, 5), "float32")):
    for b0 in T.serial(6):
        for b1 in T.serial(5):
            for i in T.serial(4):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, b1, b0])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = 0.0
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''))
    same_results(original, out)


@pytest.mark.numba
def test_elementwise_block_tiled_by_the_band_binds_its_axis_to_isl_form():
    original, out = reordered(ELEMENTWISE, "{ B[i, j] -> [floor(i/4), j, i mod 4] }")
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((14, 3), "float32"), B: T.Buffer((14, 3), "float32")):
    for b0 in T.serial(4):
        for b1 in T.serial(3):
            for b2 in T.serial(4):
                if 4 * b0 + b2 < 14:
                    with T.block("B"):
                        vi = T.axis.spatial(14, 4 * b0 + b2)
                        vj = T.axis.remap("S", [b1])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] + 1.0
'''))
    same_results(original, out)


@pytest.mark.numba
def test_block_guarded_by_a_split_keeps_its_guard():
    # split's predicate stands around the block; the band reverses the nest.
    original, out = reordered(ELEMENTWISE, "{ B[io, ii, j] -> [j, ii, io] }",
                              split=("i", [None, 4]))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((14, 3), "float32"), B: T.Buffer((14, 3), "float32")):
    for b0 in T.serial(3):
        for b1 in T.serial(4):
            for b2 in T.serial(4):
                if b1 + 4 * b2 < 14:
                    with T.block("B"):
                        vi = T.axis.spatial(14, b1 + 4 * b2)
                        vj = T.axis.remap("S", [b0])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] + 1.0
'''))
    same_results(original, out)


@pytest.mark.numba
def test_block_with_a_where_predicate_keeps_it_inside():
    # The block runs on the loops' whole box; its T.where still picks the instances.
    original, out = reordered('''
@T.prim_func
def g(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for io, ii in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(14, io * 4 + ii)
            T.where(io * 4 + ii < 14)
            B[vi] = A[vi] * 2.0
''', "{ B[io, ii] -> [ii, io] }")
    assert_structural_equal(out, parse('''
@T.prim_func
def g(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for b0, b1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(14, b0 + 4 * b1)
            T.where(b1 * 4 + b0 < 14)
            B[vi] = A[vi] * 2.0
'''))
    same_results(original, out)


def test_producer_and_consumer_blocks_in_a_root_block():
    original, out = reordered('''
@T.prim_func
def two(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    with T.block("root"):
        B = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1.0
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vj, vi] * 2.0
''', "{ C[i, j] -> [j, i] }")
    assert_structural_equal(out, parse('''
@T.prim_func
def two(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    with T.block("root"):
        B = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1.0
        for b0, b1 in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [b1, b0])
                C[vi, vj] = B[vj, vi] * 2.0
'''))
    same_results(original, out)


def test_a_block_named_as_the_scope_keeps_its_axes_at_its_head():
    original = parse('''
@T.prim_func
def f(A: T.Buffer((4, 6), "float32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            for j in T.serial(6):
                A[vi, j] = A[vi, j] * 2.0
''')
    sch = Schedule(original)
    sch.reorder_by_map("B", "{ B[i, j] -> [5 - j] }")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 6), "float32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            for b0 in T.serial(6):
                A[i, 5 - b0] = A[i, 5 - b0] * 2.0
'''))
    same_results(original, sch.func)


# ---------------------------------------------------------------- refusals


def test_a_broken_dependence_between_block_instances_is_refused_with_evidence():
    func = parse('''
@T.prim_func
def shift(A: T.Buffer((9,), "float32")):
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            A[vi + 1] = A[vi] + 1.0
''')
    with pytest.raises(IllegalTransformError, match="would break a dependence") as err:
        Schedule(func).reorder_by_map(None, "{ B[i] -> [7 - i] }")
    assert type(err.value) is IllegalTransformError
    assert isinstance(err.value.evidence, Counterexample)
    assert "A[1]" in str(err.value)


def test_a_statement_of_a_block_moved_whole_cannot_take_a_band_of_its_own():
    with pytest.raises(PolypadError) as err:
        Schedule(parse(MATMUL)).reorder_by_map(None, "{ C_1[i, j, k] -> [j, i, k] }")
    assert type(err.value) is PolypadError
    assert str(err.value) == ("C_1 is a statement of block 'C', which moves whole with its "
                              "other statements: name the block (C[...])")


def test_a_block_with_axes_and_loops_inside_is_refused_by_name():
    func = parse('''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32")):
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            for j in T.serial(4):
                A[vi, j] = A[vi, j] + 1.0
''')
    with pytest.raises(PolypadError) as err:
        Schedule(func).reorder_by_map(None, "{ B[i, j] -> [j, i] }")
    assert type(err.value) is PolypadError
    assert str(err.value) == ("reorder_by_map: block 'B' holds loop 'j'; a block with axes is "
                              "moved whole, and reorder_by_map does not move loops inside one")


def test_the_block_name_is_the_label_not_a_made_up_one():
    with pytest.raises(NotFoundError, match="statements: C$"):
        Schedule(parse(MATMUL)).reorder_by_map(None, "{ D[i, j, k] -> [j, i, k] }")
