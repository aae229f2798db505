"""``compute_at``, ``reverse_compute_at`` and caches placed at a loop: the rewrites,
their refusals with evidence, their trace, and execution equal to the original."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codegen
from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# A 3-point stencil: C, tiled by io/ii, reads B[i], B[i + 1], B[i + 2].
STENCIL_HEAD = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
'''
PRODUCER = '''    for i in T.serial(18):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
'''
CONSUMER = '''    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]
'''
STENCIL = STENCIL_HEAD + PRODUCER + CONSUMER

REDUCTION = '''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        with T.block("B"):
            B[i] = T.float32(0)
            for k in T.serial(4):
                B[i] = B[i] + A[i, k]
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] * T.float32(2)
'''


def run(func, arrays, target: str = "python") -> list[np.ndarray]:
    out = [a.copy() for a in arrays]
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    codegen.build(func, target=target, fastmath=None)(*out)
    return out


def random_inputs(func, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(int(e) for e in p.shape)).astype(p.dtype)
            for p in func.params]


def same_results(before, after, target: str = "python") -> None:
    """``after`` (built for ``target``) leaves every buffer as ``before`` (the reference
    interpreter) does, from the same random inputs."""
    arrays = random_inputs(before)
    for want, got in zip(run(before, arrays), run(after, arrays, target), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def scheduled(src: str, primitive: str, *args) -> Schedule:
    sch = Schedule(parse(src))
    getattr(sch, primitive)(*args)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(parse(src)).func, sch.func)
    return sch


# ---------------------------------------------------------------- compute_at


def test_compute_at_computes_the_stencil_region_with_overlap():
    sch = scheduled(STENCIL, "compute_at", "B", "io")
    assert_structural_equal(sch.func, parse(STENCIL_HEAD + '''    for io in T.serial(4):
        with T.block("B"):
            for i in T.serial(4 * io, 4 * io + 6):
                B[i] = A[i] * T.float32(2)
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]
'''))
    assert str(sch.trace) == "sch.compute_at(block='B', loop='io')"
    same_results(parse(STENCIL), sch.func)


def test_compute_at_an_inner_loop_computes_three_elements_an_iteration():
    sch = scheduled(STENCIL, "compute_at", "B", "ii")
    assert_structural_equal(sch.func, parse(STENCIL_HEAD + '''    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B"):
                for i in T.serial(ii + 4 * io, ii + 4 * io + 3):
                    B[i] = A[i] * T.float32(2)
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]
'''))
    same_results(parse(STENCIL), sch.func)


@pytest.mark.numba
def test_compute_at_runs_the_same_under_numba():
    sch = scheduled(STENCIL, "compute_at", "B", "io")
    same_results(parse(STENCIL), sch.func, target="numba")


def test_compute_at_moves_a_reduction_with_its_initialisation():
    sch = scheduled(REDUCTION, "compute_at", "B", "io")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for io in T.serial(2):
        with T.block("B"):
            for i in T.serial(4 * io, 4 * io + 4):
                B[i] = T.float32(0)
                for k in T.serial(4):
                    B[i] = B[i] + A[i, k]
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] * T.float32(2)
'''))
    same_results(parse(REDUCTION), sch.func)


def test_compute_at_keeps_a_prefix_sum_whose_regions_do_not_overlap():
    src = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    with T.block("B"):
        B[0] = A[0]
        for i in T.serial(1, 16):
            B[i] = B[i - 1] + A[i]
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = B[4 * io + ii] * T.float32(2)
'''
    # B[4io - 1] was computed at the iteration before, and nothing recomputes it.
    sch = scheduled(src, "compute_at", "B", "io")
    same_results(parse(src), sch.func)


def test_compute_at_refuses_to_drop_what_another_consumer_reads():
    src = STENCIL_HEAD.replace("(18,)", "(20,)").replace(
        '"float32")):', '"float32"), D: T.Buffer((1,), "float32")):', 1) + PRODUCER.replace(
        "18", "20") + CONSUMER + '''    with T.block("D"):
        D[0] = B[19]
'''
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).compute_at("B", "io")
    evidence = info.value.evidence
    assert evidence.instances == (Instance("B", {"i": 19}), Instance("D", {}))
    assert evidence.element == Element("B", (19,))


def test_compute_at_refuses_to_drop_part_of_an_output():
    src = '''
@T.prim_func
def f(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32"),
      C: T.Buffer((16,), "float32")):
''' + PRODUCER.replace("18", "20") + CONSUMER
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).compute_at("B", "io")
    evidence = info.value.evidence
    assert evidence.instances == (Instance("B", {"i": 18}),)
    assert evidence.element == Element("B", (18,))


def test_compute_at_refuses_to_read_an_input_after_it_is_overwritten():
    src = STENCIL_HEAD + PRODUCER + '''    for i in T.serial(18):
        with T.block("Z"):
            A[i] = T.float32(0)
''' + CONSUMER
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).compute_at("B", "io")
    evidence = info.value.evidence
    # An anti dependence: B(i=0) reads A[0] before Z(i=0) overwrites it.
    assert evidence.instances == (Instance("B", {"i": 0}), Instance("Z", {"i": 0}))
    assert evidence.element == Element("A", (0,))


def test_compute_at_refuses_to_recompute_a_prefix_sum():
    src = STENCIL_HEAD + '''    with T.block("B"):
        B[0] = A[0]
        for i in T.serial(1, 18):
            B[i] = B[i - 1] + A[i]
''' + CONSUMER
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).compute_at("B", "io")
    evidence = info.value.evidence
    # At io=1 the region is B[4:10]; B[4] = B[3] + A[4] reads B[3], computed (and
    # recomputed, at io=0) outside it.
    assert evidence.instances == (Instance("B_1", {"i": 4}),)
    assert evidence.element == Element("B", (3,))


def test_compute_at_refuses_a_loop_before_the_block():
    with pytest.raises(PolypadError, match="reverse_compute_at"):
        Schedule(parse(STENCIL)).compute_at("C", "i")


# ---------------------------------------------------------------- reverse_compute_at

PRODUCER_TILED = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B"):
                B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
'''
STENCIL_CONSUMER = '''    for i in T.serial(14):
        with T.block("C"):
            C[i] = B[i] + B[i + 1] + B[i + 2]
'''


def test_reverse_compute_at_runs_what_each_iteration_completed():
    src = PRODUCER_TILED + STENCIL_CONSUMER
    sch = scheduled(src, "reverse_compute_at", "C", "io")
    # C[i] needs B[i + 2]: it runs at the iteration that writes B[i + 2], so the
    # first iteration completes C[0:2] and each later one four more.
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B"):
                B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
        with T.block("C"):
            for i in T.serial(T.max(4 * io - 2, 0),
                              T.max(4 * io - 2, 0) + T.if_then_else(io == 0, 2, 4)):
                C[i] = B[i] + B[i + 1] + B[i + 2]
'''))
    assert str(sch.trace) == "sch.reverse_compute_at(block='C', loop='io')"
    same_results(parse(src), sch.func)


def test_reverse_compute_at_an_inner_loop_runs_one_instance_an_iteration():
    src = PRODUCER_TILED + STENCIL_CONSUMER
    sch = scheduled(src, "reverse_compute_at", "C", "ii")
    same_results(parse(src), sch.func)


def test_reverse_compute_at_refuses_to_write_what_the_loop_still_reads():
    src = PRODUCER_TILED.replace("A[4 * io + ii] * T.float32(2)",
                                 "A[4 * io + ii] + C[0]") + STENCIL_CONSUMER
    with pytest.raises(IllegalTransformError) as info:
        Schedule(parse(src)).reverse_compute_at("C", "io")
    evidence = info.value.evidence
    # B(io=1, ii=0) reads C[0], which C(i=0) would now overwrite at io=0.
    assert evidence.instances == (Instance("B", {"io": 1, "ii": 0}), Instance("C", {"i": 0}))
    assert evidence.element == Element("C", (0,))


def test_reverse_compute_at_refuses_a_consumer_that_reads_nothing_from_the_loop():
    src = PRODUCER_TILED + '''    for i in T.serial(14):
        with T.block("C"):
            C[i] = A[i]
'''
    with pytest.raises(PolypadError, match="reads nothing"):
        Schedule(parse(src)).reverse_compute_at("C", "io")


def test_reverse_compute_at_refuses_a_loop_after_the_block():
    with pytest.raises(PolypadError, match="use compute_at"):
        Schedule(parse(STENCIL)).reverse_compute_at("B", "io")


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
