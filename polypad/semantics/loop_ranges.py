"""Loop ranges that must fit the loop variable's dtype, checked at loop entry.

The analyses take ``for i in T.serial(lo, lo + k)`` to give ``i`` exactly the
values ``lo .. lo + k - 1``.  An ``int32`` counter cannot hold ``2**31``, so
with ``lo = 2147483640`` and ``k = 10`` an executor would have to wrap it (or,
as Numba did, wrap the end and run no iteration), and what the analyses
proved would not be what runs.  Every executor therefore refuses, at loop
entry, a non-empty loop whose first value ``min`` or last value
``min + extent - 1`` lies outside its counter's dtype, with a
:class:`~polypad.errors.LoopRangeError` (:func:`range_error`).  Constant
ranges that do not fit are already refused by ``verify``.

The reference executor checks every loop (:func:`check_range`); a compiled
target checks only the loops whose fit it cannot prove
(:func:`codegen.loop_ranges.checked_loops`), and reports a failure with the
same error.
"""

from __future__ import annotations

from polypad.errors import LoopRangeError
from polypad.ir import nodes as ir
from polypad.ir.location import source_location
from polypad.ir.nodes import PrimFunc
from polypad.model.ranges import dtype_range


def range_error(func: PrimFunc, loop: ir.For, first: int, extent: int) -> LoopRangeError:
    """The error for ``loop`` of ``func`` entered with ``min = first``, ``extent``::

        loop 'i' of 'f' at f.py:4 runs from 2147483640 to 2147483649 (min 2147483640,
        extent 10), outside the range [-2147483648, 2147483647] of its int32 counter
    """
    dtype, last = loop.var.dtype, first + extent - 1
    lo, hi = dtype_range(dtype)
    return LoopRangeError(
        f"loop {loop.var.name!r} of {func.name!r}{source_location(loop)} runs from {first} to "
        f"{last} (min {first}, extent {extent}), outside the range [{lo}, {hi}] of its "
        f"{dtype} counter", var=loop.var.name, dtype=dtype, first=first, last=last)


def check_range(func: PrimFunc, loop: ir.For, first: int, extent: int) -> None:
    """Raise :class:`LoopRangeError` unless a loop entered with these values fits."""
    lo, hi = dtype_range(loop.var.dtype)
    if extent > 0 and not (lo <= first and first + extent - 1 <= hi):
        raise range_error(func, loop, first, extent)
