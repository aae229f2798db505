"""polypad's rewrites, handed to TVM with to_tvm, compiled by TVM for llvm and run.

Each function comes from TVM (TE/TOPI through from_tvm) or from RFC 0077's
examples, is rewritten by polypad (a schedule through ``pp.Schedule``, or
the removal of a conditional the padding makes redundant), exported with
``to_tvm``, built with ``tvm.compile(..., target="llvm")`` and run on random
inputs next to TVM's build of the original: the outputs must agree.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

import codegen
import polypad as pp
from polypad import tvm as pptvm
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

RFC = Path(__file__).resolve().parents[1] / "examples" / "rfc0077"


@functools.cache
def run_with_tvm():
    import tvm

    def run(func, arrays):
        """``func`` (TVM's) built for llvm and run on copies of ``arrays``; the results."""
        kernel = tvm.compile(func, target="llvm")
        dev = tvm.cpu()
        tensors = [tvm.runtime.tensor(a.copy(), dev) for a in arrays]
        kernel(*tensors)
        return [t.numpy() for t in tensors]

    return run


def random_inputs(func: n.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(p.shape).astype(p.dtype) for p in func.params]


def loop_kinds(func: n.PrimFunc) -> list[str]:
    return [s.kind.value for s in walk(func.body) if isinstance(s, n.For)]


def test_a_polypad_matmul_schedule_runs_in_tvm():
    from tvm import te

    A = te.placeholder((8, 12), name="A")
    B = te.placeholder((12, 16), name="B")
    k = te.reduce_axis((0, 12), name="k")
    C = te.compute((8, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    original = te.create_prim_func([A, B, C])
    sch = pp.Schedule(pptvm.from_tvm(original))
    i, j, k = sch.get_loops("C")
    jo, ji = sch.split(j, [None, 4])
    sch.reorder(i, jo, k, ji)
    sch.parallel(i)
    sch.vectorize(ji)
    assert loop_kinds(sch.func) == ["parallel", "serial", "serial", "vectorized"]
    arrays = random_inputs(sch.func)
    run = run_with_tvm()
    want = run(original, arrays)
    got = run(pptvm.to_tvm(sch.func), arrays)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[2], arrays[0] @ arrays[1], rtol=1e-5, atol=1e-5)


def test_a_polypad_conv2d_schedule_runs_in_tvm():
    from tvm import te, topi

    data = te.placeholder((1, 3, 8, 8), name="data")
    kernel = te.placeholder((4, 3, 3, 3), name="kernel")
    original = te.create_prim_func([data, kernel, topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)])
    sch = pp.Schedule(pptvm.from_tvm(original))
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops("conv2d_nchw")
    yo, yi = sch.split(yy, [None, 4])
    sch.reorder(ff, yo, rc, ry, rx, yi, xx)
    sch.parallel(ff)
    sch.unroll(rx)
    assert "parallel" in loop_kinds(sch.func) and "unroll" in loop_kinds(sch.func)
    arrays = random_inputs(sch.func, seed=1)
    run = run_with_tvm()
    want = run(original, arrays)
    got = run(pptvm.to_tvm(sch.func), arrays)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-5)
    # polypad's reference executor agrees with both.
    ref = [a.copy() for a in arrays]
    codegen.build(sch.func, target="python")(*ref)
    np.testing.assert_allclose(ref[2], want[2], rtol=1e-5, atol=1e-5)


def test_an_rfc_0077_conditional_removal_runs_in_tvm():
    original = pp.parse((RFC / "row_summation_before.py").read_text())
    sch = pp.Schedule(original)
    sch.transform_layout(None, "A", lambda i, j: [i, j // 4, j % 4], pad_value=0.0)
    sch.sequential_buffer_access(None, "A")
    guarded = sch.func
    assert any(isinstance(s, n.IfThenElse) for s in walk(guarded.body))
    sch.remove_branching_through_overcompute(None)
    assert not any(isinstance(s, n.IfThenElse) for s in walk(sch.func.body))

    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 14)).astype("float32")
    b = np.zeros(16, "float32")
    packed = np.pad(a, ((0, 0), (0, 2))).reshape(16, 4, 4)  # the padding holds 0.0
    run = run_with_tvm()
    (_, want) = run(pptvm.to_tvm(original), [a, b])
    for func in (guarded, sch.func):
        (_, got) = run(pptvm.to_tvm(func), [packed, b])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want, a.sum(axis=1), rtol=1e-5, atol=1e-5)
