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
each analysis checks its other parameters itself.  ISL failing inside (other
than at its operation limit) answers ``Unknown`` with ISL's message in a
decider and raises :class:`~polypad.errors.IslFailure` naming the analysis in
a bounded one (:mod:`polypad.isl_failure`).

Both run the analysis on a deep worker when an argument is a deep tree
(:func:`polypad.ir.deep.deep_entry`): every walker under a decider may
recurse as deep as the tree, never raising ``RecursionError``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

from polypad.arguments import expect, expect_budget
from polypad.budget import counting_time_limits, run_within
from polypad.errors import UnmodelledError
from polypad.ir.deep import deep_entry
from polypad.ir.nodes import PrimFunc
from polypad.ir.opaque import first_alias_or_vector, first_opaque
from polypad.isl_failure import answering_isl_failure, raising_isl_failure

from .evidence import Counterexample, Refuted, Unknown


def decider(fn):
    """``fn`` with a ``budget=`` keyword; running out of it answers ``Unknown``.

    A function holding a construct polypad cannot model (an opaque TVM
    intrinsic, ``T.attr``...: :func:`polypad.ir.opaque.first_opaque`; for the
    value analyses, also a buffer view or a vector statement) gets ``Unknown``
    naming it and its line, before any work.
    """
    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        f = check(args, kwargs, budget)
        opaque = _unmodelled(fn, f)
        if opaque is not None:
            return Unknown(f"{f.name!r} cannot be modelled: {opaque}")
        with counting_time_limits() as limits:
            decided = answering_isl_failure(
                lambda: run_within(budget, lambda: fn(*args, **kwargs),
                                   lambda err: Unknown(str(err))),
                lambda message: Unknown(f"{fn.__name__} could not decide: ISL failed "
                                        f"({message})"))
        if limits[0] and isinstance(decided, Unknown) and not decided.timed_out:
            # A time limit ended some part of the decision (an Unknown built from
            # another keeps only its reason): with more time it may be decided.
            decided = dataclasses.replace(decided, timed_out=True)
        return _with_func(decided, f)

    return deep_entry(budgeted)


def _with_func(decided, f):
    """``decided`` with its counterexample knowing the function it is about, so that
    its picture draws the real buffers.  A counterexample that already knows one (an
    inner decider found it, on the function its instances belong to) keeps it."""
    if f is None or not isinstance(decided, Refuted):
        return decided
    cex = decided.counterexample
    if not isinstance(cex, Counterexample) or cex.func is not None:
        return decided
    return dataclasses.replace(decided, counterexample=dataclasses.replace(cex, func=f))


def bounded(fn):
    """``fn`` with a ``budget=`` keyword; running out of it raises ``BudgetExceeded``.

    A function holding a construct polypad cannot model raises
    :class:`~polypad.errors.UnmodelledError` naming it and its line; ISL
    failing inside raises :class:`~polypad.errors.IslFailure` naming ``fn``.
    """

    def give_up(err):
        raise err

    check = _front_door(fn)

    @functools.wraps(fn)
    def budgeted(*args, budget: float | None = None, **kwargs):
        f = check(args, kwargs, budget)
        opaque = _unmodelled(fn, f)
        if opaque is not None:
            raise UnmodelledError(f"{f.name!r} cannot be modelled: {opaque}")
        return answering_isl_failure(
            lambda: run_within(budget, lambda: fn(*args, **kwargs), give_up),
            raising_isl_failure(fn.__name__))

    return deep_entry(budgeted)


# The analyses that reason about values (the prover and what is built on it), which
# do not follow a buffer view's aliasing or a vector statement's lanes; the others
# (dependences, bounds, touched regions, merging) see through both.
_VALUE_ANALYSES = frozenset({"context_at", "is_no_op", "can_remove_conditional"})
# Of those, the ones that answer about a function's canonical form (analyses.canonical:
# a packed function's computation, views and vectors written out) and say themselves
# what keeps a function from having one.
_ON_CANONICAL_FORM = frozenset({"is_no_op", "can_remove_conditional"})
# The analyses that read only loop bounds, conditions and block bindings, never a
# buffer's values: an annotation, a view, an assert or an opaque call elsewhere in the
# function changes nothing they decide (one inside a binding or a guard they answer
# Unknown about themselves).
_ON_BINDINGS = frozenset({"check_block_bindings"})


def _unmodelled(fn, f):
    """What in ``f`` the analysis ``fn`` cannot model (None if nothing, or no ``f``)."""
    if f is None or fn.__name__ in _ON_CANONICAL_FORM or fn.__name__ in _ON_BINDINGS:
        return None
    # An assert on plain values is a statement of the model (a check that may raise,
    # which no store moves across: analyses.assert_order) and a fact for what follows
    # it (polypad.ir.stated); one that reads memory is refused by name.
    found = first_opaque(f, checks_as_facts=True)
    if found is None and fn.__name__ in _VALUE_ANALYSES:
        found = first_alias_or_vector(f)
    return found


def _front_door(fn):
    """A check of ``fn``'s ``f`` (a PrimFunc, when ``fn`` has that parameter) and budget."""
    where = fn.__name__
    params = list(inspect.signature(fn).parameters)
    position = params.index("f") if "f" in params else None

    def check(args: tuple, kwargs: dict, budget) -> PrimFunc | None:
        f = None
        if position is not None:
            if position < len(args):
                f = args[position]
                expect(f, PrimFunc, "f", where)
            elif "f" in kwargs:
                f = kwargs["f"]
                expect(f, PrimFunc, "f", where)
        expect_budget(budget, where)
        return f

    return check
