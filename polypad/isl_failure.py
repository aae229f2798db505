"""What polypad does where ISL fails: one rule for every public entry point.

ISL sometimes fails its own internal consistency check (its coalescing of a
union of domains with integer divisions: "original tableau does not
correspond to original basic map", fuzzer seed 20001, case 26) and raises
``islpy.Error``.  Such a failure is a failure of ISL, never a fact about the
function asked about, and it must not reach a caller as islpy's traceback.
:func:`answering_isl_failure` runs the work of one public call and, where ISL
fails (other than stopping at its operation limit, which is the budget
running out: :func:`polypad.budget.run_within`), hands the failure to the
entry point's own answer:

- a decider (``analyses/budgeted.py``, ``@decider``) answers ``Unknown``;
- an analysis without a decision (``@bounded``) raises
  :class:`~polypad.errors.IslFailure` naming itself;
- a pass (``@budgeted_pass``) returns its input unchanged;
- a schedule primitive is refused with an
  :class:`~polypad.errors.IllegalTransformError` whose evidence is the
  ``Unknown``;
- ``codegen.build`` raises :class:`~polypad.errors.IslFailure`, as do
  ``polypad.model.extract`` and the dependences a :class:`Dependences`
  computes on first use, maybe after the call that made it
  (:func:`raises_isl_failures`).

As with the budget, only the outermost of nested calls answers; an inner one
lets the failure rise.  The computation that failed is dropped as a whole:
ISL's coalescing rewrites in place maps that other sets share, and the next
ISL call on them crashed the process, so nothing it computed may be used
again.  For the same reason every cache of models and dataflow is emptied
(:func:`polypad.concurrency.forget_all`): an entry made before the failure may
share what the failed call rewrote.  A call running meanwhile in another thread
may hold such an object already: its answer is not used either, it answers as
one whose own ISL failed ("ISL failed in another thread while this call ran"),
and nothing it computed is stored in a cache.

Code inside a computation that catches ``islpy.Error`` itself, to go on with
less (a fallback, a fact left out), passes what it caught to
:func:`rise_unless_expected`: ISL's operation limit becomes the budget's
:class:`~polypad.errors.BudgetExceeded` (the entry point answers "out of
budget"), an error the handler names as expected (ISL refusing its arguments,
before it changes anything) lets it go on, and any other error rises to the
entry point, which drops the computation as above.
"""

from __future__ import annotations

import contextvars

from polypad.budget import exceeded_error, is_exhausted, note_if_exhausted
from polypad.concurrency import beginning_call, ending_call, forget_all, generation
from polypad.errors import BudgetExceeded, IslFailure

# Whether an answering_isl_failure is in force in this thread (or task): only the
# outermost one answers.  Its own variable, not the budget's deadline, so that a
# caller's bare ``with budget.within(...)`` does not let islpy's error out.
_answering: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "polypad_answering_isl_failure", default=False)

#: ISL's refusal of some maps with integer divisions in its ``lexmin`` and
#: friends (an argument check, before it changes anything): the handlers that
#: know it try another form of the same set.
DIVISIONS_REFUSED = "affine expression involves some of the domain dimensions"

#: The reason given where ISL failed in another thread while a call ran.
ANOTHER_THREAD = ("ISL failed in another thread while this call ran, and may have "
                  "rewritten objects this call shared with it")


def answering_isl_failure(work, answer):
    """``work()``; where ISL fails inside it, ``answer(message)`` instead.

    ``message`` is ISL's own text (it names the ISL operation that failed).
    ISL's operation limit goes on rising (as the budget's
    :class:`~polypad.errors.BudgetExceeded` where no budgeted call inside
    answered it), as does a failure inside another budgeted call, which only
    the outermost one answers.  Where ISL failed in another thread while
    ``work`` ran, ``answer(ANOTHER_THREAD)``: what ``work`` computed may rest
    on objects that failure rewrote.
    """
    import islpy as isl

    if _answering.get():
        return work()
    token, began = _answering.set(True), beginning_call()
    start = generation()
    try:
        result = work()
        if generation() == start:
            return result
        message = ANOTHER_THREAD
    except isl.Error as err:
        if is_exhausted(err):
            note_if_exhausted(err)
            raise exceeded_error() from None
        forget_all()
        message = str(err) or type(err).__name__
    finally:
        ending_call(began)
        _answering.reset(token)
    return answer(message)


def raising_isl_failure(operation: str):
    """The ``answer`` of an entry point with no ``Unknown`` to give: it raises
    :class:`~polypad.errors.IslFailure` naming ``operation``."""
    def answer(message: str):
        raise IslFailure(operation, message)

    return answer


def raising_isl_failures(operation: str, work):
    """``work()``, a public call with no ``Unknown`` to give (``IndexMap``'s
    questions, ``plan_barriers``); ISL failing in it raises
    :class:`~polypad.errors.IslFailure` naming ``operation``."""
    return answering_isl_failure(work, raising_isl_failure(operation))


def raises_isl_failures(operation: str):
    """Decorator: each call of the function is :func:`raising_isl_failures` naming
    ``operation`` (for work done lazily, maybe after the call that made its object)."""
    import functools

    def wrap(method):
        @functools.wraps(method)
        def asking(*args, **kwargs):
            return raising_isl_failures(operation, lambda: method(*args, **kwargs))

        return asking

    return wrap


def rise_unless_expected(err: BaseException, *expected: str) -> None:
    """For a handler that caught ``err`` (an ``islpy.Error``, or a
    :class:`~polypad.errors.PolypadError`) and would go on without ISL's answer:
    returns where it may, raises where it may not.

    - ISL's operation limit, or the budget's own error: raises the budget's
      :class:`~polypad.errors.BudgetExceeded` (noted as a time limit), so that
      the entry point answers "out of budget" instead of a weaker answer that
      hides it;
    - an ``islpy.Error`` whose text holds one of ``expected`` (an error the
      handler is written for: ISL refusing its arguments before it changes
      anything): returns;
    - any other ``islpy.Error``: raises it again, for the entry point to answer
      as ISL failing (:func:`answering_isl_failure`): ISL may have rewritten
      objects the handler would go on with;
    - any other error (a ``NotAffineError``...): returns.
    """
    import islpy as isl

    rise_if_exhausted(err)
    if isinstance(err, isl.Error) and not any(text in str(err) for text in expected):
        raise err


def rise_if_exhausted(err: BaseException) -> None:
    """Raise the budget's :class:`~polypad.errors.BudgetExceeded` (noted as a time
    limit) where ``err`` is ISL's operation limit or the budget's own error: for a
    handler that would read ``err`` as the user's mistake (ISL's parser says "syntax
    error" where the limit stopped it)."""
    if is_exhausted(err):
        if isinstance(err, BudgetExceeded):
            raise err
        note_if_exhausted(err)
        raise exceeded_error() from None
