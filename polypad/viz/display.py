"""Rich display in Jupyter: the HTML behind each object's ``_repr_html_``.

The classes keep a two-line ``_repr_html_`` that imports this module when a
notebook first asks, so that the IR, the analyses and the schedule never
import :mod:`polypad.viz` (nor its pictures) at import time.  Every string that
comes from a user (names, conditions, script text, values) is escaped.  A
picture that cannot be drawn (a symbolic parameter, too many axes) is
replaced by a line saying why: a display must never raise.  Each display is a
box that sets its own text and background colours (:mod:`.tables`), so it
reads in a light or a dark notebook theme.
"""

from __future__ import annotations

from html import escape

from polypad.errors import PolypadError

from .highlight import highlight
from .tables import BOX, MUTED, html_table, shape_text
from .tuning import tuning_html

_BADGE = {"proved": "#2ca02c", "refuted": "#d62728", "unknown": "#b8860b"}


def _badge(kind: str, text: str) -> str:
    return (f'<span style="background:{_BADGE[kind]};color:white;border-radius:3px;'
            f'padding:1px 6px;font-weight:bold">{escape(kind)}</span> {escape(text)}')


def _picture(draw) -> str:
    """An inline SVG from ``draw()``, or a note saying why there is none."""
    try:
        return f"<div>{draw().text}</div>"
    except PolypadError as err:
        return (f'<div style="color:{MUTED};font-style:italic">'
                f"(no picture: {escape(str(err))})</div>")


def primfunc_html(func) -> str:
    """A ``PrimFunc``: its name and the highlighted script."""
    from polypad.script import script

    return (f'<div style="{BOX}"><b>PrimFunc</b> <code>{escape(func.name)}</code>'
            f"{highlight(script(func))}</div>")


def schedule_html(schedule) -> str:
    """A ``Schedule``: the scheduled function and the trace as a table."""
    from polypad.script import script

    steps = [(k, step.primitive, ", ".join(f"{name}={value!r}" for name, value in step.args))
             for k, step in enumerate(schedule.trace, 1)]
    trace = html_table(("#", "primitive", "arguments"), steps) if steps else \
        "<p><i>no primitive applied yet</i></p>"
    tuning = getattr(schedule, "tuning", None)  # what autoschedule found, and how
    found = tuning_html(tuning) if tuning is not None else ""
    return (f'<div style="{BOX}"><b>Schedule</b> of <code>{escape(schedule.func.name)}</code>'
            f"{found}{highlight(script(schedule.func))}<b>trace</b> ({len(steps)} steps)"
            f"{trace}</div>")


def counterexample_html(counterexample, func=None) -> str:
    """A ``Counterexample``: its parts as a table, and the element on its buffer (the
    function's buffer: ``func``, or the one the decider attached)."""
    return f'<div style="{BOX}">{_counterexample_parts(counterexample, func)}</div>'


def _counterexample_parts(counterexample, func=None) -> str:
    from .evidence import can_draw, plot_counterexample

    func = func if func is not None else getattr(counterexample, "func", None)
    rows = [("what goes wrong", counterexample.description)]
    rows += [("instance", str(i)) for i in counterexample.instances]
    if counterexample.element is not None:
        rows.append(("element", str(counterexample.element)))
    rows += [("parameter", f"{k} = {v}") for k, v in counterexample.params.items()]
    rows += [("value", f"{k} = {v}") for k, v in counterexample.values.items()]
    if func is not None:
        rows.append(("in function", func.name))
    out = html_table(("", "counterexample"), rows)
    if clashing(counterexample, func):
        out += _picture(lambda: plot_clash(counterexample, func))
    elif can_draw(counterexample):
        out += _picture(lambda: plot_counterexample(counterexample, func=func))
    return out


def clashing(counterexample, func) -> bool:
    """Whether ``counterexample`` names two statement instances of ``func`` that a
    dependence picture can show (a merge or a schedule refusal)."""
    if func is None or len(counterexample.instances) < 2:
        return False
    from polypad.model import extract

    from .points import dim_names

    try:
        statements = extract(func).statements
    except PolypadError:
        return False
    return all(any(instance.statement in (s.name, s.block)
                   and set(dim_names(s.domain)) <= set(instance.indices) for s in statements)
               for instance in counterexample.instances[:2])


def plot_clash(counterexample, func):
    """The dependence picture of ``func`` with the two instances ringed and joined."""
    from .dependences import plot_dependences

    return plot_dependences(func, focus=counterexample.instances[:2],
                            element=counterexample.element)


def decision_html(decision, func=None) -> str:
    """``Proved``, ``Refuted`` or ``Unknown``: a coloured verdict with its reason; a
    refusal's counterexample as a table and, where its element's buffer has at
    most two axes, a picture."""
    from analyses.evidence import Proved, Refuted, Unknown

    # isinstance, not the class name: deciders return subclasses (Removable is a Proved).
    if isinstance(decision, Proved):
        text = f"by {decision.method}" + (f": {decision.detail}" if decision.detail else "")
        return f'<div style="{BOX}">{_badge("proved", text)}</div>'
    if isinstance(decision, Unknown):
        return f'<div style="{BOX}">{_badge("unknown", decision.reason)}</div>'
    if isinstance(decision, Refuted):
        # the description is the table's first row; the badge does not repeat it
        return (f'<div style="{BOX}">{_badge("refuted", "")}'
                f"{_counterexample_parts(decision.counterexample, func)}</div>")
    return f'<pre style="{BOX}">{escape(str(decision))}</pre>'


def touched_html(touched) -> str:
    """A ``domain_touched`` result: the set, the predicate, and the buffer's grid."""
    from polypad.ir.show import show

    from .touched import plot_touched

    rows = [("buffer", f"{touched.buffer.name}{shape_text(touched.buffer.shape)}"),
            ("kind", touched.kind), ("touched", str(touched)), ("isl set", str(touched.set)),
            ("when", show(touched.predicate)), ("exact", str(touched.exact))]
    return (f'<div style="{BOX}"><b>domain touched</b>{html_table(("", ""), rows)}'
            f"{_picture(lambda: plot_touched(touched))}</div>")


def layout_html(relation) -> str:
    """An index map bound to a shape (a ``LayoutRelation``): its shapes and padding,
    and the logical grid drawn onto the transformed one."""
    from polypad.ir.show import show

    from .layout import plot_layout

    rows = [("index map", repr(relation.index_map)),
            ("logical shape", shape_text(relation.shape)),
            ("transformed shape", shape_text(relation.transformed_shape())),
            ("padding", _padding_text(show(relation.padding_predicate())))]
    return (f'<div style="{BOX}"><b>layout</b>{html_table(("", ""), rows)}'
            f"{_picture(lambda: plot_layout(relation.index_map, relation.shape))}</div>")


def _padding_text(predicate: str) -> str:
    return "none" if predicate == "False" else predicate


def dependences_html(deps) -> str:
    """A ``Dependences``: the three relations in isl notation, and the picture."""
    from .dependences import plot_dependences

    rows = [(kind, str(getattr(deps, kind))) for kind in ("flow", "anti", "output")]
    return (f'<div style="{BOX}"><b>dependences</b> of <code>{escape(deps.func.name)}</code>'
            f"{html_table(('kind', 'isl relation'), rows)}"
            f"{_picture(lambda: plot_dependences(deps))}</div>")


def model_html(model) -> str:
    """A model from :func:`polypad.model.extract`: a table of the statements (domain,
    accesses, schedule) and a picture of their instances."""
    from polypad.ir.show import show

    from .sets import plot_set

    rows = []
    for s in model.statements:
        stmt = show(s.stmt).strip().splitlines()
        rows.append((s.name, s.block or "", stmt[0] if stmt else "", str(s.domain),
                     str(s.reads), str(s.writes), str(s.time)))
    table = html_table(("statement", "block", "code", "domain", "reads", "writes", "schedule"),
                   rows)
    return (f'<div style="{BOX}"><b>model</b> of <code>{escape(model.func.name)}</code>'
            f"{table}{_picture(lambda: plot_set(model.domain()))}</div>")


def kernel_html(kernel) -> str:
    """A built kernel: its target, the bounds verdict, the generated source and,
    once :meth:`~codegen.Kernel.time` has run, its last timing."""
    from polypad.script import script

    from .timing import timing_html

    source = kernel.source if kernel.source is not None else script(kernel.func)
    what = "generated source" if kernel.source is not None else "the function it interprets"
    bounds = f"<p>bounds: {escape(str(kernel.bounds))}</p>" if kernel.bounds is not None else ""
    timing = getattr(kernel, "last_timing", None)
    timed = timing_html(timing, heading="last timing") if timing is not None else ""
    return (f'<div style="{BOX}"><b>Kernel</b> <code>{escape(kernel.func.name)}</code> '
            f"for {escape(kernel.target)} ({what}){bounds}{highlight(source)}{timed}</div>")
