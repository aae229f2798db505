"""A packed panel is laid out with the vector loop's dimension last: for
``C = A @ B.T`` (``A[i, k] * B[j, k]``, a linear layer's product) the panel of
``B`` is stored ``[k, j]`` and packed by a copy that writes it contiguously, so
the tile's vector loads are contiguous as in ``A @ B``.  Before, the tile read
``B``'s panel across its rows, a gather per vector: 0.16x numpy at 512^3.  The copy
moves 8 x 8 blocks, so that it reads ``B`` a cache line at a time rather than
down its columns (the copy's cost at 1024^3: 0.8 ms -> about 0.2)."""

from __future__ import annotations

import pytest
from tuner_support import assert_log_replays, assert_matches_reference, matmul_text

import polypad as pp
from polypad.tuner.nest import analyze
from polypad.tuner.realize import realize
from polypad.tuner.search import ranked
from polypad.tuner.space import WHOLE, Candidate, enumerate_space


def nt_text(m: int, n: int, k: int) -> str:
    """C (m x n) = A (m x k) @ B.T, with B (n x k)."""
    return matmul_text(m, n, k, name="mmnt", b_transposed=True)


PANEL = Candidate(tile_inner=16, tile_outer=4, reduction="outer", vectorize=True,
                  cache_write=True, swap=True, panel=WHOLE)

EXPECTED = '''
@T.prim_func
def mmnt(A: T.Buffer((8, 256), "float32"), B: T.Buffer((64, 256), "float32"),
         C: T.Buffer((8, 64), "float32")):
    for j_0_0 in T.serial(1):
        B_local = T.alloc_buffer((256, 64), "float32", scope="local")
        with T.block("B_local"):
            for ax1_0 in T.serial(32):
                for ax0_0 in T.serial(8):
                    for ax1_1 in T.unroll(8):
                        for ax0_1 in T.vectorized(8):
                            B_local[ax1_0 * 8 + ax1_1, ax0_0 * 8 + ax0_1] = B[
                                ax0_0 * 8 + ax0_1, ax1_0 * 8 + ax1_1]
        for i_0 in T.serial(2):
            for j_0_1 in T.serial(4):
                C_local = T.alloc_buffer((4, 16), "float32", scope="local")
                for i_1_init in T.serial(4):
                    for j_1_init in T.vectorized(16):
                        C_local[i_1_init, j_1_init] = 0.0
                for k in T.serial(256):
                    for i_1 in T.serial(4):
                        for j_1 in T.vectorized(16):
                            with T.block("C"):
                                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                                vj = T.axis.spatial(64, (j_0_0 * 4 + j_0_1) * 16 + j_1)
                                vk = T.axis.remap("R", [k])
                                C_local[vi - 4 * i_0, vj - 16 * j_0_1] = (
                                    C_local[vi - 4 * i_0, vj - 16 * j_0_1]
                                    + A[vi, vk] * B_local[vk, vj])
                with T.block("C_local"):
                    for ax0 in T.serial(4):
                        for ax1 in T.vectorized(16):
                            C[4 * i_0 + ax0, 16 * j_0_1 + ax1] = C_local[ax0, ax1]
'''


def test_isl_says_which_dimension_a_step_moves():
    nt = {loop.var: loop for loop in analyze(pp.parse(nt_text(8, 64, 256))).root.loops}
    nn = {loop.var: loop for loop in analyze(pp.parse(matmul_text(8, 64, 256))).root.loops}
    # accesses: C (the write), C, A, B
    assert nt["j"].strides == ("unit", "unit", "zero", "other")
    assert nt["j"].moves == (1, 1, None, 0)  # B[j, k] moves in its first dimension
    assert nt["k"].moves == (None, None, 1, 1)
    assert nn["j"].strides[3] == "unit" and nn["j"].moves[3] == 1


@pytest.mark.numba
def test_the_panel_of_b_transposed_is_packed_with_its_vector_dimension_last():
    f = pp.parse(nt_text(8, 64, 256))
    nest = analyze(f)
    assert PANEL in enumerate_space(nest)
    sch = realize(f, nest, PANEL).schedule
    lines = str(sch.trace).splitlines()
    assert lines[7:12] == [
        "sch.transform_layout(block=None, buffer='B_local', "
        "index_map='lambda a0, a1: [a1, a0]', pad_value=None)",
        "sch.split(loop='B_local/ax1', factors=[None, 8])",
        "sch.split(loop='B_local/ax0', factors=[None, 8])",
        "sch.reorder('ax1_0', 'ax0_0', 'ax1_1', 'ax0_1')",
        "sch.unroll(loop='ax1_1')"]
    pp.assert_structural_equal(sch.func, pp.parse(EXPECTED))
    assert_matches_reference(f, sch.func)
    # the trace, as the tuning log keeps it, replays
    assert_log_replays(f, sch)


@pytest.mark.numba
def test_the_block_panel_is_transposed_too():
    f = pp.parse(nt_text(8, 64, 256))
    nest = analyze(f)
    sch = realize(f, nest, Candidate(tile_inner=16, tile_outer=4, reduction="outer",
                                     vectorize=True, cache_write=True, swap=True,
                                     panel=128)).schedule
    assert "transform_layout(block=None, buffer='B_local'" in str(sch.trace)
    assert ("B_local[ax1_0 * 8 + ax1_1, ax0_0 * 8 + ax0_1] = "
            "B[16 * j_0 + (ax0_0 * 8 + ax0_1), 128 * k_0 + (ax1_0 * 8 + ax1_1)]"
            in pp.script(sch.func))
    assert_matches_reference(f, sch.func)


@pytest.mark.numba
def test_a_panel_whose_sides_are_not_multiples_of_the_block_is_copied_row_by_row():
    f = pp.parse(nt_text(8, 60, 250))
    sch = realize(f, analyze(f), PANEL).schedule
    assert "sch.reorder('B_local/ax1', 'B_local/ax0')" in str(sch.trace)
    assert "B_local[ax1, ax0] = B[ax0, ax1]" in pp.script(sch.func)
    assert_matches_reference(f, sch.func)
    assert_matches_reference(f, sch.func)


def test_a_panel_already_laid_out_along_the_vector_loop_is_not_transposed():
    f = pp.parse(matmul_text(8, 64, 256))
    sch = realize(f, analyze(f), PANEL).schedule
    assert "transform_layout" not in str(sch.trace)


def test_the_model_ranks_the_transposed_panel_first_as_for_a_times_b():
    nest = analyze(pp.parse(nt_text(1024, 1024, 1024)))
    first = ranked(nest, seed=0, cores=2)[0]
    assert (first.tile_outer, first.tile_inner, first.swap, first.panel) == (8, 32, True, WHOLE)
