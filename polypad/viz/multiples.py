"""Small multiples: a picture of more than two axes as one panel per value of the others.

A set ``{ S[i, j, k] }`` or a buffer ``A[4, 5, 6]`` is drawn the way numpy
prints an array of three axes: one 2-D panel per value of the leading axes,
each captioned with that value (``i=1``, ``A[1, :, :]``).  At most
``MAX_PANELS`` are drawn; beyond that the first ones, the ones the reader
came to see and the last, with a note naming how many were left out (a
caller's ``slice=`` picks others).  Panels are laid out left to right and
wrap to fit the picture's width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .svg import COLORS, LABEL, MAX_WIDTH, Canvas

MAX_PANELS = 12
PANEL_GAP = 24.0  # between panels, across and down


def choose(keys: Sequence, focus: Iterable = (), limit: int = MAX_PANELS) -> list:
    """At most ``limit`` of ``keys`` in their order: all when they fit; else the
    ``focus`` keys, the first ones and the last."""
    if len(keys) <= limit:
        return list(keys)
    focus = set(focus)
    wanted = [k for k in keys if k in focus][: limit - 2]
    keep = set(wanted) | {keys[-1]}
    for k in keys:
        if len(keep) >= limit:
            break
        keep.add(k)
    return [k for k in keys if k in keep]


def arrange(canvas: Canvas, keys: Sequence, draw: Callable[[object, float, float],
                                                           tuple[float, float]],
            *, top: float = 0.0, total: int | None = None, what: str = "panels",
            hint: str = "", width: float = MAX_WIDTH - 40) -> float:
    """Draw ``draw(key, left, top) -> (right, bottom)`` for each key, left to right,
    wrapping at the picture's width; returns the bottom of the last row.  When
    ``total`` exceeds ``len(keys)``, a note says how many were left out."""
    room = width
    left, row_top, row_bottom, per_row, width = 0.0, top, top, None, 0.0
    for n, key in enumerate(keys):
        if per_row is not None and n % per_row == 0:
            left, row_top = 0.0, row_bottom + PANEL_GAP
        right, bottom = draw(key, left, row_top)
        if per_row is None:  # every panel is as large as the first
            width = right - left
            per_row = max(1, int((room + PANEL_GAP) // (width + PANEL_GAP)))
        row_bottom = max(row_bottom, bottom)
        left += width + PANEL_GAP
    if total is not None and total > len(keys):
        row_bottom += 18
        canvas.text(0, row_bottom, f"{len(keys)} of {total} {what} drawn"
                    + (f"; {hint}" if hint else ""), size=LABEL, cls="note",
                    color=COLORS["muted"])
    return row_bottom
