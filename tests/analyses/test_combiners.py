"""``analyses.combiners``: which stores are reduction updates, by which combiner, with
which identity -- and the identities and exactness checked by brute force on numpy.

Each form TVM writes is recognised (``+ * max min`` and ``& | ^`` on integers, the
``T.if_then_else`` forms of ``max`` and ``min`` in every spelling), each near miss is
not, and :meth:`Update.value` rebuilds an update in the form it was written.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from analyses.combiners import NAMES, Combiner, update_of
from analyses.reductions import find_reductions
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.script import parse


def store_of(update: str, dtype: str = "int32") -> n.BufferStore:
    f = parse(f'''
@T.prim_func
def f(A: T.Buffer((4, 3), "{dtype}"), B: T.Buffer((4,), "{dtype}")):
    for i, k in T.grid(4, 3):
        B[i] = {update}
''')
    return f.body.body.body


@pytest.mark.parametrize(("update", "name"), [
    ("B[i] + A[i, k]", "+"), ("A[i, k] * B[i]", "*"),
    ("T.max(B[i], A[i, k])", "max"), ("T.min(A[i, k], B[i])", "min"),
    ("B[i] & A[i, k]", "&"), ("A[i, k] | B[i]", "|"), ("B[i] ^ A[i, k]", "^"),
    # Every spelling of the select form: the comparison either way round, strict or not.
    ("T.if_then_else(A[i, k] > B[i], A[i, k], B[i])", "max"),
    ("T.if_then_else(B[i] < A[i, k], A[i, k], B[i])", "max"),
    ("T.if_then_else(B[i] >= A[i, k], B[i], A[i, k])", "max"),
    ("T.if_then_else(A[i, k] <= B[i], B[i], A[i, k])", "max"),
    ("T.if_then_else(A[i, k] < B[i], A[i, k], B[i])", "min"),
    ("T.if_then_else(B[i] > A[i, k], A[i, k], B[i])", "min"),
    ("T.if_then_else(B[i] <= A[i, k], B[i], A[i, k])", "min"),
])
def test_every_form_is_read_as_its_combiner(update, name):
    store = store_of(update)
    u = update_of(store)
    assert u is not None and u.combiner == Combiner(name)
    assert isinstance(u.operand, n.BufferLoad) and u.operand.buffer.name == "A"
    assert all(acc == n.BufferLoad(store.buffer, store.indices) for acc in u.accumulators)
    # Rebuilt with the same accumulator and operand, the value is the same expression;
    # with others, the same form around them.
    assert_structural_equal(u.value(u.accumulators[0], u.operand), store.value)
    x, y = n.Var("x", "int32"), n.Var("y", "int32")
    rebuilt = u.value(x, y)
    assert type(rebuilt) is type(store.value)
    assert {v.name for v in walk(rebuilt) if isinstance(v, n.Var)} == {"x", "y"}


@pytest.mark.parametrize("update", [
    "B[i] - A[i, k]",                          # not associative
    "B[i] + B[i]",                             # the operand reads B
    "B[i] * 2 + A[i, k]",                      # B is not an operand of the top operation
    "T.max(B[i], A[i, k] + B[0])",             # the operand reads B
    "B[i] << A[i, k]",                         # a shift is no combiner
    "T.if_then_else(A[i, k] > B[i], B[i], B[i])",      # no operand
    "T.if_then_else(A[i, k] > 0, A[i, k], B[i])",      # compares something else
    "T.if_then_else(A[i, k] == B[i], A[i, k], B[i])",  # not an order
    "T.if_then_else(A[i, k] > B[i], A[i, k] + 1, B[i])",  # picks another value
])
def test_near_misses_are_no_updates(update):
    assert update_of(store_of(update)) is None


def test_bitwise_combiners_are_integers_only_and_the_model_finds_every_combiner():
    assert update_of(store_of("T.max(B[i], A[i, k])", "float32")).combiner.name == "max"
    for update, name in [("B[i] & A[i, k]", "&"),
                         ("T.if_then_else(A[i, k] > B[i], A[i, k], B[i])", "max")]:
        f = parse(f'''
@T.prim_func
def f(A: T.Buffer((4, 3), "int32"), B: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 3):
        B[i] = {update}
''')
        (r,) = find_reductions(extract(f))
        assert (r.op, r.exact) == (name, True)
    # A guard that reads the accumulator makes the terms depend on the order.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4, 3), "int32"), B: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 3):
        if B[i] < 100:
            B[i] = B[i] + A[i, k]
''')
    assert find_reductions(extract(f)) == ()


DTYPES = ["int8", "int32", "uint8", "uint16", "float32", "float64"]
NUMPY = {"+": np.add, "*": np.multiply, "max": np.maximum, "min": np.minimum,
         "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_identities_and_exactness_by_brute_force(name, dtype):
    """``combine(y, identity) == y`` for every value of a small dtype (a sample of a wide
    one, infinities included), and an exact combiner gives the same bits in every order
    of a few terms; float +, *, max and min do not (so they are not exact)."""
    if dtype.startswith("float") and name in "&|^":
        return
    c = Combiner(name)
    t = np.dtype(dtype)
    value = c.identity(dtype).value
    identity = t.type(value)
    if t.kind in "iu":
        info = np.iinfo(t)
        ys = (np.arange(info.min, info.max + 1, dtype=np.int64).astype(t) if t.itemsize == 1
              else np.random.default_rng(0).integers(info.min, info.max, 1000, endpoint=True,
                                                     dtype=t))
    else:
        ys = np.concatenate([np.random.default_rng(0).standard_normal(1000),
                             [np.inf, -np.inf, 0.0, -0.0, 1e30]]).astype(t)
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(NUMPY[name](ys, identity), ys)
        terms = np.random.default_rng(1).standard_normal(6) * 1e3
        terms = terms.astype(t) if t.kind == "f" else terms.astype(np.int64).astype(t)
        if t.kind == "f" and name in ("max", "min"):  # the extreme a zero of either sign
            sign = -1 if name == "max" else 1
            terms = np.array([-0.0, 0.0, 5 * sign, 7 * sign], dtype=t)
        results = set()
        for order in itertools.permutations(range(4)):
            acc = identity
            for k in order:
                acc = NUMPY[name](acc, terms[k])
            results.add(acc.tobytes())
    # Exact: every order gives the same bits.  Not exact: float + and * round
    # differently in some order, and float max and min keep the first of two equal
    # zeros, so the sign of the result depends on the order.
    assert c.exact(dtype) == (len(results) == 1)
    assert c.exact(dtype) == (t.kind != "f")
