"""``interact_set``: a set's picture with a slider per symbolic parameter or slice.

ipywidgets is optional (the pictures must not need it).  Where it is
installed, ``interact_set`` returns a :class:`SetSliders`: shown in a
notebook it makes two outputs, the sliders (a widget, which only a live
notebook's JavaScript can draw) and beside them the picture itself, a plain
SVG output that each slider move replaces in place (an IPython display
handle, no JavaScript).  An HTML export or a static viewer, which cannot
draw the widget, still shows the stored picture.  Where ipywidgets is not
installed, or nothing varies, the call returns the static picture at the
first value of every range.  With the environment variable
``POLYPAD_STATIC_PICTURES`` set, the static picture is returned even where
ipywidgets is installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from polypad.arguments import expect
from polypad.errors import ArgumentValueError, PolypadError

from .display import _picture
from .points import as_union_set
from .sets import plot_set
from .svg import Svg


def _values(values: Mapping | None, param: str, where: str) -> tuple[dict, dict]:
    """``values`` split into the fixed ones (ints) and the ones to slide (ranges)."""
    expect(values, (Mapping, None), param, where, what="a dict of ints or ranges")
    fixed, ranges = {}, {}
    for name, value in (values or {}).items():
        if isinstance(value, range):
            if not value:
                raise ArgumentValueError(f"{where}: {param}[{name!r}] is an empty range")
            ranges[name] = value
        else:
            expect(value, int, f"{param}[{name!r}]", where, what="an int or a range of ints")
            fixed[name] = value
    return fixed, ranges


def interact_set(set, params: Mapping | None = None, slice: Mapping | None = None, *,
                 title: str | None = None) -> Svg | Any:
    """:func:`~polypad.viz.plot_set` with a slider for every parameter or slice
    dimension given a ``range``; an ``int`` fixes it as in ``plot_set``.

    Returns a :class:`SetSliders` (the sliders, and the picture stored beside
    them) when ipywidgets is installed and something varies; otherwise the
    static :class:`Svg` drawn at the first value of each range.  The first
    picture is drawn before anything is returned, so a wrong argument raises as
    ``plot_set`` does; a later slider value that cannot be drawn (an unbounded
    set) shows a line saying why.

    >>> viz.interact_set("[n] -> { S[i, j, k] : 0 <= i, j, k < n }",
    ...                  params={"n": range(1, 8)}, slice={"k": range(0, 7)})
    """
    where = "interact_set"
    union = as_union_set(set, where)
    fixed_params, param_ranges = _values(params, "params", where)
    fixed_slice, slice_ranges = _values(slice, "slice", where)

    def draw(chosen: dict) -> Svg:
        return plot_set(union, {**fixed_params, **{n: chosen[("params", n)]
                                                   for n in param_ranges}},
                        {**fixed_slice, **{n: chosen[("slice", n)] for n in slice_ranges}},
                        title=title)

    ranges = {**{("params", n): r for n, r in param_ranges.items()},
              **{("slice", n): r for n, r in slice_ranges.items()}}
    first = draw({key: r[0] for key, r in ranges.items()})
    if not ranges or os.environ.get("POLYPAD_STATIC_PICTURES"):
        return first
    try:
        import ipywidgets
    except ImportError:
        return first
    sliders = {key: ipywidgets.IntSlider(value=r[0], min=min(r), max=max(r), step=abs(r.step),
                                         description=str(key[1]), continuous_update=False)
               for key, r in ranges.items()}
    return SetSliders(sliders, ipywidgets.VBox(list(sliders.values())), draw, first,
                      title or str(union))


class SetSliders:
    """The sliders of :func:`interact_set` and the picture they redraw.

    ``sliders`` are the ``IntSlider`` widgets (parameters first, then slice
    dimensions), ``controls`` the box holding them, ``picture`` the current
    :class:`Svg` (None while the values chosen cannot be drawn; ``html`` then
    says why).  In a notebook it shows as the sliders and, as a separate
    output, the picture: an export without JavaScript keeps the picture.
    """

    def __init__(self, sliders: dict, controls, draw, first: Svg, title: str):
        self._keys = list(sliders)
        self.sliders = tuple(sliders.values())
        self.controls = controls
        self.picture: Svg | None = first
        self.html = f"<div>{first.text}</div>"
        self._draw = draw
        self._title = title
        self._handles: list = []
        for slider in self.sliders:
            slider.observe(self._redraw, names="value")

    def values(self) -> dict[str, int]:
        """The value of each slider, by parameter or dimension name."""
        return {key[1]: slider.value for key, slider in zip(self._keys, self.sliders)}

    def _redraw(self, _change=None) -> None:
        chosen = {key: slider.value for key, slider in zip(self._keys, self.sliders)}
        try:
            self.picture = self._draw(chosen)
            self.html = f"<div>{self.picture.text}</div>"
        except PolypadError:
            self.picture = None
            self.html = _picture(lambda: self._draw(chosen))
        for handle in self._handles:
            handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        """The picture as a display bundle: SVG where there is one, else the note."""
        text = {"text/plain": repr(self)}
        if self.picture is not None:
            return {"image/svg+xml": self.picture.text, **text}
        return {"text/html": self.html, **text}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.controls)
        self._handles.append(display(self._bundle(), raw=True, display_id=True))

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        shown = ", ".join(f"{k} = {v}" for k, v in self.values().items())
        return f"<interact_set sliders over {self._title} at {shown}>"
