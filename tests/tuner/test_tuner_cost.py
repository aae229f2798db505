"""The cost model's rules read the nest's structure: strides of a stencil's window,
where a producer's demand moves, short reductions, accumulators outside a tile of
their own.  Each is checked on what it decides (a stride, a count, a ranking), and
the candidate it ranks first is checked against the reference executor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tuner_support import (
    STENCIL,
    assert_matches_reference,
    blur,
    matmul_text,
    softmax,
    softmax_text,
)

import polypad as pp
from polypad.tuner.cost import _recomputed, estimate
from polypad.tuner.nest import analyze, demand
from polypad.tuner.realize import realize
from polypad.tuner.search import ranked
from polypad.tuner.space import Candidate, enumerate_space

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from zoo_kernels import pool  # noqa: E402  (the zoo's max-pool, TVM's block form)


def test_a_window_read_at_offsets_moves_by_one_element_per_step():
    # A[i], A[i + 1], A[i + 2] are one access map of three elements per point; each
    # moves by one along i (the window as a whole is not a gather)
    (i,) = analyze(pp.parse(STENCIL)).root.loops
    assert i.strides == ("unit", "unit")
    # blur's By reads Bx[y, x], Bx[y + 1, x], Bx[y + 2, x]: a row apart along y
    y, x = analyze(blur()).root.loops
    assert (y.strides, x.strides) == (("other", "other"), ("unit", "unit"))


def test_the_demand_on_a_producer_moves_only_along_the_loops_it_is_indexed_by():
    nest = analyze(softmax())
    moves = {p.block: demand(nest, p) for p in nest.producers}
    # the row max and row sum stay put along j; exp's output moves with both loops;
    # the max (read by exp only) moves where exp's demand and exp's read of it do
    assert moves == {"max": (True, False), "exp": (True, True), "sum": (True, False)}
    (bx,) = analyze(blur()).producers
    assert demand(analyze(blur()), bx) == (True, True)


def test_a_row_sum_inside_the_column_tiles_is_counted_once_per_tile():
    nest = analyze(pp.parse(softmax_text(4096, 1024)))
    at_rows = Candidate(tile_inner=16, tile_outer=2, parallel=True, vectorize=True,
                        at=(0, 0, 0), producer_reduction="rfactor")
    at_columns = Candidate(tile_inner=16, tile_outer=2, parallel=True, vectorize=True,
                           at=(1, 1, 1), producer_reduction="rfactor")
    max_, exp, sum_ = nest.producers
    # 1024 / 16 column tiles: the max and the sum computed again in each, exp not
    assert [_recomputed(nest, p, at_columns, 1) for p in (max_, exp, sum_)] == [64, 1, 64]
    assert [_recomputed(nest, p, at_rows, 0) for p in (max_, exp, sum_)] == [1, 1, 1]
    assert estimate(nest, at_columns, 2) > 20 * estimate(nest, at_rows, 2)
    order = ranked(nest, seed=0, cores=2)
    assert all(c.at != (1, 1, 1) for c in order[:40])


@pytest.mark.numba
def test_the_model_ranks_the_pooling_recipes_shape_first():
    # docs/schedules.md's pooling: no tiles, the rows on the cores, the channels in
    # lanes around the 2 x 2 window.  A register tile gains nothing over a reduction of
    # four steps that reuses no operand, and its copy-out costs half as much as them.
    nest = analyze(pool(224, 224, 64))
    first = ranked(nest, seed=0, cores=2)[1]  # after the plain nest, the baseline
    assert (first.tile_inner, first.tile_outer, first.parallel, first.vectorize,
            first.cache_write) == (0, 0, True, True, False)
    small = pool(4, 6, 16)
    assert first in enumerate_space(analyze(small))
    assert_matches_reference(small, realize(small, analyze(small), first).schedule.func)


def test_a_register_tile_in_the_output_pays_for_its_accumulators():
    # Without cache_write the tile's accumulators are the output itself, loaded and
    # stored at each step of the reduction: the same tile cached is ranked faster.
    nest = analyze(pp.parse(matmul_text(256, 256, 256)))
    tile = Candidate(tile_inner=32, tile_outer=8, reduction="outer", parallel=True,
                     vectorize=True, unroll=True, swap=True)
    cached = Candidate(**{**tile.to_json(), "cache_write": True, "at": ()})
    assert estimate(nest, cached, 2) < estimate(nest, tile, 2)


MATVEC = '''
@T.prim_func
def matvec(A: T.Buffer((5, 72), "float32"), x: T.Buffer((72,), "float32"),
           y: T.Buffer((5,), "float32")):
    for i, j in T.grid(5, 72):
        with T.block("y"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vj] * x[vj]
'''


@pytest.mark.numba
def test_a_row_reduction_is_factored_into_two_vectors_of_partial_sums():
    # docs/schedules.md's matvec: 32 partial sums per row (two chains of adds), the
    # rows on the cores; 72 is no multiple of 32: the tail runs apart
    f = pp.parse(MATVEC)
    nest = analyze(f)
    big = analyze(pp.parse(MATVEC.replace("72", "4096").replace("(5", "(4096")
                           .replace("T.grid(5", "T.grid(4096")))
    best = ranked(big, seed=0, cores=2)[1]
    assert (best.rfactor, best.parallel, best.vectorize) == (32, True, True)
    assert best in enumerate_space(nest)
    sch = realize(f, nest, best).schedule
    assert str(sch.trace).splitlines()[:3] == [
        "sch.decompose_reduction(block='y', loop='j')",
        "sch.split(loop='j', factors=[None, 32], tail='partition')",
        "sch.rfactor(loop='j_1', factor_axis=0)"]
    assert_matches_reference(f, sch.func)
