"""The space holds what docs/schedules.md's hand schedules do, as rules on the
nest's structure (not on a kernel's name), and the cost model ranks them early."""

from __future__ import annotations

import dataclasses

import pytest
from tuner_support import assert_matches_reference, matmul, matmul_text, softmax

import polypad as pp
from polypad.examples import conv_layer
from polypad.tuner.nest import analyze
from polypad.tuner.realize import realize
from polypad.tuner.search import ranked
from polypad.tuner.space import WHOLE, Candidate, enumerate_space

SWAPPED = Candidate(tile_inner=8, tile_outer=4, reduction="outer", parallel=True,
                    vectorize=True, unroll=True, cache_write=True, swap=True)


@pytest.mark.numba
def test_swapped_tiles_put_the_column_panels_outside_and_on_the_cores():
    f = matmul()
    sch = realize(f, analyze(f), SWAPPED).schedule
    assert str(sch.trace).splitlines() == [
        "sch.split(loop='i', factors=[None, 4])",
        "sch.split(loop='j', factors=[None, 8])",
        "sch.reorder('j_0', 'i_0', 'k', 'i_1', 'j_1')",
        "sch.cache_write(block='C', buffer='C', scope='global', name=None, at='i_0')",
        "sch.vectorize(loop='ax1')",  # the tile's copy-out, in lanes
        "sch.decompose_reduction(block='C', loop='k')",
        "sch.vectorize(loop='j_1_init')",
        "sch.fuse('j_0', 'i_0')",  # two column panels: too few for the cores alone
        "sch.parallel(loop='j_0_i_0_fused')",
        "sch.vectorize(loop='j_1')",
        "sch.unroll(loop='i_1')",
    ]
    assert_matches_reference(f, sch.func)


def test_only_two_tiled_loops_are_swapped():
    space = enumerate_space(analyze(matmul()))
    swapped = [c for c in space if c.swap]
    assert swapped and all(c.tile_inner and c.tile_outer for c in swapped)
    assert all(dataclasses.replace(c, swap=False) in space for c in swapped)
    assert SWAPPED in space


def test_the_model_ranks_halides_conv_schedule_first():
    # Halide's apps/conv_layer schedule (polypad.examples.conv_layer.schedule): x by 5
    # and c by 64, n and y fused on the cores, the convolution computed and stored at
    # the channel tile with its reduction outside its x and c (a 5 x 64 register tile).
    nest = analyze(conv_layer.conv_layer(**conv_layer.HALIDE_SIZES))
    first = ranked(nest, seed=0, cores=2)[0]
    assert (first.tile_inner, first.tile_outer, first.parallel, first.vectorize) == (
        64, 5, True, True)
    assert (first.at, first.producer_reduction) == ((2,), "outer")


@pytest.mark.numba
def test_a_chain_of_producers_goes_inside_the_row_loop_with_its_sums_in_lanes():
    # docs/schedules.md's softmax: max (read by exp, not by the root), exp and sum
    # computed inside the row loop, each row sum in 16 partial sums (rfactor)
    f = softmax()
    nest = analyze(f)
    assert [p.block for p in nest.producers] == ["max", "exp", "sum"]
    cand = Candidate(parallel=True, vectorize=True, at=(0, 0, 0), producer_reduction="rfactor")
    assert cand in enumerate_space(nest)
    steps = [line.split("(")[0] for line in str(realize(f, nest, cand).schedule.trace)
             .splitlines()]
    assert steps == ["sch.parallel",
                     "sch.compute_at", "sch.store_at",  # sum
                     "sch.split", "sch.rfactor", "sch.vectorize",
                     "sch.compute_at", "sch.store_at", "sch.vectorize",  # exp
                     "sch.compute_at", "sch.store_at",  # max
                     "sch.split", "sch.rfactor", "sch.vectorize",
                     "sch.vectorize"]  # the root's row
    assert_matches_reference(f, realize(f, nest, cand).schedule.func)


PANEL_MATMUL = matmul_text(8, 32, 256)


@pytest.mark.numba
def test_a_packed_panel_is_the_blis_shape_of_the_matmul_recipe():
    # docs/schedules.md's matmul: column panels, k in blocks of 128 outside the row
    # tiles, B's block packed at the block loop (B does not move along i: isl's zero
    # stride), the 8 x 32 tile in a local cache
    f = pp.parse(PANEL_MATMUL)
    nest = analyze(f)
    cand = Candidate(tile_inner=16, tile_outer=4, reduction="outer", parallel=True,
                     vectorize=True, unroll=True, cache_write=True, swap=True, panel=128)
    assert cand in enumerate_space(nest)
    sch = realize(f, nest, cand).schedule
    lines = str(sch.trace).splitlines()
    assert lines[:7] == [
        "sch.split(loop='i', factors=[None, 4])",
        "sch.split(loop='j', factors=[None, 16])",
        "sch.split(loop='k', factors=[None, 128])",
        "sch.reorder('j_0', 'k_0', 'i_0', 'k_1', 'i_1', 'j_1')",
        "sch.decompose_reduction(block='C', loop='k_0')",
        "sch.cache_write(block='C', buffer='C', scope='local', name=None, at='i_0')",
        "sch.cache_read(block='C', buffer='B', scope='local', name=None, at='k_0')"]
    assert_matches_reference(f, sch.func)


def test_the_model_ranks_the_matmul_recipes_shape_first():
    nest = analyze(pp.parse(matmul_text(1024, 1024, 1024)))
    first = ranked(nest, seed=0, cores=2)[0]
    assert (first.tile_outer, first.tile_inner, first.swap, first.panel) == (8, 32, True, WHOLE)


@pytest.mark.numba
def test_a_panel_of_the_whole_reduction_is_the_matmul_recipe():
    # docs/schedules.md's matmul: panels of 4 tiles, B's panel packed at the panel
    # loop, the tile cached before its init is decomposed (zeros in registers, C only
    # written), the whole of k per tile
    f = pp.parse(PANEL_MATMUL)
    nest = analyze(f)
    cand = Candidate(tile_inner=16, tile_outer=4, reduction="outer", parallel=True,
                     vectorize=True, unroll=True, cache_write=True, swap=True, panel=WHOLE)
    assert cand in enumerate_space(nest)
    sch = realize(f, nest, cand).schedule
    lines = str(sch.trace).splitlines()
    assert lines[:7] == [
        "sch.split(loop='i', factors=[None, 4])",
        "sch.split(loop='j', factors=[None, 16])",
        "sch.split(loop='j_0', factors=[None, 4])",
        "sch.reorder('j_0_0', 'i_0', 'j_0_1', 'k', 'i_1', 'j_1')",
        "sch.cache_write(block='C', buffer='C', scope='local', name=None, at='j_0_1')",
        "sch.decompose_reduction(block='C', loop='k')",
        "sch.cache_read(block='C', buffer='B', scope='local', name=None, at='j_0_0')"]
    text = pp.script(sch.func)
    assert "C_local_in" not in text and "C[vi, vj] = 0" not in text
    assert_matches_reference(f, sch.func)
