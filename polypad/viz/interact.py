"""``interact_set``: a set's picture with a slider per symbolic parameter or slice.

ipywidgets is optional (it is in no extra: the pictures must not need it).
Where it is installed the sliders redraw :func:`~polypad.viz.plot_set`'s
picture in place; where it is not, or nothing varies, the call returns the
static picture at the first value of every range, so a notebook that uses it
still runs, and still shows a picture in an HTML export (a widget's state
does not survive nbconvert without JavaScript).  With the environment
variable ``POLYPAD_STATIC_PICTURES`` set (``scripts/execute_notebooks.py``
sets it for the notebooks stored with their outputs), the static picture is
returned even where ipywidgets is installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from polypad.arguments import expect
from polypad.errors import ArgumentValueError

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

    Returns an ipywidgets box (the sliders over the picture) when ipywidgets is
    installed and something varies; otherwise the static :class:`Svg` drawn at
    the first value of each range.  The first picture is drawn before anything
    is returned, so a wrong argument raises as ``plot_set`` does; a later
    slider value that cannot be drawn (an unbounded set) shows a line saying why.

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
    picture = ipywidgets.HTML(value=f"<div>{first.text}</div>")

    def redraw(_change=None) -> None:
        chosen = {key: slider.value for key, slider in sliders.items()}
        picture.value = _picture(lambda: draw(chosen))

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    return ipywidgets.VBox([*sliders.values(), picture])
