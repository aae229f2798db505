"""The TVM 0.27 corpus, run: polypad's executors against TVM's own build.

Every corpus function polypad can run (all but the packed ones) is built
with the reference executor and run on random inputs; TVM compiles the TE
function it computes the same values as (``tvm_corpus.origin``) and runs it
on the same inputs; the outputs must agree.  The lowered functions read and
write through views and vectors, so this checks both executors' meaning of
them against TVM's.  The Numba kernel runs on a handful that cover views,
vectors, symbolic sizes and storage reuse (a compile costs a second).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import codegen
from polypad.errors import BuildError
from polypad.ir.nodes import Buffer, IRModule
from polypad.ir.opaque import first_opaque
from polypad.script import parse

tvm = pytest.importorskip("tvm")

from tvm_corpus import corpus, origin, te_functions  # noqa: E402

#: Values of the symbolic sizes.
SIZES = {"n": 5, "m": 7}
#: Kernels also run with Numba: views (flattening, storage reuse), vectors (unit and
#: strided stores, vector lets), symbolic sizes, a parallel loop.
NUMBA = ("matmul_vectorize_lowered", "softmax_lowered", "transpose_vectorize_lowered",
         "scale_symbolic_vectorize_lowered", "layer_norm_vectorize_lowered", "cumsum_lowered")


def _function(name: str):
    text = next(t for n, _, t in corpus() if n == name)
    made = parse(text, name)
    return made.funcs[0] if isinstance(made, IRModule) else made


@functools.cache
def _oracle(name: str):
    return tvm.compile(tvm.IRModule({"main": te_functions()[name]}), target="llvm")


def _inputs(f, name: str) -> list:
    rng = np.random.default_rng(0)
    args = []
    for p in f.params:
        if not isinstance(p, Buffer):
            args.append(SIZES[p.name])
            continue
        shape = tuple(d if isinstance(d, int) else SIZES[d.name] for d in p.shape)
        if p.dtype.startswith("float"):
            array = rng.uniform(-1.0, 1.0, shape).astype(p.dtype)
        elif name.startswith("take"):  # indices, some outside the axis (mode="clip")
            array = rng.integers(-2, 20, shape).astype(p.dtype)
        else:
            array = rng.integers(-5, 5, shape).astype(p.dtype)
        if name.startswith("matmul_transform_layout_pad") and p.name == "A":
            array[1, :, 3:] = 0.0  # the padding the function assumes is zero
        args.append(array)
    return args


def _tvm_outputs(name: str, args: list) -> list:
    buffers = [tvm.runtime.tensor(a.copy(), tvm.cpu()) for a in args
               if isinstance(a, np.ndarray)]
    _oracle(origin(name))["main"](*buffers)
    return [b.numpy() for b in buffers]


RUNNABLE = [n for n, family, _ in corpus() if family != "packed"]


@pytest.mark.parametrize("name", RUNNABLE)
def test_reference_executor_agrees_with_tvm(name):
    f = _function(name)
    args = _inputs(f, name)
    codegen.build(f, target="python")(*args)
    if name.startswith("matmul_transform_layout_pad"):
        # TVM computes the transformed layout's C from the logical A; fill A's
        # logical view from the transformed one and compare C.
        a = args[0]
        logical = np.stack([a[i // 5, :, i % 5] for i in range(8)])
        np.testing.assert_allclose(args[2], logical @ args[1], rtol=1e-5, atol=1e-5)
        return
    want = _tvm_outputs(name, args)
    got = [a for a in args if isinstance(a, np.ndarray)]
    for mine, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(mine.astype("float64"), theirs.astype("float64"),
                                   rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.numba
@pytest.mark.parametrize("name", NUMBA)
def test_numba_kernel_agrees_with_tvm(name):
    f = _function(name)
    args = _inputs(f, name)
    codegen.build(f)(*args)
    want = _tvm_outputs(name, args)
    got = [a for a in args if isinstance(a, np.ndarray)]
    for mine, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", [n for n, family, _ in corpus() if family == "packed"])
def test_packed_functions_are_refused_by_name_and_line(name):
    f = _function(name)
    # A plain assert runs (tests/codegen/test_run_asserts.py): the first construct no
    # target runs is named.
    site = first_opaque(f, checks_as_facts=True)
    assert site is not None and site.span is not None
    with pytest.raises(BuildError) as info:
        codegen.build(f, target="python")
    assert str(info.value) == f"cannot build 'main': {site}"
    assert f"at line {site.span.line}" in str(info.value)
