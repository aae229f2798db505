"""Buffers drawn as grids of cells: touched regions, counterexamples, layouts.

:func:`draw_cells` draws the rows and columns a :func:`~polypad.viz.window.pick`
chose: a cell per element (its look given by the caller), the column numbers
above, the row numbers to the left, and one gap band per run of rows or
columns left out, saying what it hides.  :func:`buffer_view` turns a buffer
of one axis into rows (a long 1-D buffer wraps, each row labelled with its
first index) and one of two axes into itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .svg import CAPTION, COLORS, MAX_WIDTH, TICK, Canvas, text_width
from .window import Pick, pick, wrap_width

GAP = 18.0  # the height of a band of rows left out, the width of one of columns
MAX_ROWS = 20  # rows drawn before a window is taken
MAX_COLS = 32


@dataclass(frozen=True)
class Cell:
    """How one element is drawn: its class, fill, text inside and tooltip."""

    cls: str
    fill: str
    label: str = ""
    tooltip: str = ""
    stroke: str = COLORS["grid"]
    dash: str | None = None


@dataclass(frozen=True)
class BufferView:
    """A buffer of one or two axes as ``rows`` x ``cols`` drawn positions.

    ``index(r, c)`` is the element at a position (None past the end of a wrapped
    1-D buffer), ``position(index)`` where an element is drawn.
    """

    shape: tuple[int, ...]
    rows: int
    cols: int
    wrapped: bool = False

    def index(self, r: int, c: int) -> tuple[int, ...] | None:
        if len(self.shape) == 2:
            return (r, c)
        k = r * self.cols + c
        return (k,) if k < self.shape[0] else None

    def position(self, index: tuple[int, ...]) -> tuple[int, int]:
        if len(index) == 2:
            return index[0], index[1]
        return divmod(index[0], self.cols)

    def row_name(self, r: int) -> str:
        if len(self.shape) == 1:  # a row of a 1-D buffer is named by its first index
            return str(r * self.cols) if self.wrapped else ""
        return str(r)

    def col_name(self, c: int) -> str:
        return f"+{c}" if self.wrapped else str(c)

    def rows_text(self, hidden: range) -> str:
        """The elements a run of hidden rows holds, as ``A[32:96]`` would slice them."""
        if len(self.shape) == 2:
            return f"rows {hidden.start}..{hidden.stop - 1}"
        last = min(hidden.stop * self.cols, self.shape[0]) - 1
        return f"elements {hidden.start * self.cols}..{last}"


def buffer_view(shape: tuple[int, ...]) -> BufferView:
    """``shape`` (one or two extents) as drawn rows and columns."""
    if len(shape) == 2:
        return BufferView(tuple(shape), shape[0], shape[1])
    width = wrap_width(shape[0])
    return BufferView(tuple(shape), math.ceil(shape[0] / width), width,
                      wrapped=width < shape[0])


@dataclass
class Grid:
    """Where :func:`draw_cells` put the cells: ``x[c]`` and ``y[r]`` are the left
    and top edges of drawn column ``c`` and row ``r``."""

    cell: float
    x: dict[int, float] = field(default_factory=dict)
    y: dict[int, float] = field(default_factory=dict)
    left: float = 0.0
    top: float = 0.0
    right: float = 0.0
    bottom: float = 0.0

    def center(self, r: int, c: int) -> tuple[float, float] | None:
        if r not in self.y or c not in self.x:
            return None
        return self.x[c] + self.cell / 2, self.y[r] + self.cell / 2


def _place(chosen: Pick, start: float, cell: float) -> tuple[dict[int, float],
                                                             list[tuple[range, float]], float]:
    """Edges of the drawn indices and of the gaps along one axis, and where it ends."""
    at, gaps, pos = {}, [], start
    for k in chosen:
        if isinstance(k, range):
            gaps.append((k, pos))
            pos += GAP
        else:
            at[k] = pos
            pos += cell
    return at, gaps, pos


def cell_size(columns: int, budget: float, *, largest: float = 30.0,
              smallest: float = 16.0) -> float:
    """The side of a cell so that ``columns`` of them fit in ``budget`` pixels."""
    return max(smallest, min(largest, budget / max(columns, 1)))


def grid_width(view_cols: Pick, cell: float) -> float:
    """The width :func:`draw_cells` takes for the columns ``view_cols``, labels included."""
    return sum(GAP if isinstance(k, range) else cell for k in view_cols)


def draw_cells(canvas: Canvas, left: float, top: float, *, rows: Pick, cols: Pick,
               cell_at: Callable[[int, int], Cell | None], cell: float,
               row_name: Callable[[int], str] = str, col_name: Callable[[int], str] = str,
               rows_text: Callable[[range], str] | None = None,
               cols_text: Callable[[range], str] | None = None,
               title: str | None = None) -> Grid:
    """Draw the chosen ``rows`` x ``cols`` of a grid whose top-left label corner is at
    (``left``, ``top``): ``title`` (class ``caption``), column numbers, row numbers,
    then the cells.  A run of rows left out is a band of class ``gap`` saying
    ``rows_text(run)``; a run of columns, a narrow band marked with an ellipsis."""
    if title:
        canvas.text(left, top + CAPTION, title, size=CAPTION, weight="bold", cls="caption")
        top += CAPTION + 8
    drawn_rows = [k for k in rows if isinstance(k, int)]
    label_w = max((text_width(row_name(r), TICK) for r in drawn_rows), default=0.0) + 6
    grid_left, grid_top = left + label_w, top + TICK + 6
    x, col_gaps, right = _place(cols, grid_left, cell)
    y, row_gaps, bottom = _place(rows, grid_top, cell)
    # Column numbers: as many as fit without touching (every k-th on dense grids).
    widest = max((text_width(col_name(c), TICK) for c in x), default=0.0)
    every = max(1, math.ceil((widest + 4) / cell))
    for c, cx in x.items():
        if c % every == 0:
            canvas.text(cx + cell / 2, grid_top - 5, col_name(c), size=TICK,
                        anchor="middle", cls="tick", color=COLORS["muted"])
    every = max(1, math.ceil((TICK + 2) / cell))
    for r, ry in y.items():
        if r % every == 0:
            canvas.text(grid_left - 4, ry + cell / 2 + TICK * 0.35, row_name(r), size=TICK,
                        anchor="end", cls="tick", color=COLORS["muted"])
    for r, ry in y.items():
        for c, cx in x.items():
            look = cell_at(r, c)
            if look is None:
                continue
            canvas.rect(cx, ry, cell, cell, cls=look.cls, fill=look.fill, title=look.tooltip,
                        stroke=look.stroke, dash=look.dash)
            size = next((z for z in (10, 8, 7) if text_width(look.label, z) <= cell - 2), None)
            if look.label and size:
                canvas.text(cx + cell / 2, ry + cell / 2 + size * 0.35, look.label,
                            size=size, anchor="middle", cls="cell-label", halo=False)
    for hidden, gy in row_gaps:
        text = rows_text(hidden) if rows_text else f"rows {hidden.start}..{hidden.stop - 1}"
        canvas.rect(grid_left, gy + 3, right - grid_left, GAP - 6, cls="gap rows",
                    fill=COLORS["outside"], stroke="none", title=text)
        canvas.text(grid_left + 4, gy + GAP / 2 + 4, f"⋮ {text}", size=TICK, cls="gap-label",
                    color=COLORS["muted"])
    for hidden, gx in col_gaps:
        text = cols_text(hidden) if cols_text else f"columns {hidden.start}..{hidden.stop - 1}"
        canvas.rect(gx + 3, grid_top, GAP - 6, bottom - grid_top, cls="gap columns",
                    fill=COLORS["outside"], stroke="none", title=text)
        canvas.text(gx + GAP / 2, grid_top - 5, "…", size=TICK, anchor="middle",
                    cls="tick", color=COLORS["muted"])
    return Grid(cell, x, y, grid_left, grid_top, right, bottom)


def draw_buffer(canvas: Canvas, left: float, top: float, shape: tuple[int, ...],
                look: Callable[[tuple[int, ...]], Cell], *, focus=(), rows_focus=(),
                title: str | None = None, budget: float = MAX_WIDTH - 40,
                summary: Callable[[range, BufferView], str] | None = None,
                largest: float = 30.0, max_rows: int = MAX_ROWS) -> Grid:
    """A buffer of one or two axes as cells, ``look(index)`` giving each element's
    :class:`Cell`; a large one is windowed around the ``focus`` elements and the
    ``rows_focus`` drawn rows.  ``summary(run, view)`` describes a run of rows left
    out."""
    view = buffer_view(shape)
    at = [view.position(tuple(index)) for index in focus]
    rows = pick(view.rows, [r for r, _ in at] + list(rows_focus), limit=max_rows)
    cols = pick(view.cols, [c for _, c in at], limit=MAX_COLS)
    cell = cell_size(len(cols), budget - 40, largest=largest)

    def cell_at(r: int, c: int) -> Cell | None:
        index = view.index(r, c)
        return None if index is None else look(index)

    def rows_text(hidden: range) -> str:
        text = view.rows_text(hidden)
        return f"{text}: {summary(hidden, view)}" if summary else text

    return draw_cells(canvas, left, top, rows=rows, cols=cols, cell_at=cell_at, cell=cell,
                      row_name=view.row_name, col_name=view.col_name, rows_text=rows_text,
                      title=title)
