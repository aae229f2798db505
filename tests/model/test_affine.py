"""Quasi-affine expressions to isl.PwAff, checked against hand-written ISL and Python."""

import islpy as isl
import pytest

from polypad.errors import NotAffineError
from polypad.ir import Buffer, BufferLoad, Cast, FloatImm, Let, Max, Min, Select, Var, const
from polypad.model import AffineSpace, Names, to_pw_aff

i, j, n = Var("i"), Var("j"), Var("n")


def value_at(pa: isl.PwAff, coords: list[int], params: dict[str, int] | None = None) -> int:
    """``pa`` evaluated at a point (the brute-force side of the checks)."""
    space = pa.get_domain_space()
    point = isl.Point.zero(space)
    for pos, v in enumerate(coords):
        point = point.set_coordinate_val(isl.dim_type.set, pos, v)
    for name, v in (params or {}).items():
        pos = space.find_dim_by_name(isl.dim_type.param, name)
        point = point.set_coordinate_val(isl.dim_type.param, pos, v)
    return pa.eval(point).to_python()


def test_linear_expression_matches_isl_text():
    pa = to_pw_aff(4 * i + j - 3, [i, j])
    assert pa.is_equal(isl.PwAff("{ [i, j] -> [(4i + j - 3)] }"))


def test_other_variables_become_named_params():
    pa = to_pw_aff(i + 2 * n, [i])
    assert pa.is_equal(isl.PwAff("[n] -> { [i] -> [(i + 2n)] }"))


def test_constant_times_constant_expression():
    assert to_pw_aff((2 + 1) * i, [i]).is_equal(isl.PwAff("{ [i] -> [(3i)] }"))


@pytest.mark.parametrize("divisor", [4, 3, -4, -3, 1, -1])
@pytest.mark.parametrize("offset", [-5, 0, 2])
def test_floor_div_and_mod_match_python_on_negative_operands(divisor, offset):
    q = to_pw_aff((i + offset) // divisor, [i])
    r = to_pw_aff((i + offset) % divisor, [i])
    for x in range(-17, 18):
        assert value_at(q, [x]) == (x + offset) // divisor, x
        assert value_at(r, [x]) == (x + offset) % divisor, x


def test_floor_div_by_constant_isl_form():
    assert to_pw_aff((i - 5) // 4, [i]).is_equal(isl.PwAff("{ [i] -> [floor((i - 5)/4)] }"))
    assert to_pw_aff((i + 2) // 8, [i]).is_equal(isl.PwAff("{ [i] -> [floor((i + 2)/8)] }"))
    assert to_pw_aff(i % 4, [i]).is_equal(isl.PwAff("{ [i] -> [i mod 4] }"))


def test_nested_floor_div():
    pa = to_pw_aff((i // 4 - 1) // -3, [i])
    for x in range(-30, 30):
        assert value_at(pa, [x]) == (x // 4 - 1) // -3


def test_min_max_select():
    pa = to_pw_aff(Min(i, 13 - j) + Max(j, const(0)), [i, j])
    assert pa.is_equal(isl.PwAff("{ [i, j] -> [min(i, 13 - j) + max(j, 0)] }"))
    sel = to_pw_aff(Select(4 * i + j < 14, 4 * i + j, const(0)), [i, j])
    expected = isl.PwAff("{ [i, j] -> [4i + j] : 4i + j < 14; [i, j] -> [0] : 4i + j >= 14 }")
    assert sel.is_equal(expected)


def test_int_cast_is_transparent_and_bool_cast_is_indicator():
    assert to_pw_aff(Cast("int64", i + 1), [i]).is_equal(isl.PwAff("{ [i] -> [i + 1] }"))
    ind = to_pw_aff(Cast("int32", i < 4), [i])
    assert ind.is_equal(isl.PwAff("{ [i] -> [1] : i < 4; [i] -> [0] : i >= 4 }"))


def test_let_bound_variables_are_substituted():
    k = Var("k")
    space = AffineSpace([i], lets={k: i * 4 + 1})
    assert to_pw_aff(k // 2, space).is_equal(isl.PwAff("{ [i] -> [floor((4i + 1)/2)] }"))
    assert to_pw_aff(Let(k, i + 1, k * 2), [i]).is_equal(isl.PwAff("{ [i] -> [2i + 2] }"))


def test_product_of_variables_is_not_affine_and_named():
    with pytest.raises(NotAffineError, match=r"i \* j") as info:
        to_pw_aff(i * j + 1, [i, j])
    assert info.value.expr == i * j


def test_buffer_load_float_and_param_division_are_not_affine():
    A = Buffer("A", (4,), "int32")
    load = BufferLoad(A, (i,))
    with pytest.raises(NotAffineError) as info:
        to_pw_aff(i + load, [i])
    assert info.value.expr == load
    with pytest.raises(NotAffineError):
        to_pw_aff(Cast("int32", FloatImm(1.5)), [i])
    with pytest.raises(NotAffineError, match="divisor"):
        to_pw_aff(i // n, [i])
    with pytest.raises(NotAffineError, match="zero"):
        to_pw_aff(i % (j - j + 0), [i, j])


def test_colliding_names_get_distinct_params():
    other_n = Var("n")
    names = Names()
    pa = to_pw_aff(n - other_n, AffineSpace([], names=names))
    assert pa.get_space().dim(isl.dim_type.param) == 2
    assert names.name(n) == "n" and names.name(other_n) == "n_1"
