"""Schedule primitives: layout family (being written)."""

from __future__ import annotations


class LayoutPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""
