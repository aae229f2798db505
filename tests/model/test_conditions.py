"""Conditions to isl.Set, compared with hand-written sets."""

import islpy as isl
import pytest

from polypad.errors import NotAffineError
from polypad.ir import And, BoolImm, Buffer, Not, Or, Select, Var, const
from polypad.ir.intrinsics import likely
from polypad.model import to_set

i, j, n = Var("i"), Var("j"), Var("n")


def test_guard_of_a_padded_tile():
    s = to_set(4 * i + j < 14, [i, j])
    assert s.is_equal(isl.Set("{ [i, j] : 4i + j < 14 }"))


@pytest.mark.parametrize(
    "cond, text",
    [
        (lambda: i.equal(j), "{ [i, j] : i = j }"),
        (lambda: i.not_equal(j), "{ [i, j] : i < j or i > j }"),
        (lambda: i <= j, "{ [i, j] : i <= j }"),
        (lambda: i > j, "{ [i, j] : i > j }"),
        (lambda: i >= j, "{ [i, j] : i >= j }"),
        (lambda: And(0 <= i, i < n), "[n] -> { [i, j] : 0 <= i < n }"),
        (lambda: Or(i < 0, j > 3), "{ [i, j] : i < 0 or j > 3 }"),
        (lambda: Not(i < 0), "{ [i, j] : i >= 0 }"),
        (lambda: likely((i % 4).equal(0)), "{ [i, j] : i mod 4 = 0 }"),
        (lambda: BoolImm(True), "{ [i, j] }"),
        (lambda: BoolImm(False), "{ [i, j] : false }"),
        (lambda: Select(i < 4, j < 2, j > 5),
         "{ [i, j] : (i < 4 and j < 2) or (i >= 4 and j > 5) }"),
        (lambda: (i < 4).equal(j < 2), "{ [i, j] : (i < 4 and j < 2) or (i >= 4 and j >= 2) }"),
        (lambda: (i + 2) // -8 >= j, "{ [i, j] : j <= floor((-i - 2)/8) }"),
    ],
)
def test_conditions_match_isl_text(cond, text):
    assert to_set(cond(), [i, j]).is_equal(isl.Set(text))


def test_floor_mod_negative_divisor_condition_by_brute_force():
    s = to_set(((i - 5) % -4).equal(-1), [i])
    members = {x for x in range(-20, 20) if not s.intersect(_point(s, x)).is_empty()}
    assert members == {x for x in range(-20, 20) if (x - 5) % -4 == -1}


def test_data_dependent_and_float_conditions_are_not_affine():
    A = Buffer("A", (4,), "float32")
    with pytest.raises(NotAffineError):
        to_set(A[i] > 0.0, [i])
    with pytest.raises(NotAffineError):
        to_set(And(i < 4, i * j > const(2)), [i, j])


def _point(s: isl.Set, x: int) -> isl.Set:
    p = isl.Point.zero(s.get_space()).set_coordinate_val(isl.dim_type.set, 0, x)
    return isl.Set.from_point(p)


def test_constant_bounds_of_one_dim_match_the_general_construction():
    # `i < 8` and friends are built as bounds of the universe; compare every form
    # (both operand orders, each comparison) with the affine-function route.
    from polypad.ir import nodes as nd
    from polypad.model import AffineSpace
    from polypad.model.affine import _Converter

    space = AffineSpace((i, j), tuple_name="S")
    for kind in (nd.Lt, nd.Le, nd.Gt, nd.Ge, nd.Eq, nd.Ne):
        for value in (-3, 0, 7):
            for a, b in ((i, const(value)), (const(value), j)):
                cond = kind(a, b)
                conv = _Converter(space)
                name = {nd.Lt: "lt_set", nd.Le: "le_set", nd.Gt: "gt_set", nd.Ge: "ge_set",
                        nd.Eq: "eq_set", nd.Ne: "ne_set"}[kind]
                general = getattr(conv.pw_aff(a), name)(conv.pw_aff(b))
                assert to_set(cond, space).is_equal(general), cond
    # A parameter is no set dim: the general route, with n as a parameter.
    assert to_set(n < 4, space).is_equal(isl.Set("[n] -> { S[i, j] : n < 4 }"))
