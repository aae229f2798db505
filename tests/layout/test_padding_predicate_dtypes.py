"""The padding predicate's variables hold every transformed index.

``padding_predicate`` (and ``inverse``) name the transformed indices ``i0, i1, ...``
when the caller gives none.  They were int32 whatever the shape: for an int64 shape,
or an int32 one whose transformed extent passes ``2**31 - 1`` (a flattened
``70000 x 70000``), the last transformed indices are no values of the predicate's
variables, and a kernel that guards its padding with the predicate cannot even be
called there.  Each predicate here is run on the reference executor at transformed
indices past int32 and compared with the padding written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.ir import Var
from polypad.ir.show import show
from polypad.layout import IndexMap
from polypad.script import parse

SPLIT4 = IndexMap(lambda i: [i // 4, i % 4])
FLATTEN = IndexMap(lambda i, j: [i * 70000 + j])


def run_predicate(predicate, params: dict[Var, int], indices: dict[Var, int]) -> bool:
    """``predicate`` evaluated by the reference executor, its scalar parameters and
    transformed indices passed as arguments of their own dtypes."""
    args = {**params, **indices}
    signature = ", ".join(f"{v.name}: T.{v.dtype}" for v in args)
    f = parse(f'''
@T.prim_func
def padding(B: T.Buffer((1,), "int32"), {signature}):
    B[0] = T.Select({show(predicate)}, 1, 0)
''')
    out = np.full(1, -1, dtype=np.int32)
    codegen.build(f, target="python")(out, *args.values())
    return bool(out[0])


def test_an_int64_shape_gives_int64_indices():
    n = Var("n", "int64")
    predicate = SPLIT4.padding_predicate((n,))
    i0, i1 = SPLIT4.relation((n,)).output_vars()
    assert (i0.dtype, i1.dtype) == ("int64", "int64")
    size = 2**33 + 1  # its last row, i0 = 2**31, holds one element and three of padding
    for row, col in [(2**31, 0), (2**31, 1), (2**31, 3), (2**31 - 1, 3), (2**20, 2)]:
        got = run_predicate(predicate, {n: size}, {i0: row, i1: col})
        assert got == (4 * row + col >= size), (row, col)


def test_a_constant_shape_past_int32_is_int64():
    size = 2**33 + 1
    predicate = SPLIT4.padding_predicate((size,))
    i0, i1 = SPLIT4.relation((size,)).output_vars()
    assert SPLIT4.transformed_shape((size,)) == (2**31 + 1, 4)
    assert (i0.dtype, i1.dtype) == ("int64", "int64")
    for row, col in [(2**31, 0), (2**31, 1), (2**31, 3), (0, 0)]:
        assert run_predicate(predicate, {}, {i0: row, i1: col}) == (4 * row + col >= size)


def test_an_int32_shape_whose_flattened_extent_passes_int32_is_int64():
    # 69999 columns flattened at a stride of 70000: the last flat index of each row
    # is padding, and the flat extent 69999 * 70000 + 69999 passes 2**31 - 1.
    shape = (70000, 69999)
    predicate = FLATTEN.padding_predicate(shape)
    (flat,) = FLATTEN.relation(shape).output_vars()
    assert flat.dtype == "int64"
    assert FLATTEN.transformed_shape(shape) == (69999 * 70000 + 69999,)
    for index in [69999, 70000, 2**31 - 2**31 % 70000 + 69999, 2**32 + 5,
                  69998 * 70000 + 69999, 69999 * 70000 + 69998]:
        got = run_predicate(predicate, {}, {flat: index})
        assert got == (index % 70000 == 69999), index


def test_indices_that_fit_int32_stay_int32():
    for shape in [(14,), (Var("n", "int32"),), (2**31 - 1,)]:
        assert [v.dtype for v in SPLIT4.relation(shape).output_vars()] == ["int32", "int32"]
    # given indices keep their own dtypes
    io, ii = Var("io", "int16"), Var("ii", "int16")
    assert SPLIT4.relation((14,)).output_vars([io, ii]) == (io, ii)


def test_the_inverse_names_int64_indices_for_an_int64_shape():
    n = Var("n", "int64")
    inverse, predicate = SPLIT4.inverse((n,))
    inputs, (logical,), _ = inverse.trace(2)
    assert [v.dtype for v in inputs] == ["int64", "int64"]
    assert run_predicate(predicate, {n: 2**33 + 1}, dict(zip(inputs, (2**31, 1))))


@pytest.mark.parametrize("m, shape", [
    (SPLIT4, (14,)), (SPLIT4, (16,)), (IndexMap(lambda i: [(i + 2) // 8, (i + 2) % 8]), (14,)),
    (IndexMap(lambda i, j: [j // 3, i, j % 3]), (3, 7)),
])
def test_small_predicates_agree_with_brute_force(m, shape):
    predicate = m.padding_predicate(shape)
    outs = m.relation(shape).output_vars()
    inputs, outputs, _ = m.trace(len(shape))
    from polypad.layout.packing import evaluate_index
    grid = np.indices(shape, dtype=np.int64)
    env = dict(zip(inputs, grid))
    used = set(zip(*(np.broadcast_to(evaluate_index(o, env), shape).ravel() for o in outputs)))
    for point in np.ndindex(*m.transformed_shape(shape)):
        got = run_predicate(predicate, {}, dict(zip(outs, point)))
        assert got == (tuple(point) not in used), point
