"""``plot_set``: the integer points of an isl set, one panel per tuple."""

from __future__ import annotations

from collections.abc import Mapping

from polypad.arguments import expect

from .grid import draw_panel
from .points import as_union_set, set_points, split
from .svg import Canvas, Svg

_GAP = 18.0  # vertical space between panels


def plot_set(set, params: Mapping[str, int] | None = None,
             slice: Mapping | None = None, *, title: str | None = None) -> Svg:
    """Draw the integer points of ``set`` (an isl ``Set``, ``BasicSet``,
    ``UnionSet`` or its text) as an SVG picture.

    Each tuple of a union set gets its own panel.  A panel has at most two
    axes (the first dimension runs down, the second across); ``slice`` fixes
    the others (``{"k": 0}``, by name or position), and ``params`` fixes the
    symbolic parameters (``{"n": 6}``).  Members are filled dots (class
    ``point``); lattice positions of the bounding box outside the set are faint
    (class ``lattice``), so holes such as ``i % 4 < 2`` show.

    Raises :class:`~polypad.errors.ArgumentValueError` when a parameter is not
    fixed, more than two dimensions are free, or the set is unbounded or too
    large to draw.
    """
    where = "plot_set"
    union = as_union_set(set, where)
    expect(params, (Mapping, None), "params", where, what="a dict of parameter values")
    expect(slice, (Mapping, None), "slice", where, what="a dict of dimension values")
    canvas = Canvas()
    top = 0.0
    for piece in split(union):
        points = set_points(piece, params or {}, slice or {}, where)
        panel = draw_panel(canvas, points, 0.0, top)
        top = panel.bottom + _GAP
    if not split(union):
        canvas.text(0, 14, "(empty set)", cls="caption")
    return canvas.render(title or str(union))
