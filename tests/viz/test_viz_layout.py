"""plot_layout: the logical grid onto the transformed one, padding shaded."""

import pytest
from viz_support import parse, with_class

import polypad as pp
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.viz import plot_layout

SVG = "{http://www.w3.org/2000/svg}"


def test_fourteen_elements_in_rows_of_four_leave_two_padding_cells():
    root = parse(plot_layout(pp.IndexMap(lambda i: [i // 4, i % 4]), (14,)).text)
    cells = with_class(root, "cell")
    padding = with_class(root, "cell", "padding")
    assert len(cells) == 16 and len(padding) == 2
    assert len(with_class(root, "logical")) == 14
    tips = [c.find(f"{SVG}title").text for c in padding]
    assert tips == ["transformed (3,2): padding", "transformed (3,3): padding"]
    held = [c.find(f"{SVG}title").text for c in cells if c not in padding]
    assert held[0] == "transformed (0,0) holds logical 0"
    assert held[-1] == "transformed (3,1) holds logical 13"


def test_padding_cells_are_shaded_and_data_cells_are_not():
    root = parse(plot_layout(pp.IndexMap(lambda i: [i // 4, i % 4]), (14,)).text)
    fills = {c.get("fill") for c in with_class(root, "cell", "padding")}
    data = {c.get("fill") for c in with_class(root, "cell") if "padding" not in c.get("class")}
    assert len(fills) == 1 and not fills & data


def test_an_offset_map_pads_at_both_ends():
    root = parse(plot_layout(pp.IndexMap(lambda i: [(i + 2) // 8, (i + 2) % 8]), (14,)).text)
    assert len(with_class(root, "cell")) == 16
    assert len(with_class(root, "cell", "padding")) == 2


def test_a_transpose_has_no_padding():
    root = parse(plot_layout(pp.IndexMap(lambda i, j: [j, i]), (3, 5)).text)
    assert len(with_class(root, "cell")) == 15 and not with_class(root, "padding")
    assert len(with_class(root, "logical")) == 15


def test_three_transformed_axes_are_small_multiples_or_a_slice():
    m = pp.IndexMap(lambda i, j: [i, j // 4, j % 4])
    whole = parse(plot_layout(m, (2, 6)).text)  # one panel per value of the first axis
    assert [t.text for t in with_class(whole, "caption")] == \
        ["logical [2, 6]", "transformed [2, 2, 4]", "[0, :, :]", "[1, :, :]"]
    assert len(with_class(whole, "cell")) == 16 and len(with_class(whole, "padding")) == 4
    root = parse(plot_layout(m, (2, 6), slice={0: 1}).text)
    assert len(with_class(root, "cell")) == 8 and len(with_class(root, "cell", "padding")) == 2


@pytest.mark.parametrize("args, error", [
    ((lambda i: [i], (4,)), ArgumentTypeError),
    ((pp.IndexMap(lambda i: [i]), 4), ArgumentTypeError),
    ((pp.IndexMap(lambda i: [i]), (0,)), ArgumentValueError),
    ((pp.IndexMap(lambda i: [i]), (1 << 20,)), ArgumentValueError),
])
def test_bad_arguments_are_refused(args, error):
    with pytest.raises(error, match="plot_layout"):
        plot_layout(*args)


@pytest.mark.parametrize("bad", [{3: 0}, {0: 2}, {"0": 1}, {0: -1}])
def test_a_slice_outside_the_transformed_shape_is_refused(bad):
    with pytest.raises(ArgumentValueError, match="slice"):
        plot_layout(pp.IndexMap(lambda i, j: [i, j // 4, j % 4]), (2, 6), slice=bad)
