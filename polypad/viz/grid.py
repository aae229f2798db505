"""Panels: one tuple's points laid out on a grid, with ticks and a caption.

Axes read like an array: with two dimensions ``[a, b]`` the first one runs
down (rows) and the second across (columns), as a buffer is printed; a
one-dimensional set is one row.  The spacing shrinks (down to ``MIN_STEP``)
so that a panel fits the room it is given, and tick numbers are drawn every
1, 2, 5, 10, ... so that they never touch.  :func:`draw_panel` returns where
each point landed, so that dependences can draw arrows between panels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .points import Points
from .svg import CAPTION, COLORS, TICK, Canvas, text_width

STEP = 26.0  # pixels between neighbouring integer points, when there is room
MIN_STEP = 7.0  # below this a panel is drawn as a density (polypad.viz.density)
TOOLTIPS = 1024  # points drawn one element each, with a tooltip; beyond, one path


@dataclass(frozen=True)
class Panel:
    """Where a panel's grid sits: ``lo`` is the smallest (row, column) drawn."""

    left: float
    top: float
    lo: tuple[int, int]
    hi: tuple[int, int]
    step: float = STEP

    def center(self, coord: tuple[int, ...]) -> tuple[float, float]:
        """The pixel centre of a point given in the set's own coordinates."""
        row, col = as_row_col(coord)
        return (self.left + (col - self.lo[1] + 0.5) * self.step,
                self.top + (row - self.lo[0] + 0.5) * self.step)

    @property
    def bottom(self) -> float:
        return self.top + (self.hi[0] - self.lo[0] + 1) * self.step

    @property
    def right(self) -> float:
        return self.left + (self.hi[1] - self.lo[1] + 1) * self.step


def as_row_col(coord: tuple[int, ...]) -> tuple[int, int]:
    """(row, column) of a point with zero, one or two coordinates."""
    if len(coord) == 2:
        return coord[0], coord[1]
    if len(coord) == 1:
        return 0, coord[0]
    return 0, 0


def bounds(coords, extra=()) -> tuple[tuple[int, int], tuple[int, int]]:
    """The smallest and largest (row, column) over ``coords`` and ``extra``."""
    cells = [as_row_col(c) for c in (*coords, *extra)] or [(0, 0)]
    rows, cols = [r for r, _ in cells], [c for _, c in cells]
    return (min(rows), min(cols)), (max(rows), max(cols))


def fit_step(lo, hi, width: float, height: float) -> float:
    """The spacing at which the box ``lo``..``hi`` fits ``width`` x ``height`` pixels,
    at most ``STEP`` (below ``MIN_STEP`` the caller draws a density instead)."""
    rows, cols = hi[0] - lo[0] + 1, hi[1] - lo[1] + 1
    return min(STEP, width / cols, height / rows)


def tick_every(step: float, widest: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... whose ticks, ``step`` pixels per unit,
    leave room for labels ``widest`` pixels wide."""
    for scale in (10 ** k for k in range(12)):
        for base in (1, 2, 5):
            if base * scale * step >= widest + 4:
                return base * scale
    return 10 ** 12


def caption(points: Points) -> str:
    """``S0[i, j]`` with the slice values and the parameters: ``S0[i, j] at k = 1; n = 5``."""
    text = f"{points.name}[{', '.join(points.axes)}]"
    if points.fixed:
        text += " at " + ", ".join(f"{k} = {v}" for k, v in points.fixed)
    if points.params:
        text += "; " + ", ".join(f"{k} = {v}" for k, v in points.params)
    return text


def row_label_width(lo, hi, axes) -> float:
    """The room the row numbers of a panel take on its left."""
    if len(axes) < 2:
        return 6.0
    return max(text_width(str(lo[0]), TICK), text_width(str(hi[0]), TICK),
               text_width(axes[0] + " ↓", TICK)) + 8


def draw_track(canvas: Canvas, left: float, top: float, lo, hi, axis: str, title: str,
               step: float, *, ticks: str | None, title_width: float) -> Panel:
    """A one-row panel drawn as a track: the caption on its left, the column numbers
    ``"above"`` or ``"below"`` it (or none), so that arrows between tracks stacked
    one under the other cross no label."""
    panel = Panel(left + title_width, top + (TICK + 10 if ticks == "above" else 0), lo, hi,
                  step)
    _, y = panel.center((lo[0], lo[1]))
    canvas.text(left, y + CAPTION * 0.35, title, size=CAPTION, weight="bold", cls="caption")
    if ticks:
        every = tick_every(step, max(text_width(str(lo[1]), TICK), text_width(str(hi[1]), TICK)))
        ty = panel.top - 5 if ticks == "above" else panel.bottom + TICK + 3
        for col in range(lo[1], hi[1] + 1):
            if col % every == 0:
                x, _ = panel.center((lo[0], col))
                canvas.text(x, ty, str(col), size=TICK, anchor="middle", cls="tick",
                            color=COLORS["muted"])
        canvas.text(panel.right + 4, ty, f"{axis} →", size=TICK, cls="axis",
                    color=COLORS["muted"])
    return panel


def draw_frame(canvas: Canvas, left: float, top: float, lo, hi, axes: tuple[str, ...],
               title: str, step: float = STEP) -> Panel:
    """Caption, tick numbers and axis names of a panel; returns its geometry."""
    panel = Panel(left + row_label_width(lo, hi, axes), top + CAPTION + TICK + 14, lo, hi,
                  step)
    canvas.text(left, top + CAPTION, title, size=CAPTION, weight="bold", cls="caption")
    if axes:  # a 0-d set has no axis to mark
        every = tick_every(step, max(text_width(str(lo[1]), TICK), text_width(str(hi[1]), TICK)))
        for col in range(lo[1], hi[1] + 1):
            if col % every == 0:
                x, _ = panel.center((lo[0], col))
                canvas.text(x, panel.top - 5, str(col), size=TICK, anchor="middle",
                            cls="tick", color=COLORS["muted"])
        canvas.text(panel.right + 4, panel.top - 5, f"{axes[-1]} →", size=TICK, cls="axis",
                    color=COLORS["muted"])
    if len(axes) == 2:
        every = tick_every(step, TICK)
        for row in range(lo[0], hi[0] + 1):
            if row % every == 0:
                _, y = panel.center((row, lo[1]))
                canvas.text(panel.left - 5, y + TICK * 0.35, str(row), size=TICK,
                            anchor="end", cls="tick", color=COLORS["muted"])
        canvas.text(left, panel.top - 5, f"{axes[0]} ↓", size=TICK, cls="axis",
                    color=COLORS["muted"])
    return panel


def draw_panel(canvas: Canvas, points: Points, left: float, top: float, *,
               title: str | None = None, highlight=(), extra=(), lo=None, hi=None,
               step: float = STEP, track: dict | None = None) -> Panel:
    """One tuple's points: a faint dot at every lattice position of the bounding
    box (so that holes show), a filled ``point`` for each member, ``highlight``ed
    points in red.  ``extra`` coordinates widen the box without being drawn;
    ``lo``/``hi`` give the box outright (small multiples share one).  ``track``
    (the keywords of :func:`draw_track`) draws a one-row panel as a track."""
    if lo is None or hi is None:
        lo, hi = bounds(points.points, extra)
    if track is not None:
        panel = draw_track(canvas, left, top, lo, hi, points.axes[-1] if points.axes else "",
                           title or caption(points), step, **track)
    else:
        panel = draw_frame(canvas, left, top, lo, hi, points.axes, title or caption(points),
                           step)
    members = set(points.points)
    dot, faint = min(4.5, 0.2 * step), min(1.6, 0.08 * step)
    holes = [panel.center((row, col) if len(points.axes) == 2 else (col,) if points.axes
                          else ())
             for row in range(lo[0], hi[0] + 1) for col in range(lo[1], hi[1] + 1)
             if ((row, col) if len(points.axes) == 2 else (col,) if points.axes else ())
             not in members]
    marked = set(highlight)
    if len(points.points) > TOOLTIPS:
        # One path of round dots per kind: thousands of circles would make the text huge.
        _dots(canvas, holes, faint, "lattice", COLORS["lattice"])
        _dots(canvas, [panel.center(c) for c in points.points if c not in marked], dot,
              "points", COLORS["point"])
        for coord in points.points:
            if coord in marked:
                canvas.circle(*panel.center(coord), dot + 2, cls="point highlight",
                              fill=COLORS["highlight"])
        return panel
    for x, y in holes:
        canvas.circle(x, y, faint, cls="lattice", fill=COLORS["lattice"])
    for coord in points.points:
        x, y = panel.center(coord)
        label = f"{points.name}({', '.join(f'{a}={v}' for a, v in zip(points.axes, coord))})"
        if coord in marked:
            canvas.circle(x, y, dot + 2, cls="point highlight", fill=COLORS["highlight"],
                          title=label)
        else:
            canvas.circle(x, y, dot, cls="point", fill=COLORS["point"], title=label)
    return panel


def _dots(canvas: Canvas, centers, radius: float, cls: str, color: str) -> None:
    """Many dots as one path of zero-length round-capped segments."""
    if not centers:
        return
    d = "".join(f"M{x:.1f} {y:.1f}h0" for x, y in centers)
    canvas.path(d, cls=cls, color=color, width=2 * radius, linecap="round",
                bounds=(max(x for x, _ in centers) + radius,
                        max(y for _, y in centers) + radius), layer="shapes")


def panel_size(lo, hi, axes, step: float) -> tuple[float, float]:
    """The width and height :func:`draw_frame` gives a panel, labels included."""
    rows, cols = hi[0] - lo[0] + 1, hi[1] - lo[1] + 1
    axis = text_width(f"{axes[-1]} →", TICK) + 6 if axes else 0
    return (row_label_width(lo, hi, axes) + cols * step + axis,
            CAPTION + TICK + 14 + rows * step)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b else 0


def nice(value: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, ... at least ``value``."""
    for scale in (10 ** k for k in range(12)):
        for base in (1, 2, 5):
            if base * scale >= value:
                return base * scale
    return math.ceil(value)
