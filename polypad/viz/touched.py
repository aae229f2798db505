"""``plot_touched``: what :func:`analyses.domain_touched` found, on the buffer's grid.

A long 1-D buffer wraps into rows; a large one is drawn as a window around
the touched region's edges (the rows where touched and untouched meet), the
rows left out summarised; a buffer of more than two axes is one panel per
value of its leading axes.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

from .cells import Cell, buffer_view, draw_buffer
from .multiples import arrange, choose
from .points import enumerate_points
from .svg import CAPTION, COLORS, LABEL, Canvas, Svg
from .window import changes

MAX_ELEMENTS = 1 << 18  # a buffer larger than this is not enumerated


def int_shape(buffer, params: Mapping[str, int], where: str) -> tuple[int, ...]:
    """The extents of ``buffer`` with symbolic ones taken from ``params``."""
    shape = []
    for extent in buffer.shape:
        if isinstance(extent, int):
            shape.append(extent)
        elif getattr(extent, "name", None) in params:
            shape.append(int(params[extent.name]))
        else:
            raise ArgumentValueError(f"{where}: the extent {extent} of {buffer.name} is "
                                     "symbolic; fix it with params={...}")
    return tuple(shape)


def plot_touched(touched, params: Mapping[str, int] | None = None) -> Svg:
    """Draw the buffer of ``touched`` (a ``domain_touched`` result) as a grid, the
    touched elements filled (class ``cell touched``), the others white (``cell``).

    ``params`` fixes the symbolic parameters, those of the shape included.  A
    buffer of more than two axes is drawn as one panel per value of its
    leading axes; a long or large one as a window around the touched region's
    edges, each run of rows left out saying how many of its elements are touched.
    """
    where = "plot_touched"
    if not (hasattr(touched, "set") and hasattr(touched, "buffer")):
        raise ArgumentTypeError(f"{where}: parameter touched takes what "
                                f"analyses.domain_touched returns, not {type(touched).__name__}")
    expect(params, (Mapping, None), "params", where, what="a dict of parameter values")
    params = dict(params or {})
    buffer = touched.buffer
    shape = int_shape(buffer, params, where)
    size = int(np.prod(shape)) if shape else 1
    if not shape:
        raise ArgumentValueError(f"{where}: {buffer.name} has no axes to draw")
    if size > MAX_ELEMENTS:
        raise ArgumentValueError(f"{where}: {buffer.name} has {size} elements, more than "
                                 f"the {MAX_ELEMENTS} a picture enumerates; fix smaller "
                                 "parameters")
    hit = np.zeros(shape, dtype=bool)
    outside = 0
    for p in enumerate_points(touched.set, params, where):
        if all(0 <= v < e for v, e in zip(p, shape)):
            hit[p] = True
        else:
            outside += 1
    canvas = Canvas()
    exact = "" if touched.exact else " (over-approximated)"
    fixed = "".join(f", {k} = {v}" for k, v in params.items())
    canvas.text(0, CAPTION, f"{buffer.name}{list(shape)}: {touched.kind} {int(hit.sum())} of "
                f"{size} elements{exact}{fixed}", size=CAPTION, weight="bold", cls="caption")

    def draw(lead: tuple[int, ...], left: float, top: float) -> tuple[float, float]:
        part = hit[lead] if lead else hit

        def look(index: tuple[int, ...]) -> Cell:
            full = (*lead, *index)
            name = f"{buffer.name}[{', '.join(map(str, full))}]"
            if part[index]:
                return Cell("cell touched", COLORS["point"], tooltip=name + " touched")
            return Cell("cell", COLORS["cell"], tooltip=name)

        view = buffer_view(part.shape)
        flat = np.zeros(view.rows * view.cols, dtype=np.int8)
        flat[: part.size] = part.reshape(-1)
        focus = changes(flat.reshape(view.rows, view.cols))

        def summary(hidden: range, v) -> str:
            count = int(flat.reshape(v.rows, v.cols)[hidden.start:hidden.stop].sum())
            return "all touched" if count == len(hidden) * v.cols else \
                "none touched" if count == 0 else f"{count} touched"

        title = f"{buffer.name}[{', '.join(map(str, lead))}, :, :]" if lead else None
        grid = draw_buffer(canvas, left, top, part.shape, look, rows_focus=focus,
                           title=title, summary=summary)
        return grid.right, grid.bottom

    lead_shape = shape[:-2] if len(shape) > 2 else ()
    keys = list(itertools.product(*map(range, lead_shape)))
    shown = choose(keys, [k for k in keys if hit[k].any()])
    bottom = arrange(canvas, shown, draw, top=CAPTION + 10, total=len(keys),
                     what=f"slices {buffer.name}[{', '.join(['k'] * len(lead_shape))}, :, :]")
    if outside:
        canvas.text(0, bottom + 18, f"{outside} touched element(s) lie outside the buffer",
                    size=LABEL, cls="note", color=COLORS["highlight"])
    return canvas.render(str(touched.set))
