"""Pictures of iteration spaces, layouts, dependences and proofs, as SVG text.

Every function returns an :class:`Svg` (``.text`` is the SVG; Jupyter shows it
through ``_repr_svg_``).  The pictures are plain SVG, with no JavaScript, so
they survive nbconvert's HTML export and static notebook viewers; nothing
beyond the core install is needed.

>>> from polypad import viz
>>> viz.plot_set("{ [i, j] : 0 <= i < 3 and 0 <= j < 4 }")
>>> viz.plot_layout(pp.IndexMap(lambda i: [i // 4, i % 4]), (14,))
>>> viz.plot_dependences(analyses.dependences(f))
>>> viz.plot_counterexample(decision.counterexample, func=f)
>>> viz.plot_touched(analyses.domain_touched(f, "A"))
>>> viz.plot_timing(kernel.time(a, b, against=lambda a, b: a.sum()))
>>> viz.interact_set("[n] -> { [i] : 0 <= i < n }", params={"n": range(1, 9)})  # ipywidgets

Objects show themselves in notebooks (``_repr_html_``) through
:mod:`polypad.viz.display`, which they import only when asked.
"""

from .dependences import plot_dependences
from .evidence import plot_counterexample
from .highlight import highlight
from .interact import interact_set
from .layout import plot_layout
from .sets import plot_set
from .svg import Svg
from .timing import plot_timing
from .touched import plot_touched
from .tuning import live_progress, plot_speedups, plot_tuning

__all__ = ["Svg", "highlight", "interact_set", "live_progress", "plot_counterexample",
           "plot_dependences", "plot_layout", "plot_set", "plot_speedups", "plot_timing",
           "plot_touched", "plot_tuning"]
