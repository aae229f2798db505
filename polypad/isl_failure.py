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
- ``codegen.build`` raises :class:`~polypad.errors.IslFailure`.

As with the budget, only the outermost of nested calls answers; an inner one
lets the failure rise.  The computation that failed is dropped as a whole:
ISL's coalescing rewrites in place maps that other sets share, and the next
ISL call on them crashed the process, so nothing it computed may be used
again.  For the same reason every cache of models and dataflow is emptied
(:func:`polypad.concurrency.forget_all`): an entry made before the failure may
share what the failed call rewrote.
"""

from __future__ import annotations

import contextvars

from polypad.budget import is_exhausted
from polypad.concurrency import forget_all
from polypad.errors import IslFailure

# Whether an answering_isl_failure is in force in this thread (or task): only the
# outermost one answers.  Its own variable, not the budget's deadline, so that a
# caller's bare ``with budget.within(...)`` does not let islpy's error out.
_answering: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "polypad_answering_isl_failure", default=False)


def answering_isl_failure(work, answer):
    """``work()``; where ISL fails inside it, ``answer(message)`` instead.

    ``message`` is ISL's own text (it names the ISL operation that failed).
    ISL's operation limit goes on rising, as does a failure inside another
    budgeted call, which only the outermost one answers.
    """
    import islpy as isl

    if _answering.get():
        return work()
    token = _answering.set(True)
    try:
        return work()
    except isl.Error as err:
        if is_exhausted(err):
            raise
        forget_all()
        message = str(err) or type(err).__name__
    finally:
        _answering.reset(token)
    return answer(message)


def raising_isl_failure(operation: str):
    """The ``answer`` of an entry point with no ``Unknown`` to give: it raises
    :class:`~polypad.errors.IslFailure` naming ``operation``."""
    def answer(message: str):
        raise IslFailure(operation, message)

    return answer
