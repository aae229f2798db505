"""Every picture holds in any theme and at any size: its own background and text
colours, a size within the cap, a viewBox; large inputs summarised, more than two
axes as small multiples."""

import re

import pytest
from viz_support import SVG_NS, parse, with_class

import analyses
import polypad as pp
from polypad import viz
from polypad.viz.svg import COLORS, MAX_HEIGHT, MAX_WIDTH

SHIFT = '''
@T.prim_func
def shift(A: T.Buffer(({n1},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.serial({n}):
        A[i] = 1.0
    for j in T.serial({n}):
        B[j] = A[j + 1]
'''
TILES = pp.IndexMap(lambda i: [i // 4, i % 4])


def shift(n: int):
    return pp.parse(SHIFT.format(n=n, n1=n + 1))


def fill(n: int):
    return pp.parse(f'''
@T.prim_func
def fill(A: T.Buffer(({n},), "float32")):
    for i in T.serial({n - 3}):
        A[i] = 0.0
''')


def check_structure(text: str, *, limit: int = 200_000):
    """A picture that reads on any page: a background first, every text coloured and
    haloed, shown within the cap, the full drawing in its viewBox, short text."""
    assert len(text) < limit, len(text)
    root = parse(text)
    width, height = float(root.get("width")), float(root.get("height"))
    assert 0 < width <= MAX_WIDTH and 0 < height <= MAX_HEIGHT
    box = [float(v) for v in root.get("viewBox").split()]
    assert box[:2] == [0, 0] and box[2] >= width - 0.01 and box[3] >= height - 0.01
    # the aspect ratio is kept when the picture is scaled down to the cap
    assert abs(box[2] / box[3] - width / height) < 0.01 * box[2] / box[3]
    shapes = [e for e in root if e.tag in (f"{SVG_NS}rect", f"{SVG_NS}g")]
    background = shapes[0]
    assert background.get("class") == "background"
    assert background.get("fill") == COLORS["background"]
    assert float(background.get("width")) >= box[2] - 1
    texts = list(root.iter(f"{SVG_NS}text"))
    assert texts, "a picture says what it shows"
    for t in texts:
        assert t.get("fill") not in (None, "", "none", "currentColor"), t.attrib
        if t.get("class") != "cell-label":  # on its own cell, no arrow crosses it
            assert t.get("stroke") == COLORS["background"] and t.get("paint-order") == "stroke"
    return root


@pytest.mark.parametrize("n", [10, 100, 10_000])
def test_a_set_of_any_length_is_readable(n):
    root = check_structure(viz.plot_set(f"{{ [i] : 0 <= i < {n} and i % 7 != 3 }}").text)
    if n <= 100:  # every point a dot
        assert len(with_class(root, "point")) == n - len(range(3, n, 7))
    else:  # a density: shaded blocks, ticks at both ends
        assert with_class(root, "bin") and not with_class(root, "point")
        last = max(k for k in range(n) if k % 7 != 3)
        assert {"0", str(last)} <= {t.text for t in with_class(root, "tick")}


def test_a_64_by_64_set_is_dots_within_the_cap():
    svg = viz.plot_set("{ [i, j] : 0 <= i, j < 64 and i + j != 70 }")
    root = check_structure(svg.text, limit=150_000)
    [dots] = with_class(root, "points")  # one path of 4096 - 57 round dots
    assert dots.get("d").count("M") == 64 * 64 - 57
    ticks = sorted({int(t.text) for t in with_class(root, "tick")})
    assert ticks[0] == 0 and ticks[1] >= 2 and ticks[-1] < 64  # every k-th, not every one
    assert svg.width <= MAX_WIDTH and svg.height <= MAX_HEIGHT


def test_a_large_set_is_a_density_of_blocks_with_its_count():
    root = check_structure(viz.plot_set("{ [i, j] : 0 <= i < 1000 and 0 <= j < i }").text)
    notes = [t.text for t in with_class(root, "note")]
    assert notes == ["499500 points in blocks of 16 x 16",
                     "darker where more of a block is in the set"]


@pytest.mark.parametrize("n", [10, 100, 10_000])
def test_a_layout_of_any_length_is_readable(n):
    root = check_structure(viz.plot_layout(TILES, (n,)).text)
    pads = (-n) % 4
    assert len(with_class(root, "cell", "padding")) == pads
    if n <= 100:  # every element drawn: the 1-D buffer wraps into rows of 16
        assert len(with_class(root, "logical")) == n
        ticks = {t.text for t in with_class(root, "tick")}
        assert n < 24 or {"0", "16", "96"} <= ticks
    else:  # a window, each run of rows left out one gap saying what it hides
        gaps = [g.find(f"{SVG_NS}title").text for g in with_class(root, "gap", "rows")]
        assert "rows 30..2497: no padding" in gaps
        assert len(with_class(root, "logical")) <= 16 * 16


def test_the_window_of_a_large_layout_holds_its_padding():
    root = check_structure(viz.plot_layout(TILES, (10_001,)).text)
    padding = [c.find(f"{SVG_NS}title").text for c in with_class(root, "padding")]
    assert padding[0] == "transformed (2500,1): padding" and len(padding) == 3


@pytest.mark.parametrize("n", [10, 100, 10_000])
def test_a_touched_region_of_any_length_is_readable(n):
    touched = analyses.domain_touched(fill(n), "A", "write")
    root = check_structure(viz.plot_touched(touched).text)
    assert [t.text for t in with_class(root, "caption")][0] == \
        f"A[{n}]: write {n - 3} of {n} elements"
    if n > 100:  # the window shows where the touched region ends
        untouched = [c.find(f"{SVG_NS}title").text for c in with_class(root, "cell")
                     if "touched" not in c.get("class")]
        assert untouched == [f"A[{k}]" for k in range(n - 3, n)]


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_dependences_of_any_length_are_a_window_with_every_pair_counted(n):
    root = check_structure(viz.plot_dependences(shift(n)).text)
    flow = with_class(root, "arrow", "flow")
    assert len(flow) == min(n - 1, 31)
    [legend] = [t.text for t in with_class(root, "legend") if (t.text or "").startswith("flow")]
    assert legend == (f"flow ({n - 1})" if n <= 32 else f"flow (31 of {n - 1} drawn)")


def test_a_3d_set_is_small_multiples_without_arguments():
    root = check_structure(viz.plot_set("{ S[i, j, k] : 0 <= i < 3 and 0 <= j < 4 and "
                                        "0 <= k < 5 and k <= i + j }").text)
    captions = [t.text for t in with_class(root, "caption")]
    assert captions == ["S[i, j, k]: one panel per i", "i = 0", "i = 1", "i = 2"]
    assert len(with_class(root, "point")) == 10 + 14 + 17


def test_small_multiples_stop_at_twelve_panels_and_say_so():
    root = check_structure(viz.plot_set("{ [i, j, k] : 0 <= i < 30 and 0 <= j, k < 3 }").text)
    panels = [t.text for t in with_class(root, "caption")][1:]
    assert len(panels) == 12 and panels[-1] == "i = 29"
    [note] = [t.text for t in with_class(root, "note")]
    assert note.startswith("12 of 30 panels drawn") and "slice=" in note


def test_a_three_axis_map_is_small_multiples_without_arguments():
    m = pp.IndexMap(lambda i, j: [j // 4, i, j % 4])
    root = check_structure(viz.plot_layout(m, (5, 6)).text)
    assert [t.text for t in with_class(root, "caption")][-2:] == ["[0, :, :]", "[1, :, :]"]
    assert len(with_class(root, "cell")) == 40 and len(with_class(root, "padding")) == 10
    # and the rich display draws it too, with no slice to pass
    html = m.relation((5, 6))._repr_html_()
    assert "(no picture" not in html and html.count('class="cell padding"') == 10


def test_the_caption_names_the_fixed_parameters_and_the_slice():
    root = parse(viz.plot_set("[n] -> { S[i, j, k] : 0 <= i, k < 3 and 0 <= j < n }",
                              params={"n": 6}, slice={"k": 2}).text)
    assert [t.text for t in with_class(root, "caption")] == ["S[i, j] at k = 2; n = 6"]


def test_labels_are_large_enough_to_read():
    root = parse(viz.plot_layout(TILES, (14,)).text)
    sizes = {t.get("class"): float(t.get("font-size")) for t in root.iter(f"{SVG_NS}text")}
    assert sizes["tick"] >= 11 and sizes["caption"] >= 13 and sizes["legend"] >= 12


def test_flow_anti_and_output_arrows_between_the_same_instances_stay_apart():
    acc = pp.parse('''
@T.prim_func
def acc(X: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    for i in T.serial(4):
        s[0] = s[0] + X[i]
''')
    root = parse(viz.plot_dependences(acc).text)
    first = {}
    for kind in ("flow", "anti", "output"):
        arrow = with_class(root, "arrow", kind)[0]
        first[kind] = arrow.get("d") or "line"
    assert first["flow"] == "line"  # straight; the other two bend to opposite sides
    bends = [float(re.search(r"Q [\d.]+ ([\d.]+)", first[k]).group(1))
             for k in ("anti", "output")]
    start = float(with_class(root, "arrow", "flow")[0].get("y1"))
    assert bends[0] > start + 5 and bends[1] < start - 5


def test_display_html_sets_text_colour_wherever_it_sets_a_background():
    f = shift(6)
    sch = pp.Schedule(f)
    shown = [f, sch, analyses.dependences(f), analyses.can_merge_loops(f, "i", "j"),
             analyses.domain_touched(f, "A"), TILES.relation((14,)),
             analyses.can_merge_loops(shift(6), "i", "j").counterexample]
    for obj in shown:
        html = obj._repr_html_()
        for style in re.findall(r'<(?:div|pre|table|td|th)[^>]*style="([^"]*)"', html):
            if "background" in style:
                assert re.search(r"(^|;)color:", style), style
        assert html.startswith("<div style=") or html.startswith("<pre style=")
        assert "color:var(--jp-content-font-color1, #1f2328)" in html
