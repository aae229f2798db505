"""A search's progress as a picture: every timed candidate, and the best so far.

The x axis is the search's elapsed seconds, the y axis a candidate's median
time on a log scale (candidates differ by orders of magnitude), so that the
best-so-far staircase and the spread of the candidates read at once.  The
tuning is any object with the fields of :class:`polypad.tuner.Tuning`
(this package never imports the tuner).  Like every picture here it paints
its own background and the colour of every text (:mod:`.svg`).
"""

from __future__ import annotations

import math
from html import escape

from .svg import COLORS, Canvas, Svg
from .tables import BOX, html_table
from .timing import seconds_text

_W, _H = 360.0, 170.0
_LEFT, _TOP = 64.0, 26.0


def plot_tuning(tuning) -> Svg:
    """The best-so-far curve of ``tuning`` (class ``best``), each timed candidate a dot
    (class ``candidate``; the plain function's class ``candidate plain``)."""
    timed = [t for t in tuning.tried if t.status == "ok" and t.seconds]
    canvas = Canvas()
    canvas.text(0, 14, f"search of {tuning.func}: median time of each candidate timed",
                size=12, cls="caption title", weight="bold")
    if not timed:
        canvas.text(0, 40, "no candidate timed", cls="caption")
        return canvas.render(f"search of {tuning.func}")
    lo = min(t.seconds for t in timed)
    hi = max(t.seconds for t in timed)
    lo_log, hi_log = math.log10(lo), math.log10(hi)
    span = max(hi_log - lo_log, 1e-9)
    end = max(max(t.elapsed for t in timed), 1e-9)

    def x(elapsed: float) -> float:
        return _LEFT + _W * elapsed / end

    def y(seconds: float) -> float:
        return _TOP + _H * (hi_log - math.log10(seconds)) / span if span > 1e-9 else \
            _TOP + _H / 2

    canvas.line(_LEFT, _TOP, _LEFT, _TOP + _H, cls="axis", color=COLORS["grid"])
    canvas.line(_LEFT, _TOP + _H, _LEFT + _W, _TOP + _H, cls="axis", color=COLORS["grid"])
    canvas.text(_LEFT - 4, _TOP + 4, seconds_text(hi), size=10, anchor="end", cls="tick")
    canvas.text(_LEFT - 4, _TOP + _H, seconds_text(lo), size=10, anchor="end", cls="tick")
    canvas.text(_LEFT, _TOP + _H + 14, "0 s", size=10, anchor="middle", cls="tick")
    canvas.text(_LEFT + _W, _TOP + _H + 14, f"{end:.3g} s", size=10, anchor="middle",
                cls="tick")
    points = []
    best = None
    for t in timed:
        best = t.seconds if best is None else min(best, t.seconds)
        if points:
            points.append((x(t.elapsed), points[-1][1]))
        points.append((x(t.elapsed), y(best)))
        plain = t.key == timed[0].key and t is timed[0]
        canvas.circle(x(t.elapsed), y(t.seconds), 2.5, cls="candidate plain" if plain
                      else "candidate", fill=COLORS["anti"] if plain else "none",
                      stroke=COLORS["anti"] if plain else COLORS["muted"],
                      title=f"{t.key}: {seconds_text(t.seconds)}")
    d = "M " + " L ".join(f"{px:.2f} {py:.2f}" for px, py in points)
    canvas.path(d, cls="best", color=COLORS["flow"], width=2, layer="shapes",
                bounds=(_LEFT + _W, _TOP + _H))
    caption = f"best {seconds_text(best)}"
    if tuning.plain_seconds:
        caption += f"; plain {seconds_text(tuning.plain_seconds)} " \
                   f"({tuning.plain_seconds / best:.3g}x)"
    canvas.text(0, _TOP + _H + 32, caption + " -- line: best so far; orange: the plain nest",
                cls="caption")
    return canvas.render(f"search of {tuning.func}")


def tuning_html(tuning) -> str:
    """A search as HTML: the summary, :func:`plot_tuning`'s curve and the trace."""
    steps = [(k, line) for k, line in enumerate(tuning.trace_text.splitlines(), 1)]
    trace = html_table(("#", "step"), steps) if steps else \
        "<p><i>the plain nest: no step</i></p>"
    summary = "<br>".join(escape(line) for line in tuning.summary().splitlines())
    curve = "" if tuning.from_log else f"<div>{plot_tuning(tuning).text}</div>"
    return (f'<div style="{BOX}"><b>autoschedule</b> of <code>{escape(tuning.func)}</code>'
            f"<p>{summary}</p>{curve}<b>trace</b>{trace}</div>")


def plot_speedups(results: dict) -> Svg:
    """Bars of speedup over the plain nest, one per kernel: ``results`` maps a kernel's
    name to a tuning (its ``speedup``) or to a number.  A line marks 1x."""
    rows = [(name, r if isinstance(r, int | float) else (r.speedup or 1.0))
            for name, r in results.items()]
    canvas = Canvas()
    canvas.text(0, 14, "autoschedule: speedup over the plain nest", size=12,
                cls="caption title", weight="bold")
    if not rows:
        canvas.text(0, 40, "no kernel", cls="caption")
        return canvas.render("speedups")
    left = max(len(name) for name, _ in rows) * 7.5 + 12
    top, row, bar, width = 26.0, 24.0, 14.0, 300.0
    scale = max(max(s for _, s in rows), 1.0)
    for k, (name, speedup) in enumerate(rows):
        y = top + k * row
        canvas.text(0, y + bar - 3, name, cls="label kernel")
        canvas.rect(left, y, width * speedup / scale, bar, cls="bar speedup",
                    fill=COLORS["flow"], stroke="none", title=f"{name}: {speedup:.3g}x")
        canvas.text(left + width * speedup / scale + 6, y + bar - 3, f"{speedup:.3g}x",
                    cls="value")
    one = left + width / scale
    canvas.line(one, top - 4, one, top + len(rows) * row, cls="axis one", color=COLORS["grid"],
                dash="3 3")
    canvas.text(one, top + len(rows) * row + 12, "1x", size=10, anchor="middle", cls="tick")
    return canvas.render("speedups")


def live_progress():
    """A ``progress`` callback for ``autoschedule`` in a notebook: one output that
    redraws the curve of :func:`plot_tuning` after each candidate (its last picture
    stays in the saved notebook).  Outside IPython it does nothing."""
    try:
        from IPython.display import SVG, display
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return lambda tuning: None
    handle = None

    def show(tuning) -> None:
        nonlocal handle
        picture = SVG(plot_tuning(tuning).text)
        if handle is None:
            handle = display(picture, display_id=True)
        else:
            handle.update(picture)

    return show
