"""The time budget of a decider: ``budget=`` on every public analysis.

:func:`decider` gives a function returning a decision a keyword-only
``budget`` (seconds; ``None`` for :func:`polypad.budget.default_budget`):
when it runs out, the answer is ``Unknown`` saying so.  :func:`bounded` does
the same for an analysis that returns no decision (a touched region, the
dependences); running out raises :class:`polypad.errors.BudgetExceeded`.
Called from inside another budgeted call, both share the outer deadline and
let the error rise to it (see :func:`polypad.budget.run_within`).
"""

from __future__ import annotations

import functools

from polypad.budget import run_within

from .evidence import Unknown


def decider(fn):
    """``fn`` with a ``budget=`` keyword; running out of it answers ``Unknown``."""

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        return run_within(budget, lambda: fn(*args, **kwargs), lambda err: Unknown(str(err)))

    return budgeted


def bounded(fn):
    """``fn`` with a ``budget=`` keyword; running out of it raises ``BudgetExceeded``."""

    def give_up(err):
        raise err

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        return run_within(budget, lambda: fn(*args, **kwargs), give_up)

    return budgeted
