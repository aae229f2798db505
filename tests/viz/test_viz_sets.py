"""plot_set: the integer points of a set, as well-formed SVG."""

import islpy as isl
import pytest
from viz_support import parse, with_class

from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.viz import Svg, plot_set


def test_a_box_gives_one_point_per_element():
    svg = plot_set(isl.Set("{ [i, j] : 0 <= i < 3 and 0 <= j < 4 }"))
    assert isinstance(svg, Svg) and svg._repr_svg_() == svg.text == str(svg)
    root = parse(svg.text)
    assert len(with_class(root, "point")) == 12
    assert not with_class(root, "lattice")  # a box has no holes


def test_holes_are_faint_lattice_dots():
    root = parse(plot_set("{ [i] : 0 <= i < 14 and i mod 4 < 2 }").text)
    assert len(with_class(root, "point")) == 8
    assert len(with_class(root, "lattice")) == 14 - 8  # 2, 3, 6, 7, 10, 11


def test_points_sit_where_their_coordinates_say():
    root = parse(plot_set("{ [i, j] : 0 <= i < 2 and 0 <= j < 3 }").text)
    titles = [p.find("{http://www.w3.org/2000/svg}title").text for p in with_class(root, "point")]
    assert titles[0] == "(i=0, j=0)" and titles[-1] == "(i=1, j=2)"
    xs = [float(p.get("cx")) for p in with_class(root, "point")]
    ys = [float(p.get("cy")) for p in with_class(root, "point")]
    assert xs[0] < xs[1] < xs[2] and ys[0] == ys[2] < ys[3]  # j runs across, i down


def test_parameters_are_fixed_and_extra_dimensions_sliced():
    s = "[n] -> { S[i, j, k] : 0 <= i < 3 and 0 <= j < n and 0 <= k < 2 and j mod 2 = 0 }"
    root = parse(plot_set(s, params={"n": 5}, slice={"k": 1}).text)
    assert len(with_class(root, "point")) == 3 * 3
    assert [t.text for t in with_class(root, "caption")] == ["S[i, j] at k = 1; n = 5"]
    by_position = parse(plot_set(s, params={"n": 5}, slice={2: 0}).text)
    assert len(with_class(by_position, "point")) == 9


def test_each_tuple_of_a_union_gets_a_panel():
    root = parse(plot_set(isl.UnionSet("{ A[i] : 0 <= i < 3; B[i, j] : 0 <= i, j < 2 }")).text)
    assert len(with_class(root, "point")) == 3 + 4
    assert [t.text for t in with_class(root, "caption")] == ["A[i]", "B[i, j]"]


def test_empty_set_and_basic_set():
    assert parse(plot_set("{ [i] : 0 <= i < 0 }").text) is not None
    basic = isl.BasicSet("{ [i] : 0 <= i < 5 }")
    assert len(with_class(parse(plot_set(basic).text), "point")) == 5


def test_text_from_the_set_is_escaped():
    svg = plot_set("{ [i] : 0 <= i < 2 }")
    assert "&lt;" in svg.text and "<= i" not in svg.text
    parse(svg.text)


@pytest.mark.parametrize("text, kwargs, message", [
    ("[n] -> { [i] : 0 <= i < n }", {}, "params="),
    ("{ [i] : i >= 0 }", {}, "unbounded"),
    ("{ [i] : 0 <= i < }", {}, "cannot read"),
])
def test_what_cannot_be_drawn_is_refused_with_a_reason(text, kwargs, message):
    with pytest.raises(ArgumentValueError, match=message):
        plot_set(text, **kwargs)


def test_a_wrong_argument_type_is_refused():
    with pytest.raises(ArgumentTypeError, match="plot_set"):
        plot_set(42)


def test_params_and_slice_must_be_dicts():
    with pytest.raises(ArgumentTypeError, match="params"):
        plot_set("{ [i] : 0 <= i < 2 }", params=[("n", 1)])
    with pytest.raises(ArgumentTypeError, match="slice"):
        plot_set("{ [i] : 0 <= i < 2 }", slice=3)
