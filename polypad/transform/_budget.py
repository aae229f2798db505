"""The front door of a pass: the argument check and ``budget=`` of every pass.

A pass's first argument must be a :class:`~polypad.ir.nodes.PrimFunc`
(else :class:`~polypad.errors.ArgumentTypeError`, naming the pass), checked
here once for all of them; a pass checks its own options.  A pass that runs
out of its budget (seconds; ``None`` for
:func:`polypad.budget.default_budget`) returns its input unchanged: half a
rewrite is never returned.  Where ISL fails inside (its own consistency
check, not its operation limit) the pass returns its input unchanged too:
what ISL could not decide is not rewritten (:mod:`polypad.isl_failure`).

A pass given a deep tree (a 10,000-term sum, a 64-deep nest) runs on a deep
worker from the start (:func:`polypad.ir.deep.deep_entry`), so every walker
under it may recurse as deep as the tree, and a tree too deep even there is
a :class:`~polypad.errors.TooDeepError`, never ``RecursionError``.

With the environment variable ``POLYPAD_VERIFY_PASSES`` set (the test suite
and the fuzzer set it), every pass checks its result
(:func:`polypad.ir.verify.checked_result`).
"""

from __future__ import annotations

import functools

from polypad.arguments import expect, expect_budget
from polypad.budget import run_within
from polypad.ir.deep import deep_entry
from polypad.ir.nodes import PrimFunc
from polypad.ir.verify import checked_result
from polypad.isl_failure import answering_isl_failure


def budgeted_pass(fn):
    """``fn(func, **options)`` with a ``budget=`` keyword; running out, or ISL failing,
    returns ``func``."""
    where = fn.__name__

    @functools.wraps(fn)
    def budgeted(func, *args, budget: float | None = None, **kwargs):
        expect(func, PrimFunc, "func", where)
        expect_budget(budget, where)
        out = answering_isl_failure(
            lambda: run_within(budget, lambda: fn(func, *args, **kwargs), lambda err: func),
            lambda message: func)
        return checked_result(out, func, where)

    return deep_entry(budgeted)
