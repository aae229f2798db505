"""How a duration reads: ``seconds_text(0.00123)`` is ``"1.23 ms"``.

Support for every row: :class:`codegen.timing.Timing` prints its numbers
with it, and :mod:`polypad.viz.timing` labels its bars with it, without
either importing the other.
"""

from __future__ import annotations


def seconds_text(seconds: float) -> str:
    """``seconds`` with three significant digits in s, ms, µs or ns."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
