"""Schedule primitives: merge family (being written)."""

from __future__ import annotations


class MergePrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""
