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

from bench_tvm_wide import _tvm_run, inputs  # noqa: E402
from tvm_corpus_wide import GPU, NOT_ON_CUDA, wide_corpus  # noqa: E402

import codegen  # noqa: E402
import polypad as pp  # noqa: E402


def _function(name: str):
    text = next(t for n, _, t in wide_corpus() if n == name)
    (func,) = pp.parse(text, filename=name).funcs
    return func


@pytest.mark.parametrize("name", [name for name in GPU if name not in NOT_ON_CUDA])
def test_thread_bound_tvm_function_runs_on_the_cuda_target(name):
    func = _function(name)
    args = inputs(func, name)
    gpu, ref = K.run_both(func, args)
    want = _tvm_run(name, args)
    for got, mine, theirs in zip(gpu, ref, want, strict=True):
        np.testing.assert_array_equal(got, mine)
        np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(NOT_ON_CUDA))
def test_what_the_cuda_target_refuses_it_names(name):
    from polypad.errors import BuildError

    with pytest.raises(BuildError, match=NOT_ON_CUDA[name]):
        codegen.build(_function(name), target="cuda")


def test_a_flattened_view_is_the_parameter_reshaped_in_the_kernel():
    """TVM's GPU lowering flattens every buffer (``a_1 = a.view(48)``): the kernel
    reads and writes the parameter's own memory through a reshape, no copy."""
    kernel = codegen.build(_function("broadcast_bind_threads_lowered"), target="cuda")
    assert "    a_flat = a.reshape((48,))\n" in kernel.source
    assert "    T_divide_flat = T_divide.reshape((48,))\n" in kernel.source
