"""``interact_set``: sliders where ipywidgets is installed, the static picture where not."""

import sys

import pytest
from viz_support import parse, with_class

from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.viz import Svg, interact_set, plot_set

CUBE = "[n] -> { S[i, j, k] : 0 <= i < n and 0 <= j < n and 0 <= k <= j }"


def test_without_ipywidgets_it_is_the_picture_at_the_first_values(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets fails
    shown = interact_set(CUBE, params={"n": range(3, 8)}, slice={"k": range(1, 3)})
    assert isinstance(shown, Svg)
    assert shown.text == plot_set(CUBE, {"n": 3}, {"k": 1}).text
    # j >= k = 1 leaves 3 * 2 points
    assert len(with_class(parse(shown.text), "point")) == 6


def test_with_nothing_to_slide_it_is_plot_set():
    assert interact_set(CUBE, params={"n": 2}, slice={"k": 0}).text == \
        plot_set(CUBE, {"n": 2}, {"k": 0}).text


def test_wrong_arguments_raise_before_any_widget():
    with pytest.raises(ArgumentValueError, match=r"params\['n'\] is an empty range"):
        interact_set(CUBE, params={"n": range(3, 3)})
    with pytest.raises(ArgumentTypeError, match="an int or a range of ints"):
        interact_set(CUBE, params={"n": [1, 2]})
    with pytest.raises(ArgumentValueError, match="symbolic parameter 'n'"):
        interact_set(CUBE, slice={"k": range(2)})


class Recorder:
    """Stands in for IPython's ``display``: records what is shown, and each update of
    a display handle."""

    def __init__(self):
        self.shown, self.updates = [], []

    def __call__(self, obj, raw=False, display_id=None):
        self.shown.append((obj, raw))
        recorder = self

        class Handle:
            def update(self, bundle, raw=False):
                recorder.updates.append(bundle)

        return Handle() if display_id else None


def test_with_ipywidgets_a_slider_redraws_the_picture(monkeypatch):
    widgets = pytest.importorskip("ipywidgets")
    import IPython.display

    shown = interact_set(CUBE, params={"n": range(2, 6)}, slice={"k": range(0, 2)})
    n, k = shown.sliders
    assert isinstance(shown.controls, widgets.VBox) and shown.controls.children == (n, k)
    assert (n.description, n.min, n.max, k.description) == ("n", 2, 5, "k")
    assert shown.picture.text == plot_set(CUBE, {"n": 2}, {"k": 0}).text
    # Shown in a notebook: the sliders, then the picture as an output of its own.
    recorder = Recorder()
    monkeypatch.setattr(IPython.display, "display", recorder)
    shown._ipython_display_()
    [(controls, _), (bundle, raw)] = recorder.shown
    assert controls is shown.controls and raw
    assert bundle["image/svg+xml"] == plot_set(CUBE, {"n": 2}, {"k": 0}).text
    assert "interact_set sliders" in bundle["text/plain"]
    n.value = 4  # the stored picture is replaced in place
    assert recorder.updates[-1]["image/svg+xml"] == plot_set(CUBE, {"n": 4}, {"k": 0}).text
    assert shown.values() == {"n": 4, "k": 0}
    # unbounded at n = 3: that value shows why there is no picture, and never raises
    box = interact_set("[n] -> { [i] : 0 <= i < n or (n = 3 and i >= 0) }",
                       params={"n": range(1, 4)})
    box.sliders[0].value = 3
    assert box.picture is None and "(no picture:" in box.html and "unbounded" in box.html
    box.sliders[0].value = 2
    assert box.picture.text.count('class="point"') == 2


def test_static_pictures_asked_for_by_the_environment(monkeypatch):
    # What scripts/execute_notebooks.py sets: the stored outputs need no JavaScript.
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv("POLYPAD_STATIC_PICTURES", "1")
    shown = interact_set(CUBE, params={"n": range(3, 8)}, slice={"k": range(1, 3)})
    assert isinstance(shown, Svg)
    assert shown.text == plot_set(CUBE, {"n": 3}, {"k": 1}).text
