"""``plot_counterexample``: the element a refusal is about, on its buffer's grid.

A :class:`~analyses.Counterexample` names statement instances and one buffer
element.  The picture draws the buffer (at most two axes) with that element
in red, cells outside the buffer's shape dashed (an out-of-bounds access lies
there), and the instances listed beneath.  Without the function the buffer's
shape is unknown, and the grid is just large enough to hold the element.
"""

from __future__ import annotations

from collections.abc import Sequence

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

from .grid import draw_ticks
from .svg import COLORS, Canvas, Svg

CELL = 26.0


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
    """True when the counterexample names an element of a buffer with at most two axes."""
    element = getattr(counterexample, "element", None)
    return element is not None and 1 <= len(element.indices) <= 2


def plot_counterexample(counterexample, *, func=None,
                        shape: Sequence[int] | None = None) -> Svg:
    """Draw ``counterexample``'s element on its buffer, with its instances listed.

    ``func`` (the ``PrimFunc`` the decision was about) or ``shape`` gives the
    buffer's extents; cells of class ``cell`` are the buffer, ``cell outside``
    positions beyond its shape, and the element carries ``highlight``.
    """
    from analyses.evidence import Counterexample

    where = "plot_counterexample"
    expect(counterexample, Counterexample, "counterexample", where)
    if counterexample.element is None:
        raise ArgumentValueError(f"{where}: the counterexample names no buffer element")
    element = counterexample.element
    index = tuple(element.indices)
    if not 1 <= len(index) <= 2:
        raise ArgumentValueError(f"{where}: {element} has {len(index)} axes; a picture shows "
                                 "one or two")
    if shape is None:
        shape = buffer_shape(func, element.buffer)
    elif not (isinstance(shape, (tuple, list)) and all(isinstance(e, int) for e in shape)):
        raise ArgumentTypeError(f"{where}: parameter shape takes a tuple of ints")
    known = shape is not None and len(shape) == len(index)
    grid = tuple(shape) if known else tuple(max(2, v + 2) for v in index)
    # Draw beyond the shape up to the element, so an out-of-bounds one shows where it is.
    extent = tuple(max(g, v + 1) for g, v in zip(grid, index))
    rows, cols = (1, extent[0]) if len(extent) == 1 else extent
    if rows * cols > 4096:
        raise ArgumentValueError(f"{where}: the buffer {element.buffer} is too large to draw")
    at = (0, index[0]) if len(index) == 1 else index
    inside_rows, inside_cols = (1, grid[0]) if len(grid) == 1 else grid

    canvas = Canvas()
    caption = f"{element}" + (f" in {element.buffer}{list(grid)}" if known else "")
    canvas.text(0, 12, caption, size=12, weight="bold", cls="caption")
    left, top = 24.0, 34.0
    draw_ticks(canvas, left, top, cols, rows if len(index) == 2 else 0, cell=CELL)
    for row in range(rows):
        for col in range(cols):
            inside = row < inside_rows and col < inside_cols
            name = f"{element.buffer}[{col if len(index) == 1 else f'{row}, {col}'}]"
            if (row, col) == tuple(at):
                cls, fill = "cell highlight", COLORS["highlight"]
                name += " (the counterexample's element)"
                if not inside:
                    cls += " outside"
                    name += " (outside the buffer)"
            elif inside:
                cls, fill = "cell", COLORS["cell"]
            else:
                cls, fill = "cell outside", "#f4f4f4"
                name += " (outside the buffer)"
            canvas.rect(left + col * CELL, top + row * CELL, CELL, CELL, cls=cls, fill=fill,
                        title=name, stroke=COLORS["grid"] if inside else "#bbbbbb")
    y = top + rows * CELL + 18
    if not known:
        canvas.text(0, y, "(buffer shape not known here: pass func=...)", size=10,
                    cls="note")
        y += 16
    for instance in counterexample.instances:
        canvas.circle(6, y - 4, 4, cls="instance", fill=COLORS["highlight"])
        canvas.text(16, y, str(instance), size=11, cls="instance-label")
        y += 16
    return canvas.render(str(counterexample))
