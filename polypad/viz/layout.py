"""``plot_layout``: a buffer's logical grid mapped onto its transformed grid.

As in RFC 0077's diagrams: the logical buffer, each cell holding its index;
then the transformed buffer, each cell holding the logical index stored
there, and the padding (transformed indices no logical index maps to)
shaded.  The padding comes from isl (:meth:`IndexMap.padding_set`), the
placement from :meth:`IndexMap.pack`, and the two are checked against each
other.

The two grids stand side by side when they fit the picture's width, one
above the other when not.  A long 1-D buffer wraps into rows; a large grid
is drawn as a window around the padding (the rows where it begins or ends),
the rows left out summarised; a buffer of more than two axes (logical or
transformed) is one panel per value of its leading axes.
"""

from __future__ import annotations

import colorsys
import itertools
from collections.abc import Mapping

import numpy as np

from polypad.arguments import expect
from polypad.errors import ArgumentValueError, PolypadError

from .cells import Cell, buffer_view, draw_buffer
from .multiples import arrange, choose
from .points import MAX_ENUMERATED, enumerate_points
from .svg import CAPTION, COLORS, LABEL, MAX_WIDTH, Canvas, Svg
from .window import changes, drawn, pick

_GAP = 70.0  # between the logical and the transformed grid, room for the arrow
_ROWS = 32  # rows of the transformed grid drawn before a window is taken
_LOGICAL_ROWS = 16  # of the logical grid: its window only follows the transformed one
_PANELS = 6  # small multiples per side


def _tint(k: int, total: int) -> str:
    """A pale colour for logical element ``k``: neighbours get neighbouring hues, so
    the eye can follow an element from one grid to the other."""
    r, g, b = colorsys.hls_to_rgb(0.75 * k / max(total, 1), 0.86, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _label(index) -> str:
    return ",".join(map(str, index))


def _focus_rows(ids: np.ndarray) -> list[int]:
    """The drawn rows of a 2-D (or 1-D) array of logical ids where the padding (-1)
    begins or ends, or holds."""
    view = buffer_view(ids.shape)
    flat = np.full(view.rows * view.cols, -2, dtype=np.int64)
    flat[: ids.size] = ids.reshape(-1)
    pad = (flat < 0).reshape(view.rows, view.cols) & (flat > -2).reshape(view.rows, view.cols)
    rows = set(changes(pad.astype(np.int8)))
    padded = np.flatnonzero(pad.any(axis=1))
    rows |= {int(padded[0]), int(padded[-1])} if len(padded) else set()
    return sorted(rows)


def _draw_side(ids: np.ndarray, size: int, logical_shape, *, name: str, transformed: bool,
               focus_ids=None, width: float) -> tuple[Canvas, list[int]]:
    """One side (logical or transformed) on a canvas of its own: panels over the leading
    axes of ``ids`` (logical flat ids; -1 for padding), each windowed.  Returns the
    canvas and the logical ids of the rows it drew."""
    canvas = Canvas(margin=0)
    lead_shape = ids.shape[:-2] if ids.ndim > 2 else ()
    keys = list(itertools.product(*map(range, lead_shape)))
    shown = choose(keys, [k for k in keys if (ids[k] < 0).any()] if transformed else [],
                   limit=_PANELS)
    seen: list[int] = []
    canvas.text(0, CAPTION, f"{name} {list(ids.shape)}", size=CAPTION, weight="bold",
                cls="caption")

    def draw(lead: tuple[int, ...], left: float, top: float) -> tuple[float, float]:
        part = ids[lead] if lead else ids
        view = buffer_view(part.shape)
        focus = _focus_rows(part) if transformed else []
        if focus_ids is not None and not transformed:
            where = np.isin(part.reshape(-1), focus_ids)
            focus = sorted({int(k) // view.cols for k in np.flatnonzero(where)})
        rows = _ROWS if transformed else _LOGICAL_ROWS
        for r in drawn(pick(view.rows, focus, limit=rows)):
            row = part.reshape(-1)[r * view.cols:(r + 1) * view.cols]
            seen.extend(int(v) for v in row if v >= 0)

        def look(index: tuple[int, ...]) -> Cell:
            k = int(part[index])
            at = _label((*lead, *index))
            if k < 0:
                return Cell("cell padding", COLORS["padding"],
                            tooltip=f"transformed ({at}): padding")
            logical = _label(np.unravel_index(k, logical_shape))
            if transformed:
                return Cell("cell", _tint(k, size), logical,
                            f"transformed ({at}) holds logical {logical}")
            return Cell("logical", _tint(k, size), logical, f"logical {logical}")

        def summary(hidden: range, v) -> str:
            block = part.reshape(-1)[hidden.start * v.cols:hidden.stop * v.cols]
            pads = int((block < 0).sum())
            return f"{pads} padding" if pads else "no padding"

        title = f"[{', '.join(map(str, lead))}, :, :]" if lead else None
        grid = draw_buffer(canvas, left, top, part.shape, look, rows_focus=focus,
                           title=title, summary=summary if transformed else None,
                           max_rows=rows, budget=width)
        return grid.right, grid.bottom

    arrange(canvas, shown, draw, top=CAPTION + 8, total=len(keys), width=width,
            what="slices", hint="pick others with slice={axis: value}" if transformed else "")
    return canvas, seen


def plot_layout(index_map, shape, *, slice: Mapping[int, int] | None = None) -> Svg:
    """Draw ``index_map`` (a :class:`~polypad.layout.IndexMap`) applied to a buffer of
    ``shape``: the logical grid, and the transformed grid with padding shaded.

    Transformed cells are ``rect`` elements of class ``cell`` (``cell padding``
    for padding); logical cells are of class ``logical``.  A buffer of more than
    two axes, logical or transformed, is drawn as one panel per value of its
    leading axes (at most six); ``slice`` fixes transformed axes by position
    (``{0: 1}``) to draw those panels only.  Shapes must be integers (fix
    symbolic extents first).
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
    size = int(np.prod(shape))
    if size > MAX_ENUMERATED:
        raise ArgumentValueError(f"{where}: the buffer has {size} elements, more than the "
                                 f"{MAX_ENUMERATED} a picture enumerates")
    out_shape = tuple(index_map.transformed_shape(shape))
    fixed = dict(slice or {})
    for axis, value in fixed.items():
        if not (isinstance(axis, int) and 0 <= axis < len(out_shape)
                and isinstance(value, int) and 0 <= value < out_shape[axis]):
            raise ArgumentValueError(
                f"{where}: slice {{{axis!r}: {value!r}}} is not a transformed axis and an "
                f"index within the transformed shape {list(out_shape)}")
    # Flat logical ids travel through pack; -1 marks what nothing was packed into.
    placed = index_map.pack(np.arange(size, dtype=np.int64).reshape(shape), pad_value=-1)
    pad_cells = {tuple(p) for p in enumerate_points(index_map.padding_set(shape), {}, where)}
    shaded = {tuple(int(v) for v in p) for p in np.argwhere(placed < 0)}
    if shaded != pad_cells:
        raise PolypadError(f"{where}: isl's padding {sorted(pad_cells)[:8]} and the packed "
                           f"layout's {sorted(shaded)[:8]} disagree")
    view = placed[tuple(fixed.get(k, np.s_[:]) for k in range(len(out_shape)))]
    if view.ndim == 0:
        view = view.reshape(1)
    logical = np.arange(size, dtype=np.int64).reshape(shape)

    title = "transformed"
    if fixed:
        title += " at " + ", ".join(f"axis {k} = {v}" for k, v in sorted(fixed.items()))
    half = (MAX_WIDTH - 40 - _GAP) / 2
    right, seen = _draw_side(view, size, shape, name=title, transformed=True, width=half)
    if right.width > half:  # too wide to stand beside the logical grid: stack them
        right, seen = _draw_side(view, size, shape, name=title, transformed=True,
                                 width=MAX_WIDTH - 40)
    left, _ = _draw_side(logical, size, shape, name="logical", transformed=False,
                         focus_ids=np.array(seen, dtype=np.int64), width=half)
    beside = left.width + _GAP + right.width <= MAX_WIDTH - 20
    if not beside:
        left, _ = _draw_side(logical, size, shape, name="logical", transformed=False,
                             focus_ids=np.array(seen, dtype=np.int64), width=MAX_WIDTH - 40)
    canvas = Canvas()
    canvas.place(left, 0, 0)
    if beside:
        x, y = left.width + _GAP, 0.0
        mid = CAPTION + 8 + min(left.max_y, right.max_y) / 2
        canvas.line(left.width + 12, mid, x - 12, mid, cls="mapping", color=COLORS["grid"],
                    width=1.5, arrow=True, title=repr(index_map))
    else:
        x, y = 0.0, left.max_y + 46
        canvas.line(40, left.max_y + 8, 40, y - 6, cls="mapping", color=COLORS["grid"],
                    width=1.5, arrow=True, title=repr(index_map))
        canvas.text(52, left.max_y + 28, repr(index_map), size=LABEL, cls="legend")
    canvas.place(right, x, y)
    legend_y = canvas.max_y + 22
    canvas.rect(0, legend_y - 10, 11, 11, cls="legend", fill=COLORS["padding"])
    canvas.text(16, legend_y, f"padding: {len(pad_cells)} of {int(np.prod(out_shape))} "
                f"transformed elements", size=LABEL, cls="legend")
    canvas.text(0, legend_y + 18, f"{index_map!r} on shape {list(shape)}", size=LABEL,
                cls="legend")
    return canvas.render(f"{index_map!r} on shape {list(shape)}")
