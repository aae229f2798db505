"""Brute force over small reductions with every combiner: what the schedule accepts
runs the same as the original, and what it refuses it had to.

Hypothesis draws a reduction of ``A[i, k]`` into one element ``C[0]`` (every
combiner, integer and float dtypes; its init before the loops, as a ``T.init()``, or
none) and a step: ``reorder`` of the two loops, ``vectorize`` or ``parallel`` of one,
``rfactor`` of either (then ``parallel`` of it).  Reordering or vectorizing changes
the order of the updates of ``C[0]``, so it must be accepted exactly when the combiner
is exact (integers, wrapping; ``min``/``max``) and no init is in the way, and then give
the same bits; ``parallel`` would race and is always refused; ``rfactor`` is always
accepted and gives the same bits where the combiner is exact, floats to rounding
(reassociation was accepted).  Results are compared on the reference executor.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codegen
from analyses.combiners import Combiner
from polypad.errors import IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

UPDATES = {
    "+": "C[0] + A[vi, vk]", "*": "A[vi, vk] * C[0]", "max": "T.max(C[0], A[vi, vk])",
    "min": "T.min(A[vi, vk], C[0])", "&": "C[0] & A[vi, vk]", "|": "C[0] | A[vi, vk]",
    "^": "A[vi, vk] ^ C[0]", "select": "T.if_then_else(A[vi, vk] > C[0], A[vi, vk], C[0])",
}

TINIT = '''
@T.prim_func
def f(A: T.Buffer(({i}, {k}), "{t}"), C: T.Buffer((1,), "{t}")):
    for i, k in T.grid({i}, {k}):
        with T.block("r"):
            vi, vk = T.axis.remap("RR", [i, k])
            with T.init():
                C[0] = {start}
            C[0] = {update}
'''

PLAIN = '''
@T.prim_func
def f(A: T.Buffer(({i}, {k}), "{t}"), C: T.Buffer((1,), "{t}")):
    {before}
    for vi, vk in T.grid({i}, {k}):
        C[0] = {update}
'''


def build(op: str, dtype: str, init: str, i: int, k: int):
    start = "T.float32(1)" if dtype == "float32" else "3"
    update = UPDATES[op]
    if init == "tinit":
        text = TINIT.format(i=i, k=k, t=dtype, start=start, update=update)
    else:
        before = f"C[0] = {start}" if init == "before" else "A[0, 0] = A[0, 0]"
        text = PLAIN.format(i=i, k=k, t=dtype, before=before, update=update)
    return parse(text)


def outputs(func, seed: int):
    rng = np.random.default_rng(seed)
    arrays = []
    for p in func.params:
        if p.dtype == "float32":
            arrays.append(rng.standard_normal(p.shape).astype("float32"))
        else:
            info = np.iinfo(p.dtype)
            arrays.append(rng.integers(info.min, info.max, p.shape, endpoint=True,
                                       dtype=p.dtype))
    with np.errstate(over="ignore"):
        codegen.build(func, target="python")(*arrays)
    return arrays


def expected_to_accept(step: str, exact: bool, init: str, extents) -> bool:
    """Whether ``step`` keeps the result: it changes the order of C[0]'s updates (unless
    a loop it moves has one iteration), which only an exact combiner allows, and a
    T.init inside the loop stays before the updates only if that loop keeps its order."""
    i, k = extents
    if step.startswith("rfactor"):
        return True
    if step == "reorder":
        return i == 1 or k == 1 or exact
    trivial = (i if step.endswith("_i") else k) == 1
    if step == "parallel_i":
        return trivial  # updates of one element in parallel race
    return trivial or exact and init != "tinit"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(sorted(UPDATES)), dtype=st.sampled_from(["int8", "int32", "float32"]),
       init=st.sampled_from(["none", "before", "tinit"]),
       extents=st.tuples(st.integers(1, 3), st.integers(1, 4)),
       step=st.sampled_from(["reorder", "vectorize_i", "vectorize_k", "parallel_i",
                             "rfactor_i", "rfactor_k"]),
       seed=st.integers(0, 3))
def test_every_step_is_accepted_exactly_when_it_computes_the_same(op, dtype, init, extents,
                                                                  step, seed):
    if dtype == "float32" and op in "&|^":
        dtype = "int32"
    f = build(op, dtype, init, *extents)
    sch = Schedule(f)
    i, k = sch.get_loops()
    exact = Combiner("max" if op == "select" else op).exact(dtype)
    try:
        if step == "reorder":
            sch.reorder(k, i)
        elif step.startswith("rfactor"):
            loop = i if step.endswith("i") else k
            sch.rfactor(loop)
            sch.parallel(loop)  # the partial results: it carries nothing now
        else:
            kind, which = step.split("_")
            getattr(sch, kind)(i if which == "i" else k)
        accepted = True
    except IllegalTransformError:
        accepted = False
    assert accepted == expected_to_accept(step, exact, init, extents)
    if not accepted:
        return
    want, got = outputs(f, seed), outputs(sch.func, seed)
    for w, g in zip(want, got, strict=True):
        if exact or not step.startswith("rfactor"):
            np.testing.assert_array_equal(g, w)
        else:  # rfactor of a float sum or product: reassociated, as the user accepted
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
