"""``plot_set``: the integer points of an isl set, one panel per tuple.

A tuple of more than two free dimensions is drawn as small multiples, one
panel per value of its leading dimensions (``slice=`` fixes some instead);
a panel too large to draw point by point is drawn as a density.
"""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl

from polypad.arguments import expect

from .density import draw_density
from .grid import MIN_STEP, caption, draw_panel, fit_step, panel_size
from .multiples import arrange, choose
from .points import (
    MAX_POINTS,
    Points,
    as_union_set,
    coordinates,
    count,
    dim_names,
    extent,
    fix_dims,
    fix_params,
    panel_values,
    param_names,
    split,
)
from .svg import CAPTION, MAX_HEIGHT, MAX_WIDTH, Canvas, Svg

_GAP = 22.0  # vertical space between tuples


def plot_set(set, params: Mapping[str, int] | None = None,
             slice: Mapping | None = None, *, title: str | None = None) -> Svg:
    """Draw the integer points of ``set`` (an isl ``Set``, ``BasicSet``,
    ``UnionSet`` or its text) as an SVG picture.

    Each tuple of a union set gets its own panel.  A panel has at most two
    axes (the first dimension runs down, the second across); a tuple with
    more is drawn as small multiples, one panel per value of its leading
    dimensions (at most 12; ``slice`` fixes dimensions instead: ``{"k": 0}``,
    by name or position).  ``params`` fixes the symbolic parameters
    (``{"n": 6}``).  Members are filled dots (class ``point``); lattice
    positions of the bounding box outside the set are faint (class
    ``lattice``), so holes such as ``i % 4 < 2`` show.  A panel of more than
    4096 points, or too wide for dots, is a density (squares of class ``bin``).

    Raises :class:`~polypad.errors.ArgumentValueError` when a parameter is not
    fixed or the set is unbounded.
    """
    where = "plot_set"
    union = as_union_set(set, where)
    expect(params, (Mapping, None), "params", where, what="a dict of parameter values")
    expect(slice, (Mapping, None), "slice", where, what="a dict of dimension values")
    canvas = Canvas()
    top = 0.0
    pieces = split(union)
    for piece in pieces:
        top = draw_tuple(canvas, piece, dict(params or {}), dict(slice or {}), top, where) \
            + _GAP
    if not pieces:
        canvas.text(0, CAPTION, "(empty set)", cls="caption")
    return canvas.render(title or str(union))


def draw_tuple(canvas: Canvas, piece: isl.Set, params: dict, fixed: dict, top: float,
               where: str) -> float:
    """One tuple of a set at ``top``: a panel, small multiples or a density; returns
    the bottom of what was drawn."""
    name = piece.get_tuple_name() or ""
    given = tuple((p, int(params[p])) for p in param_names(piece) if p in params)
    s = fix_params(piece, params, where)
    names = dim_names(s)
    s, kept, sliced = fix_dims(s, fixed, where)
    count(s, name, where)  # refuses an unbounded set
    lead, drawn = kept[:-2], kept[-2:]
    axes = tuple(names[k] for k in drawn)
    keys = panel_values(s, lead) if lead else [()]
    shown = choose(keys)
    panels = []
    for key in shown:
        part = s
        for k, v in zip(lead, key):
            part = part.fix_val(isl.dim_type.set, k, isl.Val(str(v)))
        at = tuple(sliced) + tuple((names[k], v) for k, v in zip(lead, key))
        panels.append((key, part, Points(name, axes, (), at, given)))
    many = len(shown) > 1
    room_w = (MAX_WIDTH - 120) / (2 if many else 1)
    room_h = (MAX_HEIGHT - 200) / (3 if many else 1)
    sizes = {key: part.count_val().to_python() for key, part, _ in panels}
    boxes = [_box(part, drawn) for key, part, _ in panels if sizes[key]]
    if boxes:
        lo = (min(b[0][0] for b in boxes), min(b[0][1] for b in boxes))
        hi = (max(b[1][0] for b in boxes), max(b[1][1] for b in boxes))
    else:
        lo, hi = (0, 0), (0, 0)
    step = fit_step(lo, hi, room_w, room_h)
    dense = step < MIN_STEP or max(sizes.values(), default=0) > MAX_POINTS
    if many:
        head = f"{name}[{', '.join(names[k] for k in kept)}]: one panel per " \
            f"{', '.join(names[k] for k in lead)}"
        head += "".join(f"; {k} = {v}" for k, v in (*sliced, *given))
        canvas.text(0, top + CAPTION, head, size=CAPTION, weight="bold", cls="caption")
        top += CAPTION + 10
    parts = {key: (part, points) for key, part, points in panels}

    def draw(key, left: float, panel_top: float) -> tuple[float, float]:
        part, points = parts[key]
        title = _panel_title(lead, names, key) if many else caption(points)
        if dense:
            panel = draw_density(canvas, part, drawn, axes, left, panel_top, title=title,
                                 total=sizes[key], width=room_w)
            return panel.right, panel.bottom + 38
        pts = Points(name, axes, tuple(coordinates(part, drawn)), points.fixed, given)
        panel = draw_panel(canvas, pts, left, panel_top, title=title, lo=lo, hi=hi, step=step)
        width, height = panel_size(lo, hi, axes, step)
        return left + width, panel_top + height

    hint = "pick others with slice={" + ", ".join(f"{names[k]!r}: ..." for k in lead) + "}"
    return arrange(canvas, shown, draw, top=top, total=len(keys), what="panels", hint=hint)


def _box(part: isl.Set, drawn: list[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The bounding box of ``part`` on the drawn dimensions, as (row, column) corners."""
    box = extent(part, drawn)
    if len(box) == 2:
        return (box[0][0], box[1][0]), (box[0][1], box[1][1])
    if len(box) == 1:
        return (0, box[0][0]), (0, box[0][1])
    return (0, 0), (0, 0)


def _panel_title(lead, names, key) -> str:
    """A small multiple's caption: the values that pick it (``i = 2``)."""
    return ", ".join(f"{names[k]} = {v}" for k, v in zip(lead, key))
