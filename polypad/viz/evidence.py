"""``plot_counterexample``: the element a refusal is about, on its buffer's grid.

A :class:`~analyses.Counterexample` names statement instances and one buffer
element.  The picture draws the buffer with that element in red, cells
outside the buffer's shape dashed (an out-of-bounds access lies there), and
the instances listed beneath.  The shape comes from the function the
decision was about: the one given, or the one a decider attached to the
counterexample (``counterexample.func``).  A large buffer is drawn as a
window around the element; one of more than two axes as the 2-D slice that
holds it.  Only without any function is the shape unknown; the grid is
then just large enough to hold the element, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

from .cells import Cell, draw_buffer
from .svg import CAPTION, COLORS, LABEL, Canvas, Svg


def buffer_shape(func, name: str) -> tuple[int, ...] | None:
    """The int shape of buffer ``name`` in ``func``, or None where unknown or symbolic."""
    if func is None:
        return None
    from polypad.errors import NotFoundError
    from polypad.ir.locate import find_buffer

    try:
        shape = find_buffer(func, name).shape
    except NotFoundError:
        return None
    return tuple(shape) if all(isinstance(e, int) for e in shape) else None


def can_draw(counterexample) -> bool:
    """True when the counterexample names an element of a buffer with an axis."""
    element = getattr(counterexample, "element", None)
    return element is not None and len(element.indices) >= 1


def plot_counterexample(counterexample, *, func=None,
                        shape: Sequence[int] | None = None) -> Svg:
    """Draw ``counterexample``'s element on its buffer, with its instances listed.

    ``shape``, or ``func`` (the ``PrimFunc`` the decision was about; by default
    the one the decider attached, ``counterexample.func``), gives the buffer's
    extents.  Cells of class ``cell`` are the buffer, ``cell outside``
    positions beyond its shape, and the element carries ``highlight``.
    """
    from analyses.evidence import Counterexample

    where = "plot_counterexample"
    expect(counterexample, Counterexample, "counterexample", where)
    if counterexample.element is None:
        raise ArgumentValueError(f"{where}: the counterexample names no buffer element")
    element = counterexample.element
    index = tuple(element.indices)
    if not index:
        raise ArgumentValueError(f"{where}: {element} has no axis to draw")
    if shape is None:
        shape = buffer_shape(func if func is not None else getattr(counterexample, "func", None),
                             element.buffer)
    elif not (isinstance(shape, (tuple, list)) and all(isinstance(e, int) for e in shape)):
        raise ArgumentTypeError(f"{where}: parameter shape takes a tuple of ints")
    known = shape is not None and len(shape) == len(index)
    grid = tuple(shape) if known else tuple(max(2, v + 2) for v in index)
    # The slice of a buffer of three or more axes that holds the element.
    lead, index2, grid2 = index[:-2], index[-2:], grid[-2:]
    # Draw beyond the shape up to the element, so an out-of-bounds one shows where it is.
    extent = tuple(max(g, v + 1) for g, v in zip(grid2, index2))

    def look(at: tuple[int, ...]) -> Cell:
        inside = all(0 <= v < g for v, g in zip(at, grid2)) and \
            all(0 <= v < g for v, g in zip(lead, grid[:-2]))
        name = f"{element.buffer}[{', '.join(map(str, (*lead, *at)))}]"
        if tuple(at) == index2:
            cls = "cell highlight" + ("" if inside else " outside")
            tip = name + " (the counterexample's element)" + \
                ("" if inside else " (outside the buffer)")
            return Cell(cls, COLORS["highlight"], tooltip=tip)
        if inside:
            return Cell("cell", COLORS["cell"], tooltip=name)
        return Cell("cell outside", COLORS["outside"], tooltip=name + " (outside the buffer)",
                    stroke="#999999", dash="3 2")

    canvas = Canvas()
    caption = f"{element}" + (f" in {element.buffer}{list(grid)}" if known else "")
    canvas.text(0, CAPTION, caption, size=CAPTION, weight="bold", cls="caption")
    title = None
    if lead:
        title = f"{element.buffer}[{', '.join(map(str, lead))}, :, :]"
    drawn = draw_buffer(canvas, 0, CAPTION + 10, extent, look, focus=[index2], title=title)
    y = drawn.bottom + 20
    if not known:
        canvas.text(0, y, "(buffer shape not known here: pass func=...)", size=LABEL,
                    cls="note", color=COLORS["muted"])
        y += 18
    for instance in counterexample.instances:
        canvas.circle(6, y - 4, 4, cls="instance", fill=COLORS["highlight"])
        canvas.text(16, y, str(instance), size=LABEL, cls="instance-label")
        y += 18
    return canvas.render(str(counterexample))
