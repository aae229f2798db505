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
each analysis checks its other parameters itself.  An ISL error inside a
decider answers ``Unknown`` with its message.
"""

from __future__ import annotations

import functools
import inspect

import islpy as isl

from polypad.arguments import expect, expect_budget
from polypad.budget import is_exhausted, run_within
from polypad.ir.nodes import PrimFunc

from .evidence import Unknown


def decider(fn):
    """``fn`` with a ``budget=`` keyword; running out of it answers ``Unknown``."""
    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        check(args, kwargs, budget)
        return run_within(budget, lambda: _isl_failure_unknown(fn, args, kwargs),
                          lambda err: Unknown(str(err)))

    return budgeted


def _isl_failure_unknown(fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)``, or ``Unknown`` naming the ISL error it raised.

    An ISL error inside a decider is a failure of ISL or of polypad, never a
    fact about the function: it must not escape a decider as a traceback.
    ISL stopping at its operation limit is the budget running out and goes
    on rising (:func:`polypad.budget.run_within` answers it).
    """
    try:
        return fn(*args, **kwargs)
    except isl.Error as err:
        if is_exhausted(err):
            raise
        return Unknown(f"{fn.__name__} could not decide: ISL failed ({err})")


def bounded(fn):
    """``fn`` with a ``budget=`` keyword; running out of it raises ``BudgetExceeded``."""

    def give_up(err):
        raise err

    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        check(args, kwargs, budget)
        return run_within(budget, lambda: fn(*args, **kwargs), give_up)

    return budgeted


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
