"""Schedule primitives: loop family (being written)."""

from __future__ import annotations


class LoopPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""
