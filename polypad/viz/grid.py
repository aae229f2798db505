"""Panels: one tuple's points laid out on a grid, with ticks and a caption.

Axes read like an array: with two dimensions ``[a, b]`` the first one runs
down (rows) and the second across (columns), as a buffer is printed; a
one-dimensional set is one row.  :func:`draw_panel` returns where each point
landed, so that dependences can draw arrows between panels.
"""

from __future__ import annotations

from dataclasses import dataclass

from .points import Points
from .svg import COLORS, Canvas

STEP = 26.0  # pixels between neighbouring integer points
LEFT = 34.0  # room for the row ticks
TOP = 34.0  # room for the caption and the column ticks


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


def caption(points: Points) -> str:
    """``S0[i, j]`` with the slice values: ``S0[i, j] at k=1``."""
    text = f"{points.name}[{', '.join(points.axes)}]"
    if points.fixed:
        text += " at " + ", ".join(f"{k}={v}" for k, v in points.fixed)
    return text


def draw_frame(canvas: Canvas, left: float, top: float, lo, hi, axes: tuple[str, ...],
               title: str, step: float = STEP) -> Panel:
    """Caption, tick numbers and axis names of a panel; returns its geometry."""
    panel = Panel(left + LEFT, top + TOP, lo, hi, step)
    canvas.text(left, top + 12, title, size=12, weight="bold", cls="caption")
    every = max(1, (hi[1] - lo[1] + 1) // 20)  # keep ticks legible on long axes
    for col in range(lo[1], hi[1] + 1):
        if axes and (col - lo[1]) % every == 0:  # a 0-d set has no axis to mark
            x, _ = panel.center((lo[0], col))
            canvas.text(x, panel.top - 4, str(col), size=9, anchor="middle", cls="tick")
    if len(axes) == 2:
        every = max(1, (hi[0] - lo[0] + 1) // 20)
        for row in range(lo[0], hi[0] + 1):
            if (row - lo[0]) % every == 0:
                _, y = panel.center((row, lo[1]))
                canvas.text(panel.left - 4, y + 3, str(row), size=9, anchor="end", cls="tick")
        canvas.text(left, panel.top - 4, f"{axes[0]}↓", size=9, cls="axis")
    if axes:
        canvas.text(panel.right + 4, panel.top - 4, f"{axes[-1]}→", size=9, cls="axis")
    return panel


def draw_panel(canvas: Canvas, points: Points, left: float, top: float, *,
               title: str | None = None, highlight=(), extra=()) -> Panel:
    """One tuple's points: a faint dot at every lattice position of the bounding
    box (so that holes show), a filled ``point`` for each member, ``highlight``ed
    points in red.  ``extra`` coordinates widen the box without being drawn."""
    lo, hi = bounds(points.points, extra)
    panel = draw_frame(canvas, left, top, lo, hi, points.axes, title or caption(points))
    members = set(points.points)
    for row in range(lo[0], hi[0] + 1):
        for col in range(lo[1], hi[1] + 1):
            coord = (row, col) if len(points.axes) == 2 else (col,) if points.axes else ()
            if coord not in members:
                x, y = panel.center(coord)
                canvas.circle(x, y, 1.5, cls="lattice", fill="#bbbbbb")
    marked = set(highlight)
    for coord in points.points:
        x, y = panel.center(coord)
        label = f"{points.name}({', '.join(f'{a}={v}' for a, v in zip(points.axes, coord))})"
        if coord in marked:
            canvas.circle(x, y, 6, cls="point highlight", fill=COLORS["highlight"], title=label)
        else:
            canvas.circle(x, y, 4.5, cls="point", fill=COLORS["point"], title=label)
    return panel


def draw_ticks(canvas: Canvas, left: float, top: float, cols: int, rows: int = 0, *,
               cell: float) -> None:
    """Column numbers above a grid of ``cell``-sized cells whose corner is at
    (``left``, ``top``), and row numbers left of it when ``rows`` is given."""
    for col in range(cols):
        canvas.text(left + (col + 0.5) * cell, top - 4, str(col), size=9, anchor="middle",
                    cls="tick")
    for row in range(rows):
        canvas.text(left - 4, top + (row + 0.6) * cell, str(row), size=9, anchor="end",
                    cls="tick")
