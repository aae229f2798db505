"""``rfactor``'s argmax fold and the padded shapes of ``IndexMap`` (``transform_layout``)
add no integer wrap-around the original did not have.

The fold of an argmax's partial winners into lane 0 ran over the factored loop
from ``min + 1`` for ``extent - 1`` lanes, which wraps at the top of the counter's
dtype (``m + 1`` at ``m = 127``, int8).  It now does so only where isl shows that
both fit (constants, or the ``T.assume``\\ s before the nest); elsewhere it runs
over the loop's own range, lane 0 included, which folding leaves as it is.

Each rewrite is run against the original at the ends of the int8 range on the
reference executor and Numba, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scalar_runs_support import assert_runs_the_same, kernels

from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.layout import IndexMap
from polypad.schedule import Schedule
from polypad.script import parse, script

# The factored loop runs from m for n steps; A is read from its start.
ARGMAX8 = '''
@T.prim_func
def f(m: T.int8, n: T.int8, A: T.Buffer((4, 64), "float32"), M: T.Buffer((4,), "float32"),
      I: T.Buffer((4,), "int8")):
    T.assume(1 <= n and n <= 64{extra})
    for i in T.serial(4):
        for j in T.serial(m, m + n):
            I[i] = T.if_then_else(A[i, j - m] > M[i], j, I[i])
            M[i] = T.max(M[i], A[i, j - m])
'''


def _started(func: n.PrimFunc) -> list[np.ndarray]:
    """Few distinct values, so lanes tie; M and I started as a caller would."""
    a = np.random.default_rng(0).integers(-2, 2, (4, 64)).astype("float32")
    a[::2, 1::3] = -np.inf
    return [a, a[:, 0].copy(), np.zeros(4, "int8")]


def _fold(func: n.PrimFunc) -> n.For:
    return next(x for x in walk(func.body) if isinstance(x, n.For) and x.var.name == "j_wb")


@pytest.mark.parametrize("extra, fold", [
    ("", ("m", "n")),                                    # m + 1 wraps at m = 127
    (" and m <= 100", ("m + 1", "n + -1")),              # the assumption keeps it in
], ids=["unbounded", "assumed"])
def test_the_argmax_fold_starts_at_the_second_lane_only_where_that_fits(extra, fold):
    func = parse(ARGMAX8.format(extra=extra))
    sch = Schedule(func)
    sch.rfactor("j")
    verify(sch.func)
    loop = _fold(sch.func)
    assert (script(loop.min), script(loop.extent)) == fold
    # Every m and n at the ends of int8 where the original's counter stays in range.
    values = [(m, k) for k in (1, 2, 3, 64) for m in (-128, -127, -1, 0, 60, 63)
              + tuple(range(128 - k - 2, 128 - k + 1)) if m + k - 1 <= 127]
    if extra:
        values = [(m, k) for m, k in values if m <= 100]
    assert_runs_the_same(func, sch.func, values, inputs=_started)


# ---------------------------------------------------------------- transform_layout's shapes

# IndexMap.transformed_shape of a symbolic size: (n + 3) // 4 wraps to a negative for
# n > 2**31 - 4 (int32), and the padding predicate 3 * i0 + i1 >= n at the last i0
# for n = 2**31 - 1.  The extent is computed in int64 and cast back (its value fits);
# the predicate is written over int64 where the plain one may wrap.  An int64 size,
# with no wider dtype, has its quotient's constant split off: n // 4 + (n % 4 + 3) // 4.

LIMIT = 2**31 - 1
INT32_ENDS = [0, 1, 2, 3, 4, 5, LIMIT - 8, LIMIT - 4, LIMIT - 3, LIMIT - 2, LIMIT - 1, LIMIT]


def _values(expr: n.Expr, names: tuple[str, ...], dtype: str, points) -> list[list[int]]:
    """``expr`` over the variables ``names`` (all of ``dtype``) at each of ``points``,
    on the reference executor and on Numba."""
    params = ", ".join(f"{k}: T.{dtype}" for k in names)
    value = script(expr) if dtypes.is_int(expr.dtype) else f'T.Cast("int32", {script(expr)})'
    out_dtype = expr.dtype if dtypes.is_int(expr.dtype) else "int32"
    text = (f'@T.prim_func\ndef g({params}, out: T.Buffer((1,), "{out_dtype}")):\n'
            f"    out[0] = {value}\n")
    results = []
    for kernel in kernels(parse(text)):
        got = []
        for point in points:
            out = np.zeros(1, dtype=out_dtype)
            kernel(*point, out)
            got.append(int(out[0]))
        results.append(got)
    return results


@pytest.mark.parametrize("factor", [3, 4, 8])
def test_a_padded_int32_extent_is_exact_at_the_ends_of_the_range(factor):
    size = n.Var("n", "int32")
    extent, inner = IndexMap(lambda i: [i // factor, i % factor]).transformed_shape((size,))
    assert inner == factor
    assert script(extent) == f'T.Cast("int32", (T.Cast("int64", n) + {factor - 1}) // {factor})'
    want = [-(-v // factor) for v in INT32_ENDS]
    assert _values(extent, ("n",), "int32", [(v,) for v in INT32_ENDS]) == [want, want]


def test_a_padded_int64_extent_splits_its_quotient_and_is_exact_at_the_ends():
    # (n + 3) // 4 was kept: negative for n > 2**63 - 4.
    size = n.Var("n", "int64")
    extent, _ = IndexMap(lambda i: [i // 4, i % 4]).transformed_shape((size,))
    assert (script(extent), extent.dtype) == ("n // 4 + (n % 4 + 3) // 4", "int64")
    ends = [0, 1, 5, 2**63 - 4, 2**63 - 3, 2**63 - 1]
    want = [-(-v // 4) for v in ends]
    assert _values(extent, ("n",), "int64", [(v,) for v in ends]) == [want, want]


def test_every_padded_int8_extent_and_padding_predicate_is_exact():
    size, io, ii = (n.Var(name, "int8") for name in ("n", "io", "ii"))
    split3 = IndexMap(lambda i: [i // 3, i % 3])
    extent, _ = split3.transformed_shape((size,))
    want = [-(-v // 3) for v in range(128)]
    assert _values(extent, ("n",), "int8", [(v,) for v in range(128)]) == [want, want]
    predicate = split3.padding_predicate((size,), [io, ii])
    # The last two outer iterations of every size, where the plain 3 * io + ii wraps.
    points = [(v, o, i) for v in range(1, 128) for o in range(max(0, want[v] - 2), want[v])
              for i in range(3)]
    expected = [int(3 * o + i >= v) for v, o, i in points]
    assert _values(predicate, ("n", "io", "ii"), "int8", points) == [expected, expected]
