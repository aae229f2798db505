"""A checked access (codegen.cuda.guards) keeps its buffer's layout on the cuda
target: a vectorized run with an undecided access stays scalar, since a wide
load or store (codegen.cuda.wide) has no check, and a local buffer with an
undecided access keeps its shape and stays an array, since a thread's box and
one variable per element are sized from what the accesses touch -- the
element outside included, which would then find a slot instead of failing.
Each case failed silently before (the review of the bounds checks)."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import BoundsCheckError
from polypad.examples import elementwise
from polypad.script import parse

WIDE = parse('''
@T.prim_func
def shifted(A: T.Buffer((4,), "int32"), B: T.Buffer((16,), "float32"),
            C: T.Buffer((16,), "float32")):
    for t in T.thread_binding(4, thread="threadIdx.x"):
        if A[t] > 0:
            for v in T.vectorized(4):
                C[4 * t + v] = B[4 * t + v - 4]
''')

BOXED = parse('''
@T.prim_func
def boxed(A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "float32")):
    for t in T.thread_binding(4, thread="threadIdx.x"):
        L = T.alloc_buffer((16,), "float32", scope="local")
        for k in range(4):
            L[t * 4 + k] = T.float32(1)
        if A[t] > 0:
            C[t] = L[t * 4 + 5]
''')

SCALARS = parse('''
@T.prim_func
def scalars(A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "float32")):
    for t in T.thread_binding(4, thread="threadIdx.x"):
        L = T.alloc_buffer((4,), "float32", scope="local")
        for k in T.unroll(4):
            L[k] = T.float32(1)
        if A[t] > 0:
            C[t] = L[5]
''')


def _both_raise(func, *args) -> list[str]:
    messages = []
    for target in ("cuda", "python"):
        arrays = [a.copy() for a in args]
        with pytest.raises(BoundsCheckError) as info:
            codegen.build(func, target=target)(*arrays)
        messages.append(str(info.value))
    return messages


def test_an_undecided_load_of_a_vectorized_run_stays_scalar_and_is_checked():
    source = codegen.build(WIDE, target="cuda").source
    assert "_pp_wide.load4(B" not in source and "_pp_at_1(" in source
    assert "_pp_wide.store4(C" in source  # the store is proved: it still goes wide
    b = np.arange(16, dtype="float32")
    cuda, python = _both_raise(WIDE, np.array([1, 0, 1, 1], "int32"), b,
                               np.zeros(16, "float32"))
    assert cuda.startswith("load of B[-4] is outside its shape (16,) in 'shifted'")
    assert python.startswith("load of B[-4] is outside its shape (16,) in 'shifted'")
    got, want = np.zeros(16, "float32"), np.zeros(16, "float32")
    a = np.array([0, 1, 0, 1], "int32")
    codegen.build(WIDE, target="cuda")(a, b, got)
    codegen.build(WIDE, target="python")(a, b, want)
    np.testing.assert_array_equal(got, want)


def test_boundscheck_true_writes_no_wide_access():
    sch = elementwise.schedule_cuda(elementwise.scale(2, 32), threads=2, per_thread=8,
                                    vector=4)
    assert "_pp_wide" in codegen.build(sch.func, target="cuda").source
    every = codegen.build(sch.func, target="cuda", boundscheck=True)
    assert "_pp_wide" not in every.source and "_pp_inside_2(" in every.source
    a = np.random.default_rng(0).random((2, 32), dtype="float32")
    got = np.zeros((2, 32), "float32")
    every(a, got)
    np.testing.assert_array_equal(got, a * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("func, element", [(BOXED, "L[17]"), (SCALARS, "L[5]")])
def test_a_local_buffer_with_an_undecided_access_keeps_its_shape(func, element):
    source = codegen.build(func, target="cuda").source
    shape = "(16,)" if func is BOXED else "(4,)"
    assert f"L = cuda.local.array({shape}" in source
    cuda, python = _both_raise(func, np.array([0, 0, 0, 1], "int32"), np.zeros(4, "float32"))
    assert cuda == python
    assert cuda.startswith(f"load of {element} is outside its shape {shape}")
