"""``plot_touched``: what :func:`analyses.domain_touched` found, on the buffer's grid."""

from __future__ import annotations

from collections.abc import Mapping

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

from .grid import draw_ticks
from .points import set_points
from .svg import COLORS, Canvas, Svg

CELL = 26.0


def plot_touched(touched, params: Mapping[str, int] | None = None) -> Svg:
    """Draw the buffer of ``touched`` (a ``domain_touched`` result) as a grid, the
    touched elements filled (class ``cell touched``), the others white (``cell``).

    ``params`` fixes the symbolic parameters, those of the shape included; the
    buffer must have one or two axes.
    """
    where = "plot_touched"
    if not (hasattr(touched, "set") and hasattr(touched, "buffer")):
        raise ArgumentTypeError(f"{where}: parameter touched takes what "
                                f"analyses.domain_touched returns, not {type(touched).__name__}")
    expect(params, (Mapping, None), "params", where, what="a dict of parameter values")
    params = dict(params or {})
    buffer = touched.buffer
    shape = []
    for extent in buffer.shape:
        if isinstance(extent, int):
            shape.append(extent)
        elif getattr(extent, "name", None) in params:
            shape.append(int(params[extent.name]))
        else:
            raise ArgumentValueError(f"{where}: the extent {extent} of {buffer.name} is "
                                     "symbolic; fix it with params={...}")
    if not 1 <= len(shape) <= 2:
        raise ArgumentValueError(f"{where}: {buffer.name} has {len(shape)} axes; a picture "
                                 "shows one or two")
    points = set_points(touched.set, params, {}, where)
    hit = {(0, p[0]) if len(p) == 1 else p for p in points.points}
    rows, cols = (1, shape[0]) if len(shape) == 1 else tuple(shape)
    if rows * cols > 4096:
        raise ArgumentValueError(f"{where}: {buffer.name} is too large to draw")
    canvas = Canvas()
    exact = "" if touched.exact else " (over-approximated)"
    canvas.text(0, 12, f"{buffer.name}{shape}: {touched.kind} {len(hit)} of {rows * cols} "
                f"elements{exact}", size=12, weight="bold", cls="caption")
    left, top = 24.0, 34.0
    draw_ticks(canvas, left, top, cols, rows if len(shape) == 2 else 0, cell=CELL)
    for row in range(rows):
        for col in range(cols):
            name = f"{buffer.name}[{col if len(shape) == 1 else f'{row}, {col}'}]"
            if (row, col) in hit:
                canvas.rect(left + col * CELL, top + row * CELL, CELL, CELL,
                            cls="cell touched", fill=COLORS["point"], title=name + " touched")
            else:
                canvas.rect(left + col * CELL, top + row * CELL, CELL, CELL, cls="cell",
                            fill=COLORS["cell"], title=name)
    outside = [p for p in hit if not (p[0] < rows and p[1] < cols)]
    if outside:
        canvas.text(0, top + rows * CELL + 16, f"{len(outside)} touched element(s) lie "
                    "outside the buffer", size=10, cls="note", color=COLORS["highlight"])
    return canvas.render(str(touched.set))
