"""``plot_layout``: a buffer's logical grid mapped onto its transformed grid.

As in RFC 0077's diagrams: on the left the logical buffer, each cell holding
its index; on the right the transformed buffer, each cell holding the logical
index stored there, and the padding (transformed indices no logical index maps
to) shaded.  The padding comes from isl (:meth:`IndexMap.padding_set`), the
placement from :meth:`IndexMap.pack`, and the two are checked against each
other.
"""

from __future__ import annotations

import colorsys
from collections.abc import Mapping

import numpy as np

from polypad.arguments import expect
from polypad.errors import ArgumentValueError, PolypadError

from .grid import draw_ticks
from .points import set_points
from .svg import COLORS, Canvas, Svg

CELL = 30.0
_GAP = 60.0  # between the logical and the transformed grid, room for the arrow


def _tint(k: int, total: int) -> str:
    """A pale colour for logical element ``k``: neighbours get neighbouring hues, so
    the eye can follow an element from one grid to the other."""
    r, g, b = colorsys.hls_to_rgb(0.75 * k / max(total, 1), 0.86, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _as_2d(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _label(index: tuple[int, ...]) -> str:
    return ",".join(map(str, index))


def _grid(canvas: Canvas, left: float, top: float, title: str, rows: int, cols: int,
          cells, *, cls: str) -> None:
    """A titled grid; ``cells`` yields (row, col, fill, label, extra_class, tooltip)."""
    canvas.text(left, top + 12, title, size=12, weight="bold", cls="caption")
    top += 34
    draw_ticks(canvas, left, top, cols, rows, cell=CELL)
    for row, col, fill, label, extra, tooltip in cells:
        x, y = left + col * CELL, top + row * CELL
        canvas.rect(x, y, CELL, CELL, cls=f"{cls}{extra}", fill=fill, title=tooltip)
        if label:
            size = 10 if len(label) <= 4 else 8
            canvas.text(x + CELL / 2, y + CELL / 2 + 3, label, size=size, anchor="middle",
                        cls="cell-label")


def plot_layout(index_map, shape, *, slice: Mapping[int, int] | None = None) -> Svg:
    """Draw ``index_map`` (a :class:`~polypad.layout.IndexMap`) applied to a buffer of
    ``shape``: the logical grid, and the transformed grid with padding shaded.

    Transformed cells are ``rect`` elements of class ``cell`` (``cell padding``
    for padding); logical cells are of class ``logical``.  Buffers of more than
    two transformed axes are drawn as a slice: ``slice`` fixes the leading
    transformed axes by position (``{0: 1}``).  Shapes must be integers (fix
    symbolic extents first); the logical buffer itself must have at most two axes.
    """
    from polypad.layout import IndexMap

    where = "plot_layout"
    expect(index_map, IndexMap, "index_map", where)
    expect(shape, (tuple, list), "shape", where, what="a tuple of int extents")
    expect(slice, (Mapping, None), "slice", where, what="a dict {axis: value} or None")
    shape = tuple(shape)
    if not shape or not all(isinstance(e, int) and not isinstance(e, bool) and e > 0
                            for e in shape):
        raise ArgumentValueError(f"{where}: shape must be positive int extents, not {shape!r}")
    if len(shape) > 2:
        raise ArgumentValueError(f"{where}: the logical buffer has {len(shape)} axes; a "
                                 "picture shows at most two")
    out_shape = tuple(index_map.transformed_shape(shape))
    size = int(np.prod(shape))
    # Flat logical ids travel through pack; -1 marks what nothing was packed into.
    fixed = dict(slice or {})
    for axis, value in fixed.items():
        if not (isinstance(axis, int) and 0 <= axis < len(out_shape)
                and isinstance(value, int) and 0 <= value < out_shape[axis]):
            raise ArgumentValueError(
                f"{where}: slice {{{axis!r}: {value!r}}} is not a transformed axis and an "
                f"index within the transformed shape {list(out_shape)}")
    if len(out_shape) - len(fixed) > 2:
        raise ArgumentValueError(
            f"{where}: the transformed buffer has {len(out_shape)} axes; fix all but two with "
            f"slice={{axis: value}}")
    placed = index_map.pack(np.arange(size, dtype=np.int64).reshape(shape), pad_value=-1)
    padding = set_points(index_map.padding_set(shape), {}, fixed, where)
    view = placed[tuple(fixed.get(k, np.s_[:]) for k in range(len(out_shape)))]
    view = view.reshape(_as_2d(view.shape) if view.ndim else (1, 1))
    pad_cells = {(0, c[0]) if len(c) == 1 else c for c in padding.points}
    shaded = {(r, c) for r in range(view.shape[0]) for c in range(view.shape[1])
              if view[r, c] < 0}
    if shaded != pad_cells:
        raise PolypadError(f"{where}: isl's padding {sorted(pad_cells)} and the packed "
                           f"layout's {sorted(shaded)} disagree")

    canvas = Canvas()
    rows, cols = _as_2d(shape)
    logical = [(r, c, _tint(r * cols + c, size), _label(np.unravel_index(r * cols + c, shape)),
                "", f"logical {_label(np.unravel_index(r * cols + c, shape))}")
               for r in range(rows) for c in range(cols)]
    left = 24.0
    _grid(canvas, left, 0, f"logical {list(shape)}", rows, cols, logical, cls="logical")
    right = left + cols * CELL + _GAP
    mid_y = 34 + min(rows, view.shape[0]) * CELL / 2
    canvas.line(left + cols * CELL + 10, mid_y, right - 14, mid_y, cls="mapping",
                color=COLORS["grid"], arrow=True, title=repr(index_map))
    cells = []
    for r in range(view.shape[0]):
        for c in range(view.shape[1]):
            k = int(view[r, c])
            where_ = f"transformed ({_label((r, c))})"
            if k < 0:
                cells.append((r, c, COLORS["padding"], "", " padding", f"{where_}: padding"))
            else:
                index = _label(np.unravel_index(k, shape))
                cells.append((r, c, _tint(k, size), index, "", f"{where_} holds logical {index}"))
    title = f"transformed {list(out_shape)}"
    if fixed:
        title += " at " + ", ".join(f"axis {k}={v}" for k, v in sorted(fixed.items()))
    _grid(canvas, right, 0, title, view.shape[0], view.shape[1], cells, cls="cell")
    legend_y = 34 + max(rows, view.shape[0]) * CELL + 16
    canvas.rect(left, legend_y - 9, 10, 10, cls="legend", fill=COLORS["padding"])
    canvas.text(left + 14, legend_y, f"padding ({len(pad_cells)} cells)", size=10,
                cls="legend")
    canvas.text(left, legend_y + 16, repr(index_map), size=10, cls="legend")
    return canvas.render(f"{index_map!r} on shape {list(shape)}")
