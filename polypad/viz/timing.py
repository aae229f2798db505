"""A kernel's timing as a picture: one bar per contender, each run a dot on it.

The bars are the medians, on one linear scale that starts at zero, so their
lengths compare the way the ratio does; the dots are every counted run, so a
noisy measurement shows as spread rather than hiding in a median (a run far
slower than the medians is pinned to the axis end, and says so).  Compile
time is written beside, not drawn: it is often a million times a run and
would flatten the bars.  The timing is any object with the fields of
:class:`codegen.timing.Timing` (this package never imports :mod:`codegen`).
"""

from __future__ import annotations

from html import escape

from polypad.durations import seconds_text

from .svg import COLORS, LABEL, Canvas, Svg, text_width
from .tables import BOX, html_table

_WIDTH = 260.0  # pixels for the longest run
_ROW = 26.0  # pixels between bars
_BAR = 14.0  # bar thickness
_CLIP = 3.0  # the axis ends at most this many times the larger median
_FILL = {"kernel": COLORS["flow"], "peer": COLORS["anti"]}

__all__ = ["plot_timing", "seconds_text", "timing_html", "timing_rows"]


def _contenders(timing) -> list[tuple[str, str, tuple[float, ...], float]]:
    """(role, label, runs, median) for the kernel and, when there is one, the peer."""
    rows = [("kernel", f"{timing.name} ({timing.target})", timing.runs, timing.median)]
    if timing.peer_runs:
        rows.append(("peer", timing.peer, timing.peer_runs, timing.peer_median))
    return rows


def plot_timing(timing) -> Svg:
    """A bar chart of ``timing`` (a :class:`codegen.timing.Timing`): the median of
    the kernel's runs and of its peer's as bars (class ``bar kernel``, ``bar
    peer``), every run as a dot (class ``run``), and the ratio and compile time
    as captions.  The axis starts at zero and ends at the slowest run, or at
    three times the larger median when a run took longer: such runs sit at the
    axis end in red (class ``run beyond``) and a caption says how slow they were.

    >>> plot_timing(kernel.time(a, b, against=lambda a, b: a.sum()))
    """
    rows = _contenders(timing)
    # A run interrupted by the machine can take many medians; on its scale the bars vanish.
    slowest = max(max(runs) for _, _, runs, _ in rows)
    scale = min(slowest, _CLIP * max(median for *_, median in rows)) or 1.0
    left = max(text_width(label, LABEL) for _, label, _, _ in rows) + 12
    canvas = Canvas()
    canvas.text(0, 14, f"median of {len(timing.runs)} runs (dots: each run)",
                size=12, cls="caption title", weight="bold")
    top = 26.0
    for k, (role, label, runs, median) in enumerate(rows):
        y = top + k * _ROW
        canvas.text(0, y + _BAR - 3, label, cls=f"label {role}")
        canvas.rect(left, y, _WIDTH * median / scale, _BAR, cls=f"bar {role}",
                    fill=_FILL[role], stroke="none",
                    title=f"{label}: median {seconds_text(median)}")
        for n, run in enumerate(runs, 1):
            beyond = run > scale
            canvas.circle(left + _WIDTH * min(run, scale) / scale, y + _BAR / 2, 2.2,
                          cls=f"run {role}" + (" beyond" if beyond else ""), fill="none",
                          stroke=COLORS["highlight"] if beyond else COLORS["text"],
                          title=f"run {n}: {seconds_text(run)}"
                          + (" (beyond the axis)" if beyond else ""))
        canvas.text(left + _WIDTH + 10, y + _BAR - 3, seconds_text(median),
                    cls=f"value {role}")
    axis = top + len(rows) * _ROW
    canvas.line(left, top - 4, left, axis, cls="axis", color=COLORS["grid"])
    canvas.line(left, axis, left + _WIDTH, axis, cls="axis", color=COLORS["grid"])
    canvas.text(left, axis + 12, "0", size=10, anchor="middle", cls="tick")
    canvas.text(left + _WIDTH, axis + 12, seconds_text(scale), size=10, anchor="middle",
                cls="tick")
    y = axis + 30
    beyond = sum(run > scale for _, _, runs, _ in rows for run in runs)
    if beyond:
        runs = "1 slower run" if beyond == 1 else f"{beyond} slower runs"
        canvas.text(0, y, f"{runs} (red, up to {seconds_text(slowest)}) drawn at the axis end",
                    cls="caption beyond")
        y += 16
    for line in _captions(timing):
        canvas.text(0, y, line, cls="caption")
        y += 16
    return canvas.render(f"timing of {timing.name}")


def _captions(timing) -> list[str]:
    lines = []
    if timing.peer_runs:
        ratio = "n/a" if timing.ratio is None else f"{timing.ratio:.3g}"
        lines.append(f"ratio {timing.peer} / kernel = {ratio} (above 1: the kernel is faster)")
    if timing.compile_s is not None:
        lines.append(f"compile {seconds_text(timing.compile_s)}, not in the runs")
    return lines


def timing_rows(timing) -> list[tuple[str, str]]:
    """The numbers of ``timing`` as (what, value) rows for a table."""
    rows = [("kernel", f"{timing.name} ({timing.target})"), ("runs", str(len(timing.runs))),
            ("median", seconds_text(timing.median)), ("min", seconds_text(timing.min)),
            ("compile", "compiled before timing" if timing.compile_s is None
             else seconds_text(timing.compile_s))]
    if timing.peer_runs:
        ratio = "n/a" if timing.ratio is None else f"{timing.ratio:.3g}"
        rows += [(f"{timing.peer} median", seconds_text(timing.peer_median)),
                 (f"{timing.peer} min", seconds_text(timing.peer_min)),
                 ("ratio", f"{ratio} ({timing.peer} median / kernel median)")]
    return rows


def timing_html(timing, *, heading: str = "timing") -> str:
    """A timing as HTML: a table of its numbers and :func:`plot_timing`'s chart."""
    return (f'<div style="{BOX}"><b>{escape(heading)}</b>'
            f"{html_table(('', ''), timing_rows(timing))}<div>{plot_timing(timing).text}</div>"
            "</div>")
