"""``plot_dependences``: statement instances as points, dependences as arrows.

Each statement of the function gets a panel of its instance domain (as
:func:`~polypad.viz.plot_set` draws it), and every dependence pair
``S[i] -> S'[j]`` becomes one arrow from the source instance to the sink:
blue for flow (read after write), orange for anti (write after read), green
for output (write after write).  Flow arrows are straight and the other two
bend to either side, so that kinds joining the same two instances (an
accumulation has all three) stay apart.  An instance that depends on itself
gets a small loop.  Arrows are ``line`` or ``path`` elements of class
``arrow flow``, ``arrow anti`` or ``arrow output``, one per drawn pair.

A statement of more than two loops is drawn as small multiples, one panel
per value of its outer loops.  A large domain is drawn as a window (at
most ``WINDOW`` instances along each axis) around the instances a refusal
names, or its first corner; the legend counts every pair, drawn or not, so
the window's pattern stands for the whole.  ``focus`` instances are ringed
in red, and the first two joined by a red dashed arrow labelled with the
element they clash on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import islpy as isl

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

from .grid import MIN_STEP, draw_panel, panel_size
from .multiples import arrange, choose
from .points import (
    Points,
    coordinates,
    count,
    dim_names,
    extent,
    fix_dims,
    fix_params,
    panel_values,
    param_names,
)
from .svg import CAPTION, COLORS, LABEL, TICK, Canvas, Svg, text_width

KINDS = ("flow", "anti", "output")
WINDOW = {1: 32, 2: 12}  # instances drawn along an axis of a 1-D / 2-D panel
MAX_ARROWS = 1500
_PANELS = 6  # small multiples per statement
_BEND = {"flow": 0.0, "anti": 0.22, "output": -0.22}  # sideways, as a share of the length
_GAP = 26.0
_STEP = 52.0  # pixels between instances, when there is room: arrows need it


def _fixed(s: isl.Set, params, slice_, where: str):
    """The statement domain with parameters and slice fixed: (set, free dims, slice)."""
    s = fix_params(s, params, where)
    s, kept, sliced = fix_dims(s, slice_, where)
    count(s, s.get_tuple_name(), where)
    return s, kept, sliced


def _box(s: isl.Set, dims: list[int], ranges: list[tuple[int, int]]) -> isl.Set:
    """``s`` with each of ``dims`` kept within its (first, last) range."""
    for k, (low, high) in zip(dims, ranges):
        s = s.lower_bound_val(isl.dim_type.set, k, isl.Val(str(low)))
        s = s.upper_bound_val(isl.dim_type.set, k, isl.Val(str(high)))
    return s


def _window(box: list[tuple[int, int]], center: list[int] | None) -> list[tuple[int, int]]:
    """At most ``WINDOW`` values per axis of ``box``, around ``center`` where given."""
    size = WINDOW[len(box)] if box else 1
    out = []
    for a, (low, high) in enumerate(box):
        if high - low + 1 <= size:
            out.append((low, high))
            continue
        start = low if center is None else center[a] - size // 2
        start = max(low, min(start, high - size + 1))
        out.append((start, start + size - 1))
    return out


class _Statement:
    """One statement's drawn part: its fixed domain, panels, and where each lands."""

    def __init__(self, model_stmt, params, slice_, where):
        self.name = model_stmt.name
        self.block = model_stmt.block
        self.names = dim_names(model_stmt.domain)
        self.params = tuple((p, int(params[p])) for p in param_names(model_stmt.domain)
                            if p in params)
        self.domain, kept, self.sliced = _fixed(model_stmt.domain, params, slice_, where)
        self.lead, self.drawn = kept[:-2], kept[-2:]
        self.panels: dict[tuple, object] = {}
        self.window: list[tuple[int, int]] | None = None

    def visible(self) -> isl.Set:
        """The instances that may be drawn: the domain within the window."""
        return _box(self.domain, self.drawn, self.window) if self.window else self.domain

    def coords(self, instance) -> tuple[int, ...] | None:
        """The full coordinates of an ``analyses.Instance`` of this statement."""
        values = dict(instance.indices)
        if not set(self.names) <= set(values):
            return None
        return tuple(int(values[d]) for d in self.names)

    def place(self, coords: tuple[int, ...]):
        """The pixel centre of the instance at ``coords``, or None where not drawn."""
        for dim, value in self.sliced:
            if coords[self.names.index(dim)] != value:
                return None
        key = tuple(coords[k] for k in self.lead)
        panel = self.panels.get(key)
        if panel is None:
            return None
        at = tuple(coords[k] for k in self.drawn)
        if self.window and not all(lo <= v <= hi for v, (lo, hi) in zip(at, self.window)):
            return None
        return panel.center(at)


def _matches(statement: _Statement, instance) -> bool:
    return instance.statement in (statement.name, statement.block) and \
        statement.coords(instance) is not None


def plot_dependences(deps, params: Mapping[str, int] | None = None,
                     slice: Mapping | None = None, *, kinds: Sequence[str] = KINDS,
                     focus: Sequence = (), element=None) -> Svg:
    """Draw the instances of every statement and an arrow per dependence pair.

    ``deps`` is what :func:`analyses.dependences` returns (a ``PrimFunc`` is
    analysed first).  ``params`` fixes the symbolic parameters; ``slice`` fixes
    loop variables (by name, ``{"k": 0}``): a pair is drawn when both its
    instances are.  A statement of more than two free loops is drawn as one
    panel per value of its outer ones; a large domain as a window.  ``kinds``
    picks among ``"flow"``, ``"anti"`` and ``"output"``.  ``focus`` lists
    instances (``analyses.Instance``, as a counterexample names them) to ring
    in red and to centre the window on; with two, a red arrow joins them,
    labelled ``element`` (the buffer element they clash on).
    """
    where = "plot_dependences"
    from polypad.ir import nodes as n

    if isinstance(deps, n.PrimFunc):
        import analyses

        deps = analyses.dependences(deps)
    if not hasattr(deps, "model") or not hasattr(deps, "flow"):
        raise ArgumentTypeError(f"{where}: parameter deps takes what analyses.dependences "
                                f"returns, or a PrimFunc, not {type(deps).__name__}")
    expect(kinds, (tuple, list), "kinds", where, what="a tuple of dependence kinds")
    for kind in kinds:
        if kind not in KINDS:
            raise ArgumentValueError(f"{where}: kinds must be among 'flow', 'anti' and "
                                     f"'output', not {kind!r}")
    expect(params, (Mapping, None), "params", where, what="a dict of parameter values")
    expect(slice, (Mapping, None), "slice", where, what="a dict of loop variable values")
    params, fixed = dict(params or {}), dict(slice or {})
    statements = {s.name: _Statement(s, params, fixed, where)
                  for s in deps.model.statements if not s.is_assume}
    focus = [i for i in focus if any(_matches(s, i) for s in statements.values())]
    canvas = Canvas()
    top = _draw_statements(canvas, statements, focus)
    drawn, totals = _draw_arrows(canvas, deps, statements, kinds, params, where)
    marks = _draw_focus(canvas, statements, focus, element)
    _legend(canvas, top, kinds, drawn, totals, marks)
    return canvas.render(f"dependences of {deps.func.name}")


def _plan(st: _Statement, focus) -> dict:
    """What to draw of one statement: its panels, window, box and caption."""
    centers = [st.coords(i) for i in focus if _matches(st, i)]
    keys = panel_values(st.domain, st.lead) if st.lead else [()]
    shown = choose(keys, [tuple(c[k] for k in st.lead) for c in centers], limit=_PANELS)
    box = extent(st.domain, st.drawn) if not st.domain.is_empty() else \
        [(0, 0)] * len(st.drawn)
    window = _window(box, [centers[0][k] for k in st.drawn] if centers else None)
    if window != box:
        st.window = window
    axes = tuple(st.names[k] for k in st.drawn)
    head = f"{st.name}[{', '.join(st.names)}]" + (f" in block {st.block}" if st.block else "")
    extra = [f"{d} = {v}" for d, v in (*st.sliced, *st.params)]
    if st.window:
        extra.append("window " + ", ".join(f"{a} {lo}..{hi}" for a, (lo, hi)
                                           in zip(axes, window)))
    if extra:
        head += " (" + "; ".join(extra) + ")"
    return {"keys": keys, "shown": shown, "corners": _corners(window), "axes": axes,
            "head": head}


def _draw_statements(canvas: Canvas, statements: dict, focus) -> float:
    """Every statement's panels, one statement below the other; returns the bottom.
    Statements of one loop each are tracks on one shared axis."""
    plans = {name: _plan(st, focus) for name, st in statements.items()}
    if plans and all(len(st.drawn) == 1 and not st.lead for st in statements.values()):
        return _draw_tracks(canvas, statements, plans)
    top = 0.0
    for st in statements.values():
        plan = plans[st.name]
        (lo, hi), axes = plan["corners"], plan["axes"]
        step = max(2 * MIN_STEP, min(_STEP, 820 / max(hi[1] - lo[1] + 1, 1)))
        if st.lead:
            canvas.text(0, top + CAPTION, plan["head"], size=CAPTION, weight="bold",
                        cls="caption")
            top += CAPTION + 8

        def draw(key, left: float, panel_top: float, st=st, axes=axes, lo=lo, hi=hi,
                 step=step, head=plan["head"]) -> tuple[float, float]:
            part = st.visible()
            for k, v in zip(st.lead, key):
                part = part.fix_val(isl.dim_type.set, k, isl.Val(str(v)))
            points = Points(st.name, axes, tuple(coordinates(part, st.drawn)))
            title = ", ".join(f"{st.names[k]} = {v}" for k, v in zip(st.lead, key)) \
                if st.lead else head
            st.panels[key] = draw_panel(canvas, points, left, panel_top, title=title,
                                        lo=lo, hi=hi, step=step)
            width, height = panel_size(lo, hi, axes, step)
            return left + width, panel_top + height

        top = arrange(canvas, plan["shown"], draw, top=top, total=len(plan["keys"]),
                      hint="pick others with slice={...}") + _GAP
    return top


def _draw_tracks(canvas: Canvas, statements: dict, plans: dict) -> float:
    """One-loop statements as tracks on one axis, so that ``S0(i)`` sits above
    ``S1(j)`` where ``i = j`` and arrows between tracks cross no label."""
    lo = (0, min(p["corners"][0][1] for p in plans.values()))
    hi = (0, max(p["corners"][1][1] for p in plans.values()))
    step = max(2 * MIN_STEP, min(_STEP, 760 / (hi[1] - lo[1] + 1)))
    title_width = max(text_width(p["head"], CAPTION) for p in plans.values()) + 14
    top, names = 0.0, list(statements)
    for n, st in enumerate(statements.values()):
        ticks = "above" if n == 0 else "below" if n == len(names) - 1 else None
        points = Points(st.name, plans[st.name]["axes"],
                        tuple(coordinates(st.visible(), st.drawn)))
        panel = draw_panel(canvas, points, 0.0, top, title=plans[st.name]["head"], lo=lo,
                           hi=hi, step=step,
                           track={"ticks": ticks, "title_width": title_width})
        st.panels[()] = panel
        top = panel.bottom + (64 if n < len(names) - 1 else TICK + 24)
    return top


def _corners(window: list[tuple[int, int]]):
    if len(window) == 2:
        return (window[0][0], window[1][0]), (window[0][1], window[1][1])
    if len(window) == 1:
        return (0, window[0][0]), (0, window[0][1])
    return (0, 0), (0, 0)


def _maps(relation: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    relation.foreach_map(out.append)
    return sorted(out, key=str)


def _draw_arrows(canvas: Canvas, deps, statements: dict, kinds, params, where):
    """An arrow per drawn pair; returns (drawn, total) pair counts per kind."""
    drawn, totals = {}, {}
    for kind in kinds:
        drawn[kind] = totals[kind] = 0
        for m in _maps(getattr(deps, kind)):
            src = statements.get(m.get_tuple_name(isl.dim_type.in_))
            dst = statements.get(m.get_tuple_name(isl.dim_type.out))
            if src is None or dst is None:
                continue
            pairs = fix_params(m, params, where).wrap()
            if not pairs.is_bounded():
                raise ArgumentValueError(f"{where}: the dependences {src.name} -> {dst.name} "
                                         "are unbounded once the parameters are fixed")
            totals[kind] += pairs.count_val().to_python()
            n_in = m.dim(isl.dim_type.in_)
            for p in _visible_pairs(m, params, src, dst, where):
                a, b = src.place(p[:n_in]), dst.place(p[n_in:])
                if a is None or b is None or drawn[kind] >= MAX_ARROWS:
                    continue
                drawn[kind] += 1
                tip = (f"{kind}: {src.name}({', '.join(map(str, p[:n_in]))}) -> "
                       f"{dst.name}({', '.join(map(str, p[n_in:]))})")
                _arrow(canvas, a, b, kind, tip)
    return drawn, totals


def _visible_pairs(m: isl.Map, params, src: _Statement, dst: _Statement, where: str):
    """The pairs of ``m`` whose two instances may be drawn (window and slice applied
    through isl, so a large relation is never enumerated whole)."""
    m = fix_params(m, params, where)
    m = m.intersect_domain(src.visible()).intersect_range(dst.visible())
    return coordinates(m.wrap())


def _arrow(canvas: Canvas, a, b, kind: str, tip: str, *, color=None, width: float = 1.3,
           dash=None, cls=None) -> tuple[float, float]:
    """A straight or bent arrow from ``a`` to ``b`` (a loop when they coincide);
    returns its midpoint."""
    color = color or COLORS[kind]
    cls = cls or f"arrow {kind}"
    if a == b:
        x, y = a
        side = {"flow": 0, "anti": 7, "output": -7}.get(kind, 0)
        canvas.path(f"M {x - 3 + side:.1f} {y - 5:.1f} C {x - 14 + side:.1f} {y - 24:.1f} "
                    f"{x + 14 + side:.1f} {y - 24:.1f} {x + 3 + side:.1f} {y - 5:.1f}",
                    cls=cls, color=color, arrow=True, title=tip, width=width, dash=dash)
        return x, y - 20
    x1, y1, x2, y2 = _shorten(*a, *b, 6.0)
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    share = _BEND.get(kind, 0.0)
    bend = math.copysign(max(7.0, abs(share) * min(length, 60.0)), share) if share else 0.0
    if bend == 0.0:
        canvas.line(x1, y1, x2, y2, cls=cls, color=color, width=width, arrow=True,
                    title=tip, dash=dash)
        return (x1 + x2) / 2, (y1 + y2) / 2
    nx, ny = -(y2 - y1) / length * bend, (x2 - x1) / length * bend
    cx, cy = (x1 + x2) / 2 + nx, (y1 + y2) / 2 + ny
    canvas.path(f"M {x1:.1f} {y1:.1f} Q {cx:.1f} {cy:.1f} {x2:.1f} {y2:.1f}", cls=cls,
                color=color, arrow=True, title=tip, width=width, dash=dash,
                bounds=(max(x1, x2, cx), max(y1, y2, cy)))
    return (x1 + x2) / 2 + nx / 2, (y1 + y2) / 2 + ny / 2


def _shorten(x1, y1, x2, y2, by: float):
    """The segment with ``by`` pixels cut from each end, so heads stay off the dots."""
    length = math.hypot(x2 - x1, y2 - y1)
    if length <= 2 * by:
        return x1, y1, x2, y2
    dx, dy = (x2 - x1) / length * by, (y2 - y1) / length * by
    return x1 + dx, y1 + dy, x2 - dx, y2 - dy


def _draw_focus(canvas: Canvas, statements: dict, focus, element) -> int:
    """Red rings on the focus instances and, for two, the clash arrow; returns how
    many instances were marked."""
    places = []
    for instance in focus:
        for st in statements.values():
            coords = st.coords(instance) if _matches(st, instance) else None
            at = st.place(coords) if coords is not None else None
            if at is not None:
                canvas.circle(*at, 8, cls="focus", fill="none", stroke=COLORS["highlight"],
                              stroke_width=2, title=str(instance))
                places.append((instance, at))
                break
    if len(places) >= 2:
        (first, a), (second, b) = places[:2]
        tip = f"{first} and {second}" + (f" meet at {element}" if element else "")
        mx, my = _arrow(canvas, a, b, "clash", tip, color=COLORS["highlight"], width=2.2,
                        dash="5 3", cls="clash")
        if element is not None:
            canvas.text(mx + 8, my - 6, str(element), size=LABEL, weight="bold",
                        cls="clash-label", color=COLORS["highlight"])
    return len(places)


def _legend(canvas: Canvas, top: float, kinds, drawn, totals, marks: int) -> None:
    x, y = 0.0, top + 4
    for kind in kinds:
        canvas.line(x, y, x + 24, y, cls="legend", color=COLORS[kind], width=1.5, arrow=True)
        label = f"{kind} ({totals[kind]})" if drawn[kind] == totals[kind] else \
            f"{kind} ({drawn[kind]} of {totals[kind]} drawn)"
        canvas.text(x + 30, y + 4, label, size=LABEL, cls="legend")
        x += 48 + text_width(label, LABEL)
    if marks:
        canvas.circle(x + 8, y, 7, cls="legend", fill="none", stroke=COLORS["highlight"],
                      stroke_width=2)
        canvas.text(x + 22, y + 4, "the refusal's instances", size=LABEL, cls="legend")


def dependence_pairs(relation: isl.UnionMap, params: Mapping[str, int], where: str
                     ) -> list[tuple[str, tuple[int, ...], str, tuple[int, ...]]]:
    """Every pair ``(source name, source indices, sink name, sink indices)`` of
    ``relation`` with the parameters fixed, sorted."""
    out = []
    for m in _maps(relation):
        src, dst = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
        n_in = m.dim(isl.dim_type.in_)
        for p in coordinates(fix_params(m, params, where).wrap()):
            out.append((src, p[:n_in], dst, p[n_in:]))
    return sorted(out)
