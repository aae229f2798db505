"""``compute_at`` and ``reverse_compute_at``: the rewrites, their refusals with
evidence, their trace, and execution equal to the original.  Caches placed at a
loop are in test_cache_at_loop.py."""

from __future__ import annotations

import pytest
from location_support import (
    CONSUMER,
    PRODUCER,
    REDUCTION,
    STENCIL,
    STENCIL_HEAD,
    same_results,
    scheduled,
)

from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

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
