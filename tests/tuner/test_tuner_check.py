"""The check before any timing: each candidate compiles once, at full size, and that
kernel's results are compared with the expected outputs (the reference executor's,
or the plain kernel's where the function is too large for it, that kernel itself
checked against the reference executor at small sizes); a candidate that differs is
dropped as wrong."""

from __future__ import annotations

import numpy as np
import pytest
from tuner_support import matmul, matmul_text

import codegen
import polypad as pp
from polypad.tuner import measure, search
from polypad.tuner.measure import compile_candidate, inputs, make_check, outputs
from polypad.tuner.nest import analyze
from polypad.tuner.search import PLAIN_KEY
from polypad.tuner.space import Candidate

pytestmark = pytest.mark.numba

TILED = Candidate(tile_inner=8, tile_outer=4, reduction="outer", vectorize=True)

SMALL_MATMUL = matmul_text(8, 8, 8)


def test_a_candidate_compiles_once_and_that_kernel_is_checked(monkeypatch):
    f = matmul()
    nest = analyze(f)
    check = make_check(f, nest, None, seed=3)
    assert check.against == "reference executor" and not check.plain_runs
    built = []
    real_build = codegen.build

    def counting_build(func, *args, **kwargs):
        built.append((func.name, kwargs.get("target", "numba")))
        return real_build(func, *args, **kwargs)

    monkeypatch.setattr(codegen, "build", counting_build)
    compiled = compile_candidate(f, nest, TILED, check)
    assert compiled.status == "ok", compiled.detail
    assert built == [("matmul", "numba")]  # the full-size kernel, and nothing else
    # the kernel checked is the one the timing then takes, from this process's memory
    assert compiled.kernel in measure.compiled_kernel_names()
    expected = outputs(codegen.build(f, target="python"), f, 3)
    np.testing.assert_allclose(outputs(measure.compiled_kernel(compiled.kernel), f, 3)[2],
                               expected[2], rtol=1e-4, atol=1e-4)


def test_a_candidate_whose_results_differ_is_dropped_as_wrong():
    f = matmul()
    nest = analyze(f)
    check = make_check(f, nest, None, seed=3)
    check.expected[2] = check.expected[2].copy()
    check.expected[2][5, 7] += 1.0  # what a kernel with a wrong tail would give
    compiled = compile_candidate(f, nest, TILED, check)
    assert compiled.status == "wrong"
    assert compiled.detail.startswith("parameter 2: element 87 is ")
    assert compiled.func is None and not compiled.kernel


def test_a_large_function_is_checked_against_its_plain_kernel_checked_at_small_sizes(
        monkeypatch):
    monkeypatch.setattr(measure, "REFERENCE_INSTANCES", 1000)  # 16^3 is then large
    f = matmul()
    check = make_check(f, analyze(f), pp.parse(SMALL_MATMUL), seed=3)
    assert check.against == ("plain Numba kernel, itself checked against the reference "
                             "executor at small sizes")
    assert len(check.plain_runs) == 1 and check.plain_runs[0] > 0
    args = inputs(f, 3)
    codegen.build(f, target="python")(*args)
    np.testing.assert_allclose(check.expected[2], args[2], rtol=1e-4, atol=1e-4)


def test_a_long_plain_run_that_computed_the_expected_outputs_is_the_baseline(monkeypatch):
    monkeypatch.setattr(measure, "REFERENCE_INSTANCES", 1000)
    monkeypatch.setattr(search, "LONG_CALL", 0.0)  # every plain run counts as long
    sch = pp.autoschedule(matmul(), budget_s=120, max_candidates=2, workers=0,
                          small=pp.parse(SMALL_MATMUL))
    tried = sch.tuning.tried
    assert [t.key for t in tried].count(PLAIN_KEY) == 1
    assert tried[0].key == PLAIN_KEY and tried[0].status == "ok"
    assert sch.tuning.plain_seconds == tried[0].seconds
    assert len(tried) == 3  # the plain run, then two candidates compiled and timed


def test_a_short_plain_run_is_timed_again_as_a_candidate(monkeypatch):
    # Its one call also paid the first touch of the outputs' pages: as the baseline it
    # made the plain nest look slower than it is (a 1-D convolution's by 1.3x).
    monkeypatch.setattr(measure, "REFERENCE_INSTANCES", 1000)
    sch = pp.autoschedule(matmul(), budget_s=120, max_candidates=2, workers=0,
                          small=pp.parse(SMALL_MATMUL))
    tried = sch.tuning.tried
    assert [t.key for t in tried] == [PLAIN_KEY, tried[1].key]  # two compiled and timed
    assert tried[0].status == "ok"
    assert sch.tuning.plain_seconds == tried[0].seconds
