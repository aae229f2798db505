"""``cache_read`` and ``cache_write`` placed at a loop: the rewrites, their refusals
with evidence, and execution equal to the original."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from location_support import (
    PRODUCER,
    STENCIL,
    STENCIL_HEAD,
    same_results,
)

from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# ---------------------------------------------------------------- caches at a loop

MATMUL = '''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
      C: T.Buffer((8, 8), "float32")):
    for io in T.serial(2):
        for jo in T.serial(2):
            for ii in T.serial(4):
                for ji in T.serial(4):
                    with T.block("C"):
                        C[4 * io + ii, 4 * jo + ji] = T.float32(0)
                        for k in T.serial(8):
                            C[4 * io + ii, 4 * jo + ji] = C[4 * io + ii, 4 * jo + ji] + A[
                                4 * io + ii, k] * B[k, 4 * jo + ji]
'''


def cached(src: str, primitive: str, *args, **kwargs) -> Schedule:
    sch = Schedule(parse(src))
    getattr(sch, primitive)(*args, **kwargs)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(parse(src)).func, sch.func)
    return sch


def test_cache_write_at_a_loop_makes_a_register_tile():
    sch = cached(MATMUL, "cache_write", "C", "C", "local", at="jo")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
      C: T.Buffer((8, 8), "float32")):
    for io in T.serial(2):
        for jo in T.serial(2):
            C_local = T.alloc_buffer((4, 4), "float32", scope="local")
            for ii in T.serial(4):
                for ji in T.serial(4):
                    with T.block("C"):
                        C_local[ii, ji] = T.float32(0)
                        for k in T.serial(8):
                            C_local[ii, ji] = C_local[ii, ji] + A[4 * io + ii, k] * B[
                                k, 4 * jo + ji]
            with T.block("C_local"):
                for ax0 in T.serial(4):
                    for ax1 in T.serial(4):
                        C[4 * io + ax0, 4 * jo + ax1] = C_local[ax0, ax1]
'''))
    assert str(sch.trace) == (
        "sch.cache_write(block='C', buffer='C', scope='local', name=None, at='jo')")
    same_results(parse(MATMUL), sch.func)


@pytest.mark.numba
def test_the_register_tile_runs_the_same_under_numba():
    sch = cached(MATMUL, "cache_write", "C", "C", "local", at="jo")
    same_results(parse(MATMUL), sch.func, target="numba")


def test_cache_write_at_a_loop_fills_what_the_block_reads_before_writing():
    src = MATMUL.replace("                        C[4 * io + ii, 4 * jo + ji] = T.float32(0)\n",
                         "")
    sch = cached(src, "cache_write", "C", "C", "local", at="jo")
    fill = sch.func.body.body.body.body.stmts[0]
    assert fill.name == "C_local_in"
    same_results(parse(src), sch.func)


def test_cache_read_at_a_loop_copies_one_iterations_rows():
    sch = cached(MATMUL, "cache_read", "C", "A", "local", at="io")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
      C: T.Buffer((8, 8), "float32")):
    for io in T.serial(2):
        A_local = T.alloc_buffer((4, 8), "float32", scope="local")
        with T.block("A_local"):
            for ax0 in T.serial(4):
                for ax1 in T.serial(8):
                    A_local[ax0, ax1] = A[4 * io + ax0, ax1]
        for jo in T.serial(2):
            for ii in T.serial(4):
                for ji in T.serial(4):
                    with T.block("C"):
                        C[4 * io + ii, 4 * jo + ji] = T.float32(0)
                        for k in T.serial(8):
                            C[4 * io + ii, 4 * jo + ji] = C[4 * io + ii, 4 * jo + ji] + A_local[
                                ii, k] * B[k, 4 * jo + ji]
'''))
    same_results(parse(MATMUL), sch.func)


def test_cache_read_at_a_loop_serves_a_stencil_after_compute_at():
    sch = Schedule(parse(STENCIL))
    sch.compute_at("B", "io")
    # At io the loop's own B block writes B: a copy made there would hide it.
    with pytest.raises(IllegalTransformError) as info:
        sch.cache_read("C", "B", "local", at="io")
    assert info.value.evidence.instances == (Instance("B", {"io": 0, "i": 0}),)
    sch.cache_read("C", "B", "local", at="ii")
    # Three elements an iteration: the box of B[4io + ii : 4io + ii + 3].
    alloc = sch.func.body.body.body.stmts[1].body
    assert alloc.buffer.shape == (3,)
    assert_structural_equal(sch.trace.apply_to(parse(STENCIL)).func, sch.func)
    same_results(parse(STENCIL), sch.func)


def test_cache_read_at_a_loop_refuses_a_block_that_writes_the_buffer():
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(MATMUL)).cache_read("C", "C", at="io")
    assert info.value.evidence.instances == (Instance("C_0", {"io": 0, "jo": 0, "ii": 0,
                                                              "ji": 0}),)


def test_cache_write_at_a_loop_refuses_another_access_in_the_loop():
    block_c = '                    with T.block("C"):'
    src = MATMUL.replace(block_c, '                    with T.block("D"):\n'
                         '                        C[4 * io + ii, 4 * jo + ji] = T.float32(1)\n'
                         + block_c)
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).cache_write("C", "C", at="jo")
    evidence = info.value.evidence
    assert evidence.instances == (Instance("D", {"io": 0, "jo": 0, "ii": 0, "ji": 0}),)
    assert evidence.element == Element("C", (0, 0))


def test_cache_at_a_loop_outside_the_block_is_refused():
    with pytest.raises(PolypadError, match="not inside loop"):
        Schedule(parse(MATMUL)).cache_write("C", "C", at="k")


# ---------------------------------------------------------------- with the tiling primitives


def test_compute_at_a_loop_that_split_made():
    src = STENCIL_HEAD + PRODUCER + '''    for i in T.serial(16):
        with T.block("C"):
            C[i] = B[i] + B[i + 1] + B[i + 2]
'''
    sch = Schedule(parse(src))
    outer, _ = sch.split(sch.get_loops("C")[0], [None, 4])
    sch.compute_at("B", outer)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(parse(src)).func, sch.func)
    same_results(parse(src), sch.func)


# ---------------------------------------------------------------- properties


def stencil_source(offsets: tuple[int, ...], factor: int, tiles: int) -> str:
    size = factor * tiles
    reads = " + ".join(f"B[{factor} * io + ii + {o}]" for o in offsets)
    return f'''
@T.prim_func
def f(A: T.Buffer(({size + max(offsets)},), "float32"), C: T.Buffer(({size},), "float32")):
    B = T.alloc_buffer(({size + max(offsets)},), "float32")
    for i in T.serial({size + max(offsets)}):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
    for io in T.serial({tiles}):
        for ii in T.serial({factor}):
            with T.block("C"):
                C[{factor} * io + ii] = {reads}
'''


@settings(max_examples=12, deadline=None)
@given(offsets=st.sets(st.integers(0, 3), min_size=1).map(lambda s: tuple(sorted(s))),
       factor=st.integers(1, 4), tiles=st.integers(1, 3), loop=st.sampled_from(["io", "ii"]))
def test_compute_at_of_a_random_stencil_runs_the_same(offsets, factor, tiles, loop):
    src = stencil_source(offsets, factor, tiles)
    sch = Schedule(parse(src))
    try:
        sch.compute_at("B", loop)
    except IllegalTransformError as e:
        # Only an unused element of B may stop it: the one no C reads.
        assert e.evidence.instances[0].statement == "B"
        return
    verify(sch.func)
    same_results(parse(src), sch.func)


@settings(max_examples=12, deadline=None)
@given(offsets=st.sets(st.integers(0, 3), min_size=1).map(lambda s: tuple(sorted(s))),
       factor=st.integers(1, 4), tiles=st.integers(1, 3), loop=st.sampled_from(["io", "ii"]))
def test_reverse_compute_at_of_a_random_stencil_runs_the_same(offsets, factor, tiles, loop):
    size = factor * tiles
    width = size - max(offsets)
    if width < 1:
        return
    reads = " + ".join(f"B[i + {o}]" for o in offsets)
    src = f'''
@T.prim_func
def f(A: T.Buffer(({size},), "float32"), C: T.Buffer(({width},), "float32")):
    B = T.alloc_buffer(({size},), "float32")
    for io in T.serial({tiles}):
        for ii in T.serial({factor}):
            with T.block("B"):
                B[{factor} * io + ii] = A[{factor} * io + ii] * T.float32(2)
    for i in T.serial({width}):
        with T.block("C"):
            C[i] = {reads}
'''
    sch = Schedule(parse(src))
    sch.reverse_compute_at("C", loop)
    verify(sch.func)
    same_results(parse(src), sch.func)


def test_compute_at_refuses_to_recompute_over_a_later_write():
    src = STENCIL + '''            with T.block("D"):
                B[4 * io + ii + 2] = T.float32(0)
'''
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).compute_at("B", "io")
    evidence = info.value.evidence
    # B[4] is computed at io=0 and again at io=1, after D(io=0, ii=2) zeroed it.
    assert evidence.instances == (Instance("D", {"io": 0, "ii": 2}),)
    assert evidence.element == Element("B", (4,))


def test_a_register_tile_with_the_relu_fused_under_its_tile_loop():
    src = MATMUL.replace('C: T.Buffer((8, 8), "float32")):', 'D: T.Buffer((8, 8), "float32")):\n'
                         '    C = T.alloc_buffer((8, 8), "float32")') + '''    for i in T.serial(8):
        for j in T.serial(8):
            with T.block("relu"):
                D[i, j] = T.max(C[i, j], T.float32(0))
'''
    sch = Schedule(parse(src))
    sch.cache_write("C", "C", "local", at="jo")
    sch.reverse_compute_at("relu", "jo")
    verify(sch.func)
    relu = sch.func.body.body.body.body.stmts[1]
    assert relu.name == "relu"  # at the end of each jo iteration, after the flush
    assert_structural_equal(sch.trace.apply_to(parse(src)).func, sch.func)
    same_results(parse(src), sch.func)
