"""The time budget of a pass: ``budget=`` on every pass.

A pass that runs out of its budget (seconds; ``None`` for
:func:`polypad.budget.default_budget`) returns its input unchanged: half a
rewrite is never returned.
"""

from __future__ import annotations

import functools

from polypad.budget import run_within


def budgeted_pass(fn):
    """``fn(func, **options)`` with a ``budget=`` keyword; running out returns ``func``."""

    @functools.wraps(fn)
    def budgeted(func, *args, budget: float | None = None, **kwargs):
        return run_within(budget, lambda: fn(func, *args, **kwargs), lambda err: func)

    return budgeted
