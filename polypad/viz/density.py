"""A set too large to draw point by point, as a density: one square per block of positions.

The bounding box is cut into at most ``MAX_BINS`` blocks per axis; each
block is a square of class ``bin`` whose shade says what share of its
lattice positions lie in the set (isl counts them: the points are
enumerated when there are few enough, else each block is intersected with
the set and counted).  Empty blocks are left blank, so holes and edges
still show.
"""

from __future__ import annotations

import math

import islpy as isl
import numpy as np

from .grid import Panel, ceil_div
from .points import MAX_ENUMERATED, coordinates, extent
from .svg import CAPTION, COLORS, LABEL, TICK, Canvas, text_width

MAX_BINS = 64  # blocks per axis (80 along a 1-D set's single row)


def _box(kept: list[int], n_dims: int, lo, size) -> str:
    """The isl constraints of a block (``lo`` its first position, ``size`` its extents)."""
    names = [f"x{k}" for k in range(n_dims)]
    parts = [f"{lo[a]} <= {names[k]} < {lo[a] + size[a]}" for a, k in enumerate(kept)]
    return f"{{ [{', '.join(names)}] : {' and '.join(parts)} }}"


def bin_counts(s: isl.Set, kept: list[int], lo, hi, size, total: int) -> np.ndarray:
    """How many points of ``s`` fall in each block of ``size`` positions, blocks
    starting at ``lo``: one entry per block, rows by columns."""
    shape = [ceil_div(h - low + 1, b) for low, h, b in zip(lo, hi, size)]
    counts = np.zeros(shape, dtype=np.int64)
    if total <= MAX_ENUMERATED:
        for p in coordinates(s, kept):
            counts[tuple((v - low) // b for v, low, b in zip(p, lo, size))] += 1
        return counts
    n_dims = s.dim(isl.dim_type.set)
    plain = s.reset_tuple_id() if s.get_tuple_name() else s
    for index in np.ndindex(*shape):
        first = [low + k * b for low, k, b in zip(lo, index, size)]
        box = isl.Set(_box(kept, n_dims, first, size))
        counts[index] = plain.intersect(box).count_val().to_python()
    return counts


def _capacity(lo, hi, size, shape, dims: int) -> np.ndarray:
    """How many lattice positions of the box each block holds (edge blocks hold fewer)."""
    per_axis = [np.minimum(b, h - (low + np.arange(n) * b) + 1)
                for low, h, b, n in zip(lo, hi, size, shape[-dims:] if dims == 2 else
                                        (shape[1],))]
    if dims == 2:
        return np.outer(per_axis[0], per_axis[1])
    return per_axis[0].reshape(1, -1)


def _runs(mask: np.ndarray, left: float, top: float, step: int):
    """Path pieces covering the true cells of ``mask``: one rectangle per run of
    neighbouring cells in a row."""
    for r, row in enumerate(mask):
        c = 0
        while c < len(row):
            if not row[c]:
                c += 1
                continue
            end = c
            while end < len(row) and row[end]:
                end += 1
            width = (end - c) * step
            yield f"M{round(left) + c * step} {round(top) + r * step}h{width}v{step}h-{width}z"
            c = end


def draw_density(canvas: Canvas, s: isl.Set, kept: list[int], axes: tuple[str, ...],
                 left: float, top: float, *, title: str, total: int,
                 width: float) -> Panel:
    """Draw ``s`` (bounded, without parameters, at most two dimensions ``kept`` free)
    as blocks of positions shaded by how full they are; returns the panel."""
    box = extent(s, kept)
    lo, hi = [b[0] for b in box], [b[1] for b in box]
    limits = [MAX_BINS] * len(kept) if len(kept) == 2 else [80]
    size = [max(1, ceil_div(h - low + 1, m)) for low, h, m in zip(lo, hi, limits)]
    counts = bin_counts(s, kept, lo, hi, size, total)
    grid = counts if counts.ndim == 2 else counts.reshape(1, -1)
    # Whole pixels: squares drawn edge to edge with crisp edges leave no seams.
    step = float(max(4, min(16, int((width - 60) / grid.shape[1]))))
    room = math.ceil(max(text_width(str(v), TICK) for v in (lo[0], hi[0], axes[0] + " ↓")) + 8) \
        if len(kept) == 2 else 6.0
    panel = Panel(round(left + room), round(top + CAPTION + TICK + 14), (0, 0),
                  (grid.shape[0] - 1, grid.shape[1] - 1), step)
    canvas.text(left, top + CAPTION, title, size=CAPTION, weight="bold", cls="caption")
    block = " x ".join(map(str, size if len(size) == 2 else [size[0]]))
    # Shares quantised to eight shades, one path of squares per shade: a picture of
    # thousands of blocks stays a few kilobytes.
    capacity = _capacity(lo, hi, size, grid.shape, len(kept))
    shade = np.ceil(8 * grid / np.maximum(capacity, 1)).astype(int)
    for level in range(1, 9):
        d = "".join(_runs(shade == level, panel.left, panel.top, int(step)))
        if d:
            canvas.path(d, cls=f"bin shade-{level}", color="none", fill=COLORS["point"],
                        opacity=0.12 + 0.11 * level, width=0, layer="shapes", crisp=True,
                        title=f"blocks {level - 1}/8 to {level}/8 in the set")
    canvas.rect(panel.left, panel.top, grid.shape[1] * step, grid.shape[0] * step,
                cls="frame", fill="none", stroke=COLORS["frame"])
    _axis_ticks(canvas, panel, lo, hi, size, axes, grid.shape)
    canvas.text(panel.left, panel.bottom + 16, f"{total} points in blocks of {block}",
                size=LABEL, cls="note", color=COLORS["muted"])
    canvas.text(panel.left, panel.bottom + 32, "darker where more of a block is in the set",
                size=LABEL, cls="note", color=COLORS["muted"])
    return panel


def _axis_ticks(canvas: Canvas, panel: Panel, lo, hi, size, axes, shape) -> None:
    """The first and last value of each axis at the blocks' edges, and the axis names."""
    muted = COLORS["muted"]
    top = panel.top - 5
    canvas.text(panel.left, top, str(lo[-1]), size=TICK, cls="tick", color=muted)
    canvas.text(panel.left + shape[1] * panel.step, top, str(hi[-1]), size=TICK, anchor="end",
                cls="tick", color=muted)
    canvas.text(panel.left + shape[1] * panel.step + 6, top, f"{axes[-1]} →", size=TICK,
                cls="axis", color=muted)
    if len(axes) == 2:
        canvas.text(panel.left - 5, panel.top + 10, str(lo[0]), size=TICK, anchor="end",
                    cls="tick", color=muted)
        canvas.text(panel.left - 5, panel.top + shape[0] * panel.step, str(hi[0]), size=TICK,
                    anchor="end", cls="tick", color=muted)
        canvas.text(panel.left - 5, panel.top + shape[0] * panel.step / 2, f"{axes[0]} ↓",
                    size=TICK, anchor="end", cls="axis", color=muted)
