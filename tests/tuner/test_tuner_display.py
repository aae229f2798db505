"""The rich display of a search: the best-so-far curve (theme-safe SVG) and the trace."""

from __future__ import annotations

from polypad.tuner.report import Tried, Tuning
from polypad.viz.tuning import plot_tuning, tuning_html


def _tuning() -> Tuning:
    trace = "sch.parallel(loop='i')\nsch.vectorize(loop='j')"
    tuning = Tuning("matmul", "h", "numba", space=10, best_key="b", best_seconds=1e-3,
                    plain_seconds=4e-3, trace_text=trace, checked_against="reference executor")
    tuning.tried = [Tried("plain", "ok", 4e-3, 0.5), Tried("a", "refused", None, 0.6),
                    Tried("b", "ok", 1e-3, 1.0), Tried("c", "ok", 2e-3, 1.5)]
    return tuning


def test_the_curve_has_a_dot_per_timed_candidate_and_the_best_so_far():
    svg = plot_tuning(_tuning()).text
    assert svg.count('class="candidate') == 3
    assert svg.count('class="candidate plain"') == 1
    assert svg.count('class="best"') == 1
    assert 'class="background"' in svg  # paints its own background, for dark themes
    assert "best 1 ms; plain 4 ms (4x)" in svg


def test_the_html_shows_the_summary_the_curve_and_the_trace():
    html = tuning_html(_tuning())
    assert "sch.vectorize(loop=&#x27;j&#x27;)" in html
    assert "<svg" in html and "4x the plain nest" in html
    assert "results checked against the reference executor" in html
