"""``plot_dependences``: statement instances as points, dependences as arrows.

Each statement of the function gets a panel of its instance domain (as
:func:`~polypad.viz.plot_set` draws it), and every dependence pair
``S[i] -> S'[j]`` becomes one arrow from the source instance to the sink:
blue for flow (read after write), orange for anti (write after read), green
for output (write after write).  An instance that depends on itself gets a
small loop.  Arrows are ``line`` (or ``path``) elements of class
``arrow flow``, ``arrow anti`` or ``arrow output``, one per pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import islpy as isl

from polypad.arguments import expect
from polypad.errors import ArgumentValueError

from .grid import Panel, draw_panel
from .points import MAX_POINTS, dim_names, fix_params, set_points
from .svg import COLORS, Canvas, Svg

KINDS = ("flow", "anti", "output")
_GAP = 22.0
_OFFSET = {"flow": 0.0, "anti": 3.0, "output": -3.0}  # so coinciding kinds stay visible


def dependence_pairs(relation: isl.UnionMap, params: Mapping[str, int], where: str
                     ) -> list[tuple[str, tuple[int, ...], str, tuple[int, ...]]]:
    """Every pair ``(source name, source indices, sink name, sink indices)`` of
    ``relation`` with the parameters fixed, sorted."""
    maps: list[isl.Map] = []
    relation.foreach_map(maps.append)
    out = []
    for m in maps:
        src, dst = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
        n_in = m.dim(isl.dim_type.in_)
        pairs = fix_params(m.wrap(), params, where)
        if not pairs.is_bounded():
            raise ArgumentValueError(f"{where}: the dependences {src} -> {dst} are unbounded "
                                     "once the parameters are fixed")
        if pairs.count_val().to_python() > MAX_POINTS:
            raise ArgumentValueError(f"{where}: too many dependence pairs {src} -> {dst} to "
                                     "draw; fix smaller parameters")
        points: list[isl.Point] = []
        pairs.foreach_point(points.append)
        for p in points:
            coords = [p.get_coordinate_val(isl.dim_type.set, k).to_python()
                      for k in range(pairs.dim(isl.dim_type.set))]
            out.append((src, tuple(coords[:n_in]), dst, tuple(coords[n_in:])))
    return sorted(out)


def _shorten(x1, y1, x2, y2, by: float):
    """The segment with ``by`` pixels cut from each end, so heads stay off the dots."""
    length = math.hypot(x2 - x1, y2 - y1)
    if length <= 2 * by:
        return x1, y1, x2, y2
    dx, dy = (x2 - x1) / length * by, (y2 - y1) / length * by
    return x1 + dx, y1 + dy, x2 - dx, y2 - dy


def plot_dependences(deps, params: Mapping[str, int] | None = None,
                     slice: Mapping | None = None, *,
                     kinds: Sequence[str] = KINDS) -> Svg:
    """Draw the instances of every statement and an arrow per dependence pair.

    ``deps`` is what :func:`analyses.dependences` returns (a ``PrimFunc`` is
    analysed first).  ``params`` fixes the symbolic parameters; ``slice`` fixes
    loop variables beyond two per statement (by name, ``{"k": 0}``): a pair is
    drawn when both its instances lie in the slice.  ``kinds`` picks among
    ``"flow"``, ``"anti"`` and ``"output"``.
    """
    where = "plot_dependences"
    from polypad.ir import nodes as n

    if isinstance(deps, n.PrimFunc):
        import analyses

        deps = analyses.dependences(deps)
    if not hasattr(deps, "model") or not hasattr(deps, "flow"):
        from polypad.errors import ArgumentTypeError

        raise ArgumentTypeError(f"{where}: parameter deps takes what analyses.dependences "
                                f"returns, or a PrimFunc, not {type(deps).__name__}")
    expect(kinds, (tuple, list), "kinds", where, what="a tuple of dependence kinds")
    for kind in kinds:
        if kind not in KINDS:
            raise ArgumentValueError(f"{where}: kinds must be among 'flow', 'anti' and "
                                     f"'output', not {kind!r}")
    params, fixed = dict(params or {}), dict(slice or {})
    canvas = Canvas()
    panels: dict[str, tuple[Panel, list[int], dict]] = {}
    top = 0.0
    for statement in deps.model.statements:
        if statement.is_assume:
            continue
        points = set_points(statement.domain, params, fixed, where)
        names = dim_names(statement.domain)
        kept = [names.index(a) for a in points.axes]
        title = f"{statement.name}[{', '.join(points.axes)}]"
        if statement.block:
            title += f" in block {statement.block}"
        if points.fixed:
            title += " at " + ", ".join(f"{k}={v}" for k, v in points.fixed)
        panel = draw_panel(canvas, points, 0.0, top, title=title)
        panels[statement.name] = (panel, kept, dict(points.fixed))
        top = panel.bottom + _GAP

    def place(name: str, coords: tuple[int, ...]):
        if name not in panels:
            return None
        panel, kept, sliced = panels[name]
        names = dim_names(next(s.domain for s in deps.model.statements if s.name == name))
        for dim, value in sliced.items():
            if coords[names.index(dim)] != value:
                return None
        return panel.center(tuple(coords[k] for k in kept))

    counts = {}
    for kind in kinds:
        color = COLORS[kind]
        drawn = 0
        for src, i, dst, j in dependence_pairs(getattr(deps, kind), params, where):
            a, b = place(src, i), place(dst, j)
            if a is None or b is None:
                continue
            tip = f"{kind}: {src}({', '.join(map(str, i))}) -> {dst}({', '.join(map(str, j))})"
            drawn += 1
            if a == b:
                x, y = a
                canvas.path(f"M {x - 3:.1f} {y - 5:.1f} C {x - 14:.1f} {y - 22:.1f} "
                            f"{x + 14:.1f} {y - 22:.1f} {x + 3:.1f} {y - 5:.1f}",
                            cls=f"arrow {kind}", color=color, arrow=True, title=tip)
                continue
            off = _OFFSET[kind]
            x1, y1, x2, y2 = _shorten(a[0], a[1], b[0], b[1], 6.0)
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            nx, ny = -(y2 - y1) / length * off, (x2 - x1) / length * off
            canvas.line(x1 + nx, y1 + ny, x2 + nx, y2 + ny, cls=f"arrow {kind}", color=color,
                        width=1.2, arrow=True, title=tip)
        counts[kind] = drawn
    legend_y = top + 4
    x = 0.0
    for kind in kinds:
        canvas.line(x, legend_y, x + 22, legend_y, cls="legend", color=COLORS[kind], arrow=True)
        label = f"{kind} ({counts[kind]})"
        canvas.text(x + 27, legend_y + 4, label, size=10, cls="legend")
        x += 40 + 6.6 * len(label)
    return canvas.render(f"dependences of {deps.func.name}")
