"""``overflow.point_outside``: where an isl function leaves a dtype, the one search the
wrap checks of exact forms, shifted box indices and new loop counters share."""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n
from polypad.model.affine import AffineSpace, to_pw_aff
from polypad.model.overflow import outside_points, point_outside


def test_a_point_of_the_set_where_the_value_leaves_the_dtype():
    i = n.Var("i", "int8")
    space = AffineSpace((i,))
    pa = to_pw_aff(i + 100, space)
    where = isl.Set("{ [i] : 0 <= i < 50 }")
    point = point_outside(pa, "int8", where, space)
    value = point.get_coordinate_val(isl.dim_type.set, 0).to_python()
    assert 28 <= value < 50  # i + 100 > 127
    assert outside_points(pa, "int8", where, space).is_equal(
        isl.Set("{ [i] : 28 <= i < 50 }"))
    assert point_outside(pa, "int8", isl.Set("{ [i] : 0 <= i < 28 }"), space) is None
    assert point_outside(pa, "int16", where, space) is None


def test_only_points_where_the_variables_hold_values_of_their_dtypes():
    size = n.Var("n", "int32")
    space = AffineSpace(())
    pa = to_pw_aff(size - 1, space)
    everywhere = isl.Set("[n] -> { [] }").params()
    # n - 1 leaves int32 only at n = -2**31 ...
    hit = outside_points(pa, "int32", everywhere, space)
    assert hit.is_equal(isl.Set(f"[n] -> {{ : n = {-2**31} }}"))
    # ... and without the dtypes, also at every n isl's integers hold past them.
    assert not outside_points(pa, "int32", everywhere).is_equal(hit)
    point = point_outside(pa, "int32", everywhere, space)
    assert point.get_coordinate_val(isl.dim_type.param, 0).to_python() == -2**31
