"""The front door of a decider: the argument check and ``budget=`` of every
public analysis.

:func:`decider` gives a function returning a decision a keyword-only
``budget`` (seconds; ``None`` for :func:`polypad.budget.default_budget`):
when it runs out, the answer is ``Unknown`` saying so.  :func:`bounded` does
the same for an analysis that returns no decision (a touched region, the
dependences); running out raises :class:`polypad.errors.BudgetExceeded`.
Called from inside another budgeted call, both share the outer deadline and
let the error rise to it (see :func:`polypad.budget.run_within`).

Both check the arguments first: by convention a parameter called ``f`` is
the function under analysis and must be a :class:`~polypad.ir.nodes.PrimFunc`
(else :class:`~polypad.errors.ArgumentTypeError`, naming the analysis);
each analysis checks its other parameters itself.

Both run the analysis on a deep worker when an argument is a deep tree
(:func:`polypad.ir.deep.deep_entry`): every walker under a decider may
recurse as deep as the tree, never raising ``RecursionError``.
"""

from __future__ import annotations

import functools
import inspect

from polypad.arguments import expect, expect_budget
from polypad.budget import run_within
from polypad.ir.deep import deep_entry
from polypad.ir.nodes import PrimFunc

from .evidence import Unknown


def decider(fn):
    """``fn`` with a ``budget=`` keyword; running out of it answers ``Unknown``."""
    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        check(args, kwargs, budget)
        return run_within(budget, lambda: fn(*args, **kwargs), lambda err: Unknown(str(err)))

    return deep_entry(budgeted)


def bounded(fn):
    """``fn`` with a ``budget=`` keyword; running out of it raises ``BudgetExceeded``."""

    def give_up(err):
        raise err

    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        check(args, kwargs, budget)
        return run_within(budget, lambda: fn(*args, **kwargs), give_up)

    return deep_entry(budgeted)


def _front_door(fn):
    """A check of ``fn``'s ``f`` (a PrimFunc, when ``fn`` has that parameter) and budget."""
    where = fn.__name__
    params = list(inspect.signature(fn).parameters)
    position = params.index("f") if "f" in params else None

    def check(args: tuple, kwargs: dict, budget) -> None:
        if position is not None:
            if position < len(args):
                expect(args[position], PrimFunc, "f", where)
            elif "f" in kwargs:
                expect(kwargs["f"], PrimFunc, "f", where)
        expect_budget(budget, where)

    return check
