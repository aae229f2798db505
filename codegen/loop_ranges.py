"""Loop ranges that must fit the loop variable's dtype, checked at loop entry.

The analyses take ``for i in T.serial(lo, lo + k)`` to give ``i`` exactly the
values ``lo .. lo + k - 1``.  An ``int32`` counter cannot hold ``2**31``, so
with ``lo = 2147483640`` and ``k = 10`` an executor would have to wrap it (or,
as Numba did, wrap the end and run no iteration), and what the analyses
proved would not be what runs.  Both executors therefore refuse, at loop
entry, a non-empty loop whose first value ``min`` or last value
``min + extent - 1`` lies outside its counter's dtype, with a
:class:`~polypad.errors.LoopRangeError`.  Constant ranges that do not fit are
already refused by ``verify``.

The reference executor checks every loop (:func:`check_range`).  The Numba
emitter checks only :func:`checked_loops`: those whose fit interval
arithmetic (:mod:`polypad.model.ranges`) over the enclosing loops and lets
cannot prove.  ``T.serial(16)``, or ``T.serial(m)`` with an ``int32`` ``m``
and counter, needs no check; ``T.serial(n, n + 10)`` gets one, before the
loop, in the manner of :mod:`.checks`::

    if n > 2147483647 - (10 - 1):
        raise AssertionError("polypad.loop_range", 0, n, 10)

The test is written so that it cannot overflow itself in 64 bits, and only
its sides that may fail are written.  The kernel's call wrapper turns the
``AssertionError`` into the same ``LoopRangeError`` the reference executor
raises (:func:`kernel_range_error`).  A check inside a parallel loop makes
that loop run serially, as an assumption check does.
"""

from __future__ import annotations

from polypad.errors import LoopRangeError
from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.nodes import PrimFunc
from polypad.ir.visitor import walk
from polypad.model.ranges import Range, Ranges, dtype_range
from polypad.semantics.loop_ranges import range_error

from .pyexpr import ADD, ExprPrinter, constant

#: The first argument of the ``AssertionError`` a failed range check raises.
MARKER = "polypad.loop_range"


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


def check_lines(loop: ir.For, number: int, low: bool, high: bool,
                expr: ExprPrinter) -> list[str]:
    """The two lines (unindented) that check ``loop``'s range, check number ``number``.

    ``low`` and ``high`` say which sides to test.  ``min > HI - (extent - 1)``
    rather than ``min + extent - 1 > HI``: with ``extent > 0`` it stays inside
    64 bits for 64-bit operands.
    """
    dtype = loop.var.dtype
    lo, hi = dtype_range(dtype)
    first, extent = expr.operand(loop.min, ADD + 1), expr.operand(loop.extent, ADD + 1)
    one = constant(1, loop.extent.dtype)[0]
    tests = []
    if low:
        tests.append(f"{first} < {constant(lo, dtype)[0]}")
    if high:
        tests.append(f"{first} > {constant(hi, dtype)[0]} - ({extent} - {one})")
    condition = tests[0] if len(tests) == 1 else f"({' or '.join(tests)})"
    if not (isinstance(loop.extent, ir.IntImm) and loop.extent.value > 0):
        condition = f"{extent} > {constant(0, loop.extent.dtype)[0]} and {condition}"
    args = ", ".join([repr(MARKER), str(number), expr(loop.min), expr(loop.extent)])
    return [f"if {condition}:", f"    raise AssertionError({args})"]


def kernel_range_error(func: PrimFunc, error: BaseException) -> LoopRangeError | None:
    """The :class:`LoopRangeError` for what a range check in ``func``'s kernel raised."""
    if not (isinstance(error, AssertionError) and error.args[:1] == (MARKER,)):
        return None
    number, first, extent = error.args[1:4]
    loop = next(entry[1] for entry in checked_loops(func).values() if entry[0] == number)
    return range_error(func, loop, int(first), int(extent))
