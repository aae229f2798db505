"""extract_gathers: a data-dependent index is every element it may name -- the
buffer's extent on its axis, cut to the values the index takes for any value of the
loads it reads where isl knows them and nothing may wrap (polypad/model/gathers.py).
Each relation is compared with the one written by hand, and with brute force: every
load value of a small dtype, evaluated."""

from __future__ import annotations

import islpy as isl
import pytest

import polypad as pp
from polypad.errors import NotAffineError
from polypad.model import extract, extract_gathers

# Each: the index of A (16 elements) as written, X: int8 (so brute force is 256 values),
# and the elements of A it may name at thread tx (of 4), by hand.
CASES = [
    ("X[tx]", "0 <= e <= 15"),
    ("T.min(T.max(0, T.Cast('int32', X[tx])), 3)", "0 <= e <= 3"),  # TVM's clipped take
    ("tx * 4 + T.floormod(T.Cast('int32', X[tx]), 4)", "4tx <= e <= 4tx + 3"),
    ("T.floordiv(T.Cast('int32', X[tx]), 64) + 2", "0 <= e <= 3"),  # -2..1, plus 2
    ("X[tx] + T.int8(1)", "0 <= e <= 15"),  # wraps at 127: the extent alone
]


def _func(index: str) -> pp.PrimFunc:
    return pp.parse(f'''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), X: T.Buffer((4,), "int8"),
      B: T.Buffer((4,), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        B[tx] = A[{index}]
''')


@pytest.mark.parametrize("index, elements", CASES)
def test_a_gathered_index_names_the_elements_its_load_values_may_give(index, elements):
    func = _func(index)
    with pytest.raises(NotAffineError, match="reads a buffer"):
        extract(func)
    (s,) = extract_gathers(func).statements
    gather = next(a for a in s.accesses if a.buffer.name == "A")
    assert gather.may and [x.buffer.name for x in gather.gathered] == ["X"]
    want = isl.Map(f"{{ S0[tx] -> A[e] : 0 <= tx <= 3 and {elements} }}")
    assert gather.relation.is_equal(want), gather.relation
    # Brute force: every int8 value of X[tx], the index evaluated as executed (int8
    # arithmetic wraps), at every thread; each element inside A must be in the relation.
    names = {(tx, e) for tx in range(4) for e in range(16)
             if not want.intersect(isl.Map(f"{{ S0[{tx}] -> A[{e}] }}")).is_empty()}
    for tx in range(4):
        for v in range(-128, 128):
            e = _executed(index, tx, v)
            if 0 <= e < 16:
                assert (tx, e) in names, (index, tx, v, e)


def _executed(index: str, tx: int, v: int) -> int:
    if index == "X[tx] + T.int8(1)":
        return (v + 1 + 128) % 256 - 128
    if index.startswith("T.min"):
        return min(max(0, v), 3)
    if index.startswith("tx * 4"):
        return tx * 4 + v % 4
    if index.startswith("T.floordiv"):
        return v // 64 + 2
    return v
