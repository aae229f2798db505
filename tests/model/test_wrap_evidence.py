"""A refused index that may wrap carries its evidence: the operation, its exact value
and the first instance (loop counters outer first, then the parameters) where it
leaves its dtype (:class:`polypad.model.overflow.Wrap`).

Each case is checked by brute force over every ``int8`` value of ``n``: the reported
point is the first of the points where the operation, evaluated exactly, leaves
``int8``; and the reference executor, run at that ``n``, really meets the wrapped
index there.
"""

from __future__ import annotations

import numpy as np
import pytest

import analyses
import codegen
from polypad.errors import BoundsCheckError, NotAffineError
from polypad.model.overflow import Wrap
from polypad.script import parse, script

INT8 = (-128, 127)

# (text, the operation, the loops as (name, extent of n)); A has 64 elements.
CASES = {
    "min_of_i_plus_2": ('''
@T.prim_func
def f(n: T.int8, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in T.serial(n):
        B[i % T.int8(64)] = A[T.min(i + T.int8(2), T.int8(63))]
''', "i + 2", lambda m: [(i,) for i in range(m)], "i"),
    "floordiv_of_a_product": ('''
@T.prim_func
def f(n: T.int8, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in T.serial(n):
        for j in T.serial(4):
            B[j] = A[(i * T.int8(4) + j) // T.int8(8)]
''', None, lambda m: [(i, j) for i in range(m) for j in range(4)], "i j"),
}


def _refusal(text: str) -> NotAffineError:
    with pytest.raises(NotAffineError) as err:
        analyses.domain_touched(parse(text), "A")
    assert type(err.value) is NotAffineError
    return err.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_point_is_the_first_where_the_operation_leaves_the_dtype(case):
    text, operation, instances, counters = CASES[case]
    err = _refusal(text)
    wrap = err.evidence
    assert isinstance(wrap, Wrap) and wrap.dtype == "int8"
    shown = script(wrap.operation)
    if operation is not None:
        assert shown == operation
    names = (*counters.split(), "n")
    assert [name for name, _ in wrap.point] == list(names)
    # Brute force: every instance of every int8 n, the operation evaluated exactly.
    outside = sorted((*point, m) for m in range(INT8[0], INT8[1] + 1)
                     for point in instances(m)
                     if not INT8[0] <= eval(shown, {}, dict(zip(names, (*point, m)))) <= INT8[1])
    assert outside, "the case must wrap somewhere"
    first = outside[0]
    assert wrap.point == tuple(zip(names, first, strict=True))
    assert wrap.value == eval(shown, {}, dict(zip(names, first)))
    at = ", ".join(f"{k} = {v}" for k, v in zip(names, first, strict=True))
    assert f"may wrap around its int8 range: {shown} = {wrap.value} at {at} (in index 0 of " \
        in str(err)


def test_the_executor_meets_the_wrapped_index_at_the_reported_n():
    text, *_ = CASES["min_of_i_plus_2"]
    wrap = _refusal(text).evidence
    point = dict(wrap.point)
    kernel = codegen.build(parse(text), target="python")
    a, b = np.zeros(64, "int32"), np.zeros(64, "int32")
    # i + 2 wraps to -128 at i = 126, and T.min keeps it: A[-128] is outside A.
    with pytest.raises(BoundsCheckError, match=r"A\[-128\]"):
        kernel(point["n"], a, b)
    # One n lower, no instance wraps, and the run stays inside.
    kernel(point["n"] - 1, a, b)

