"""``store_at``: an intermediate buffer allocated inside a loop, as the box one
iteration touches; the rewrite, its refusals with evidence, and execution."""

from __future__ import annotations

import pytest
from location_support import STENCIL, random_inputs, run, same_results, scheduled

from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

# The stencil after compute_at("B", "io"): B's elements of iteration io are
# B[4io : 4io + 6], computed and read within it (neighbours recompute the overlap).
COMPUTED_AT = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
    for io in T.serial(4):
        with T.block("B"):
            for i in T.serial(4 * io, 4 * io + 6):
                B[i] = A[i] * T.float32(2)
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]
'''


def test_store_at_allocates_the_box_of_one_iteration():
    sch = scheduled(COMPUTED_AT, "store_at", "B", "io")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    for io in T.serial(4):
        B = T.alloc_buffer((6,), "float32")
        with T.block("B"):
            for i in T.serial(4 * io, 4 * io + 6):
                B[i - 4 * io] = A[i] * T.float32(2)
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[ii] + B[ii + 1] + B[ii + 2]
'''))
    assert str(sch.trace) == "sch.store_at(buffer='B', loop='io')"
    same_results(parse(STENCIL), sch.func)


@pytest.mark.numba
def test_store_at_runs_the_same_under_numba_with_the_tile_on_the_stack():
    sch = scheduled(COMPUTED_AT, "store_at", "B", "io")
    same_results(parse(STENCIL), sch.func, target="numba")


@pytest.mark.parametrize("tile", [2, 3, 4])
def test_store_at_after_compute_at_keeps_results_for_every_tile(tile):
    src = f'''
@T.prim_func
def f(A: T.Buffer((12, 6), "float32"), C: T.Buffer((12,), "float32")):
    B = T.alloc_buffer((12, 6), "float32")
    for i, j in T.grid(12, 6):
        with T.block("B"):
            B[i, j] = A[i, j] * A[i, j]
    for io in T.serial({12 // tile}):
        for ii in T.serial({tile}):
            with T.block("C"):
                C[io * {tile} + ii] = T.float32(0)
                for j in T.serial(6):
                    C[io * {tile} + ii] = C[io * {tile} + ii] + B[io * {tile} + ii, j]
'''
    sch = Schedule(parse(src))
    sch.compute_at("B", "io")
    assert sch.store_at("B", "io") == (tile, 6)
    same_results(parse(src), sch.func)


def test_store_at_refuses_a_value_carried_to_the_next_iteration():
    src = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,), "float32")
    for i in T.serial(8):
        B[i + 1] = B[i] + A[i]
        C[i] = B[i + 1]
'''
    with pytest.raises(IllegalTransformError, match=r"reads B\[1\], which S0\(i=0\) wrote "
                       r"in another iteration") as info:
        Schedule(parse(src)).store_at("B", "i")
    evidence = info.value.evidence
    assert evidence.element == Element("B", (1,))
    assert evidence.instances == (Instance("S0", {"i": 0}), Instance("S0", {"i": 1}))


def test_store_at_allows_reading_what_no_iteration_wrote():
    # B[i + 1] is read before any write of it: zeros, in the original and per iteration.
    src = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,), "float32")
    for i in T.serial(8):
        B[i] = A[i]
        C[i] = B[i] + B[i + 2]
'''
    sch = Schedule(parse(src))
    assert sch.store_at("B", "i") == (3,)
    same_results(parse(src), sch.func)


def test_store_at_refuses_a_parameter_and_an_access_outside_the_loop():
    with pytest.raises(IllegalTransformError, match="C is a parameter"):
        Schedule(parse(STENCIL)).store_at("C", "io")
    with pytest.raises(IllegalTransformError, match=r"B\(i=0\) writes B outside the loop"):
        Schedule(parse(STENCIL)).store_at("B", "io")


def test_store_at_refuses_a_buffer_allocated_inside_the_loop():
    sch = Schedule(parse(COMPUTED_AT))
    sch.store_at("B", "io")
    with pytest.raises(IllegalTransformError, match="not allocated around the loop"):
        sch.store_at("B", "io")


def test_store_at_of_a_loop_that_does_not_touch_the_buffer():
    src = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        A[i] = A[i] + T.float32(1)
    for k in T.serial(4):
        B[k] = A[k]
'''
    with pytest.raises(PolypadError, match="not allocated around the loop|outside the loop"):
        Schedule(parse(src)).store_at("B", "i")
    arrays = random_inputs(parse(src))
    assert run(parse(src), arrays)[0].shape == (4,)
