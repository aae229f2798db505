"""``padding_predicate`` refuses only where no condition it can write is exact.

The padding has two conditions: the padding set's own and the negation of the
image's.  Each is written in a form exact at every transformed index, or not at
all.  One without an exact form used to refuse the whole predicate, even where
the other had one; now the predicate is refused only where neither has one.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

import codegen
from polypad.errors import IllegalTransformError
from polypad.ir import Var
from polypad.ir.show import show
from polypad.layout import IndexMap
from polypad.script import parse

# On an int64 (n, 4): the image's condition, 8 * i0 + i1 < 4 * n, wraps at n near
# 2**62; the padding set's, 2 * i0 == n - 1 and i1 >= 4, nowhere.
REGROUP = IndexMap(lambda i, j: [(i * 4 + j) // 8, (i * 4 + j) % 8])
# On (3, m) for an int64 m: both conditions compute 8 * i1 + i2, past int64 at m = 2**63 - 1.
OFFSET_LAST = IndexMap(lambda i, j: [i, (j + 2) // 8, (j + 2) % 8])


def padding_grid(predicate, outs, params: dict[Var, int], extents) -> np.ndarray:
    """``predicate`` at every point of the transformed box of ``extents``, by the reference
    executor."""
    loops, body = [], "B[" + ", ".join(v.name for v in outs) + "]"
    for depth, (v, extent) in enumerate(zip(outs, extents)):
        loops.append("    " * (depth + 1) + f"for {v.name} in range(T.{v.dtype}({extent})):")
    indent = "    " * (len(outs) + 1)
    signature = "".join(f", {v.name}: T.{v.dtype}" for v in params)
    f = parse(f'''
@T.prim_func
def padding(B: T.Buffer({tuple(extents)}, "int32"){signature}):
''' + "\n".join(loops) + f"\n{indent}{body} = T.Select({show(predicate)}, 1, 0)\n")
    out = np.full(tuple(extents), -1, dtype=np.int32)
    codegen.build(f, target="python")(out, *params.values())
    return out.astype(bool)


def brute_force_padding(m: IndexMap, shape, extents) -> np.ndarray:
    """Where no logical index of ``shape`` lands in the transformed box, by enumeration."""
    inputs, outputs, _ = m.trace(len(shape))
    padding = np.ones(tuple(extents), dtype=bool)
    for point in np.ndindex(*shape):
        env = dict(zip(inputs, point))
        padding[tuple(_value(o, env) for o in outputs)] = False
    return padding


def _value(expr, env) -> int:
    from polypad.layout.packing import evaluate_index
    return int(evaluate_index(expr, {k: np.int64(v) for k, v in env.items()}))


def test_the_exact_condition_is_kept_where_the_other_wraps():
    n = Var("n", "int64")
    relation = REGROUP.relation((n, 4))
    predicate = REGROUP.padding_predicate((n, 4))
    i0, i1 = relation.output_vars()
    assert show(predicate) == "2 * i0 == n - 1 and i1 >= 4"
    for size in range(1, 10):
        extents = ((size + 1) // 2, 8)
        got = padding_grid(predicate, (i0, i1), {n: size}, extents)
        np.testing.assert_array_equal(got, brute_force_padding(REGROUP, (size, 4), extents))
    # the inverse keeps the exact condition too
    assert show(REGROUP.inverse((n, 4)).padding_predicate) == show(predicate)


def test_a_constant_past_int64_in_one_condition_leaves_the_other():
    # The image of (i + 2) // 8 on 2**63 - 1 ends at 8 * i0 + i1 < 2**63 + 1, a constant
    # no int64 holds; the padding set names its two pieces with constants that fit.
    m = IndexMap(lambda i: [(i + 2) // 8, (i + 2) % 8])
    size = 2**63 - 1
    predicate = m.padding_predicate((size,))
    assert show(predicate) == "i0 == 1152921504606846976 and i1 >= 1 or i0 == 0 and i1 < 2"
    i0, i1 = m.relation((size,)).output_vars()
    assert (i0.dtype, i1.dtype) == ("int64", "int64")
    # the same shape of map on a small size, against enumeration
    small = 8 * 3 - 1
    small_predicate = m.padding_predicate((small,))
    extents = m.transformed_shape((small,))
    np.testing.assert_array_equal(
        padding_grid(small_predicate, (i0, i1), {}, extents),
        brute_force_padding(m, (small,), extents))


def test_refused_where_neither_condition_is_exact_naming_the_point():
    m_var = Var("m", "int64")
    relation = OFFSET_LAST.relation((3, m_var))
    with pytest.raises(IllegalTransformError) as info:
        OFFSET_LAST.padding_predicate((3, m_var))
    err = info.value
    assert err.params == {"m": 2**63 - 1}
    message = str(err)
    assert "computes 8 * i1 + i2 outside the range" in message
    assert "of its int64 at i0=2, i1=1152921504606846976, i2=7, m=9223372036854775807" in message
    # the evidence is a transformed index of that shape, where 8 * i1 + i2 passes int64
    point = isl.Set(f"[m] -> {{ T[2, {2**60}, 7] : m = {2**63 - 1} }}")
    assert point.is_subset(relation.transformed_box)
    assert 8 * 2**60 + 7 > 2**63 - 1
    # the same map on a small m has its predicate, and it is the padding
    for size in (5, 7):
        predicate = OFFSET_LAST.padding_predicate((3, size))
        extents = OFFSET_LAST.transformed_shape((3, size))
        outs = OFFSET_LAST.relation((3, size)).output_vars()
        np.testing.assert_array_equal(padding_grid(predicate, outs, {}, extents),
                                      brute_force_padding(OFFSET_LAST, (3, size), extents))
