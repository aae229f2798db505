"""The loops whose range a compiled kernel checks at entry.

Every executor refuses, at loop entry, a loop whose range leaves its
counter's dtype (:mod:`polypad.semantics.loop_ranges` says why, and raises
the :class:`~polypad.errors.LoopRangeError`).  The reference executor checks
every loop; a compiled target checks only :func:`checked_loops`: those whose
fit interval arithmetic (:mod:`polypad.model.ranges`) over the enclosing
loops and lets cannot prove.  ``T.serial(16)``, or ``T.serial(m)`` with an
``int32`` ``m`` and counter, needs no check; ``T.serial(n, n + 10)`` gets
one, before the loop (the Numba target's is in :mod:`codegen.numba.checks`),
and a failed check is reported with
:func:`~polypad.semantics.loop_ranges.range_error`, as the reference
executor reports it.
"""

from __future__ import annotations

from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.nodes import PrimFunc
from polypad.ir.visitor import walk
from polypad.model.ranges import Range, Ranges, dtype_range


def _sides(loop: ir.For, ranges: Ranges) -> tuple[bool, bool]:
    """Whether ``loop``'s first value may fall below, and its last above, its dtype."""
    lo, hi = dtype_range(loop.var.dtype)
    first, extent = ranges.of(loop.min), ranges.of(loop.extent)
    if extent[1] <= 0:
        return False, False  # never runs: takes no value
    return first[0] < lo, first[1] + extent[1] - 1 > hi


def _counter_range(loop: ir.For, ranges: Ranges) -> Range:
    """The values ``loop``'s counter can take once its range is known to fit."""
    lo, hi = dtype_range(loop.var.dtype)
    first, extent = ranges.of(loop.min), ranges.of(loop.extent)
    low = min(max(first[0], lo), hi)
    return low, max(low, min(first[1] + extent[1] - 1, hi))


def checked_loops(func: PrimFunc) -> dict[int, tuple[int, ir.For, bool, bool]]:
    """The loops of lowered ``func`` whose range may not fit their counter's dtype.

    Keyed by ``id`` of the ``For``; each value is the loop's number (its place
    in walk order among these, which a failed check reports), the loop, and
    whether its first value may be too low and its last too high.  A counter
    or let used again elsewhere takes the union of its ranges.
    """
    bounds: dict[ir.Var, Range] = {}
    ranges = Ranges(bounds)
    found: dict[int, tuple[int, ir.For, bool, bool]] = {}

    def record(var: ir.Var, new: Range | None) -> None:
        nonlocal ranges
        old = bounds.get(var)
        if new is None or old == new:
            return
        bounds[var] = new if old is None else (min(old[0], new[0]), max(old[1], new[1]))
        ranges = Ranges(bounds)  # its memo holds ranges under the old bounds

    for node in walk(func.body):  # pre-order: a loop's counter is bounded before its body
        if isinstance(node, ir.For) and dtypes.is_int(node.var.dtype):
            low, high = _sides(node, ranges)
            if (low or high) and id(node) not in found:
                found[id(node)] = (len(found), node, low, high)
            record(node.var, _counter_range(node, ranges))
        elif isinstance(node, ir.LetStmt):
            record(node.var, ranges.of(node.value))
    return found


def holds_check(loop: ir.For, checked: dict[int, tuple]) -> bool:
    """Whether a loop nested in ``loop`` (not ``loop`` itself) is range-checked."""
    return any(isinstance(node, ir.For) and id(node) in checked for node in walk(loop.body))
