"""``compute_at`` refuses to recompute a producer that accumulates onto what a buffer held.

``S0`` adds ``B[vk]`` onto ``C[vi, vj]`` with no ``T.init()``: its first
update reads the value ``C`` held before the function ran.  Both iterations
of ``i2i`` read column ``i2o`` of ``C``, so ``compute_at("S0", "i2i")``
computes that column twice, and the second time its first update reads what
the first computation left: ``B`` added twice.  The fuzz's seed 7001
(``--shapes blocks``, case 153) found the primitive applying it and ``C``
and ``D`` wrong; the recomputation check asked only whether the producer's
reads of its own outputs stay in the iteration's region.  With an
initialisation the same move is legal (the second computation starts again
from the init) and is still made.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

ACCUMULATES = '''
@T.prim_func
def func(B: T.Buffer((8,), "float32"), C: T.Buffer((4, 4), "float32"),
         D: T.Buffer((8,), "float32")):
    for i0, k0, j0 in T.grid(4, 8, 4):
        with T.block("S0"):
            vi = T.axis.spatial(4, 3 - i0)
            vj = T.axis.spatial(4, j0)
            vk = T.axis.reduce(8, k0)
            C[vi, vj] = C[vi, vj] + B[vk]
    for i2o, i2i, k2 in T.grid(4, 2, 4):
        with T.block("S2"):
            vi = T.axis.spatial(8, i2o * 2 + i2i)
            vk = T.axis.reduce(4, k2)
            D[vi] = D[vi] + C[vk, vi // 2]
'''


def test_a_producer_that_reads_the_first_value_of_its_output_is_not_recomputed():
    original = parse(ACCUMULATES)
    sch = Schedule(original)
    with pytest.raises(IllegalTransformError) as refused:
        sch.compute_at("S0", "i2i")
    assert refused.value.evidence.instances == (Instance("S0", {"i0": 0, "k0": 0, "j0": 0}),)
    assert refused.value.evidence.element == Element("C", (3, 0))
    assert sch.func is original


def test_with_an_initialisation_the_recomputation_is_made_and_runs_the_same():
    text = ACCUMULATES.replace("            C[vi, vj] = C[vi, vj] + B[vk]",
                               "            with T.init():\n"
                               "                C[vi, vj] = 0.0\n"
                               "            C[vi, vj] = C[vi, vj] + B[vk]")
    original = parse(text)
    sch = Schedule(original)
    sch.compute_at("S0", "i2i")
    rng = np.random.default_rng(0)
    args = [rng.integers(-3, 4, s).astype("float32") for s in [(8,), (4, 4), (8,)]]
    want = [a.copy() for a in args]
    codegen.build(original, target="python")(*want)
    for target in ("python", "numba"):
        got = [a.copy() for a in args]
        codegen.build(sch.func, target=target)(*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=target)


SEPARATE_INIT = '''
@T.prim_func
def func(A: T.Buffer((4, 4), "int32"), B: T.Buffer((8,), "int32"),
         C: T.Buffer((4, 4), "int32")):
    Y = T.alloc_buffer((8,), "int32")
    for i0 in T.serial(8):
        with T.block("S0_init"):
            vi = T.axis.spatial(8, i0)
            Y[vi] = 0
    for i1, k1 in T.grid(8, 8):
        with T.block("S1"):
            vi = T.axis.spatial(8, i1)
            vk = T.axis.reduce(8, k1)
            Y[vi] = Y[vi] + A[vi % 4, vk % 4] * B[vk]
    for i2, j2, k2 in T.grid(4, 4, 8):
        with T.block("S2"):
            vi = T.axis.spatial(4, i2)
            vj = T.axis.spatial(4, j2)
            vk = T.axis.reduce(8, k2)
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + Y[vk] * A[vi, vk % 4]
'''


def test_a_reduction_whose_init_is_a_stage_of_its_own_is_not_recomputed():
    # Every iteration of i2 reads all of Y: S1 would run at each, but S0_init once, so
    # from i2 = 1 on S1 would add onto its own sums (seed 7002, case 51: C four times
    # too large in its first row).
    original = parse(SEPARATE_INIT)
    sch = Schedule(original)
    with pytest.raises(IllegalTransformError) as refused:
        sch.compute_at("S1", "i2")
    assert refused.value.evidence.instances == (Instance("S1", {"i1": 0, "k1": 0}),)
    assert refused.value.evidence.element == Element("Y", (0,))
    assert sch.func is original
