"""The thread-bound functions of the wide TVM 0.27 corpus, built for the cuda target.

``tests/tvm_corpus_wide.py`` binds loops to ``blockIdx``/``threadIdx`` after a
split, over a reduction's rows, over a reduce loop (TVM's cross-thread
reduction) and lowers one for a GPU (flattened views, ``T.launch_thread``).
Each is read from TVM's text, built with ``codegen.build(f, target="cuda")``
and run on Numba's simulator: it must agree with the reference executor and
with TVM's own llvm build of the TE function it schedules.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cuda_kernels as K
import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("tvm", reason='TVM is not installed: pip install "polypad[tvm]"')

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from allreduce_programs import TWO_IN_ONE_LOOP  # noqa: E402
from bench_tvm_wide import _tvm_run, inputs  # noqa: E402
from tvm_corpus_wide import GPU, wide_corpus  # noqa: E402

import codegen  # noqa: E402
import polypad as pp  # noqa: E402


def _function(name: str):
    text = next(t for n, _, t in wide_corpus() if n == name)
    (func,) = pp.parse(text, filename=name).funcs
    return func


#: Functions the GPU computes in another rounding, with the relative tolerance: softmax's
#: T.exp (numba.cuda's math.exp of a float32 differs from numpy's float32 exp by up to
#: 2 ulps), and the float sums of the block forms, which the tree reassociates (the
#: reference executor adds in the serial order; TVM's lowered forms already in the tree's).
INEXACT = {"softmax_cross_thread": 1e-6, "softmax_cross_thread_lowered": 1e-6,
           "sum_split_cross_thread": 1e-6, "sum_thread_rows": 1e-6}


@pytest.mark.parametrize("name", GPU)
def test_thread_bound_tvm_function_runs_on_the_cuda_target(name):
    func = _function(name)
    args = inputs(func, name)
    gpu, ref = K.run_both(func, args)
    want = _tvm_run(name, args)
    for got, mine, theirs in zip(gpu, ref, want, strict=True):
        if name in INEXACT:
            np.testing.assert_allclose(got, mine, rtol=INEXACT[name])
        else:
            np.testing.assert_array_equal(got, mine)
        np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5)


def test_a_flattened_view_is_the_parameter_reshaped_in_the_kernel():
    """TVM's GPU lowering flattens every buffer (``a_1 = a.view(48)``): the kernel
    reads and writes the parameter's own memory through a reshape, no copy."""
    kernel = codegen.build(_function("broadcast_bind_threads_lowered"), target="cuda")
    assert "    a_flat = a.reshape((48,))\n" in kernel.source
    assert "    T_divide_flat = T_divide.reshape((48,))\n" in kernel.source


def test_two_reductions_in_one_thread_loop_get_the_barriers_between_them():
    """The max's result is read by every thread right after its tree's last step (thread
    0 writes it): a barrier there, and one between each two steps of either tree."""
    func = pp.parse(TWO_IN_ONE_LOOP)
    a = np.random.default_rng(2).uniform(-1, 1, (2, 8)).astype("float32")
    args = [a, np.zeros(2, "float32"), np.zeros(2, "float32")]
    gpu, ref = K.run_both(func, args)
    for got, mine in zip(gpu, ref, strict=True):
        np.testing.assert_allclose(got, mine, rtol=1e-6)
    source = codegen.build(func, target="cuda").source
    assert source.count("cuda.syncthreads()") == 8
