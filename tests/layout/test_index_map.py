"""IndexMap on the RFC's layouts: shapes, padding, predicates, inverses, errors."""

import islpy as isl
import numpy as np
import pytest

from polypad.errors import NonInjectiveError, NotAffineError, PolypadError
from polypad.ir import And, Or, Var
from polypad.ir.structural import structural_equal
from polypad.layout import AXIS_SEPARATOR, IndexMap
from polypad.layout.packing import evaluate_index

SPLIT4 = IndexMap(lambda i: [i // 4, i % 4])
SPLIT8 = IndexMap(lambda i: [i // 8, i % 8])
OFFSET8 = IndexMap(lambda i: [(i + 2) // 8, (i + 2) % 8])


@pytest.mark.parametrize("m, shape, expected", [
    (SPLIT8, (16,), (2, 8)), (SPLIT8, (14,), (2, 8)), (OFFSET8, (14,), (2, 8)),
    (OFFSET8, (16,), (3, 8)), (SPLIT4, (14,), (4, 4)), (OFFSET8, (18,), (3, 8)),
])
def test_rfc_transformed_shapes(m, shape, expected):
    assert m.transformed_shape(shape) == expected


def test_rfc_padding_sets_are_exact():
    assert SPLIT8.padding_set((16,)).is_empty()
    assert SPLIT8.padding_set((14,)).is_equal(isl.Set("{ T[1, i1] : 6 <= i1 <= 7 }"))
    assert OFFSET8.padding_set((14,)).is_equal(isl.Set("{ T[0, i1] : 0 <= i1 <= 1 }"))
    assert OFFSET8.padding_set((16,)).is_equal(
        isl.Set("{ T[0, i1] : 0 <= i1 <= 1; T[2, i1] : 2 <= i1 <= 7 }"))


def test_padding_predicate_of_split_on_14():
    io, ii = Var("io"), Var("ii")
    pred = SPLIT4.padding_predicate((14,), [io, ii])
    assert structural_equal(pred, And(io.equal(3), ii >= 2))


def test_padding_predicate_of_offset_map_has_both_ends():
    io, ii = Var("io"), Var("ii")
    pred = OFFSET8.padding_predicate((16,), [io, ii])
    expected = Or(And(io.equal(2), ii >= 2), And(io.equal(0), ii < 2))
    assert structural_equal(pred, expected)


def test_no_padding_predicate_is_false():
    from polypad.ir import BoolImm
    assert SPLIT8.padding_predicate((16,)) == BoolImm(False)
    assert SPLIT8.is_bijective((16,)) and not SPLIT8.is_bijective((14,))


def test_symbolic_shape():
    from polypad.ir import Cast, FloorDiv, Ge, IntImm
    n = Var("n")
    io, ii = Var("io"), Var("ii")
    extent0, extent1 = SPLIT4.transformed_shape((n,))
    # n + 3 wraps for n > 2**31 - 4: the extent is computed in int64 and cast back.
    wide = FloorDiv(Cast("int64", n) + IntImm(3, "int64"), IntImm(4, "int64"))
    assert structural_equal(extent0, Cast("int32", wide))
    assert extent1 == 4
    assert structural_equal(SPLIT4.padding_predicate((n,), [io, ii]), Ge(io * 4 + ii, n)) \
        or structural_equal(SPLIT4.padding_predicate((n,), [io, ii]), Ge(4 * io + ii, n))
    # the set itself is exact for every n: check n = 14 against the constant case
    pad = SPLIT4.padding_set((n,)).fix_val(isl.dim_type.param, 0, isl.Val(14))
    assert pad.project_out(isl.dim_type.param, 0, 1).is_equal(SPLIT4.padding_set((14,)))


def test_inverse_of_padded_map():
    io, ii = Var("io"), Var("ii")
    inverse, predicate = SPLIT4.inverse((14,))
    (logical,) = inverse(io, ii)
    for a in range(4):
        for b in range(4):
            if 4 * a + b < 14:
                assert evaluate_index(logical, {io: np.int64(a), ii: np.int64(b)}) == 4 * a + b
    assert predicate == SPLIT4.padding_predicate((14,), [io, ii]) or structural_equal(
        predicate, SPLIT4.padding_predicate((14,)), map_free_vars=True)


def test_non_injective_map_names_two_colliding_indices():
    m = IndexMap(lambda i: [i % 2])
    assert not m.is_injective((4,))
    with pytest.raises(NonInjectiveError) as info:
        m.check_injective((4,))
    c = info.value.collision
    assert c.first != c.second and c.first[0] % 2 == c.second[0] % 2
    assert f"{list(c.first)}" in str(info.value) and f"{list(c.second)}" in str(info.value)
    with pytest.raises(NonInjectiveError):
        m.inverse((4,))


def test_non_affine_map_is_refused_naming_the_expression():
    m = IndexMap(lambda i, j: [i * j])
    with pytest.raises(NotAffineError, match=r"i \* j"):
        m.transformed_shape((4, 4))


def test_negative_transformed_index_is_refused():
    with pytest.raises(PolypadError, match="negative"):
        IndexMap(lambda i: [i - 2]).transformed_shape((4,))


def test_star_indices_and_rank_mismatch():
    last_split = IndexMap(lambda *idx: [*idx[:-1], idx[-1] // 8, idx[-1] % 8])
    assert last_split.transformed_shape((3, 20)) == (3, 3, 8)
    assert last_split.transformed_shape((20,)) == (3, 8)
    with pytest.raises(PolypadError, match="takes 1 indices but the buffer has 2"):
        SPLIT4.transformed_shape((4, 4))


def test_axis_separators_nhwc_to_nchwc():
    m = IndexMap(lambda n, h, w, c: [n, c // 4, h, w, AXIS_SEPARATOR, c % 4])
    shape = (2, 8, 8, 12)
    assert m.transformed_shape(shape) == (2, 3, 8, 8, 4)
    assert m.trace(4)[2] == (4,)
    assert m.physical_shape(shape) == (2 * 3 * 8 * 8, 4)
    flat = IndexMap(lambda n, h, w, c: [n, c // 4, h, w, c % 4])
    assert flat.physical_shape(shape) == (2 * 3 * 8 * 8 * 4,)


def test_composition():
    transpose = IndexMap(lambda a, b: [b, a])
    both = SPLIT4.then(transpose)
    assert both.transformed_shape((14,)) == (4, 4)
    io, ii = Var("io"), Var("ii")
    assert structural_equal(both.padding_predicate((14,), [io, ii]),
                            SPLIT4.padding_predicate((14,), [ii, io]))
    assert transpose.compose(SPLIT4).transformed_shape((14,)) == (4, 4)


def test_pack_and_unpack_round_trip():
    a = np.arange(14, dtype=np.float32) + 1
    packed = SPLIT4.pack(a, pad_value=-1.0)
    assert packed.shape == (4, 4)
    assert packed[3, 2] == -1.0 and packed[3, 3] == -1.0 and packed[1, 2] == 7.0
    np.testing.assert_array_equal(SPLIT4.unpack(packed, (14,)), a)
    nan_padded = OFFSET8.pack(a)
    assert np.isnan(nan_padded[0, :2]).all() and nan_padded[0, 2] == 1.0
    wrapped = SPLIT4.pack(np.arange(14), pad_value=lambda io, ii: 100 + ii)
    assert list(wrapped[3]) == [12, 13, 102, 103]


def test_map_from_text():
    m = IndexMap("lambda i: [(i + 2) // 8, (i + 2) % 8]")
    assert m.transformed_shape((16,)) == (3, 8)
    assert m.padding_set((16,)).is_equal(OFFSET8.padding_set((16,)))


def test_map_text_errors_are_located():
    from polypad.errors import ParseError

    with pytest.raises(ParseError) as info:
        IndexMap("lambda i: [i // 4, foo(i)]").transformed_shape((14,))
    assert (info.value.lineno, info.value.col) == (1, 20)
