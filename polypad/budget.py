"""Time budgets: every question polypad answers ends in bounded time.

Each analysis and pass takes ``budget`` (seconds; ``None`` means the global
default, :func:`default_budget`, 10 s unless :func:`set_default_budget`
changed it).  The budget is a *deadline* shared by everything the call does:
a pass that asks the prover a hundred questions spends one budget, not a
hundred.  Nested calls keep the earlier of their deadlines.

Inside, work that may take long calls :func:`check` between steps, which
raises :class:`BudgetExceeded` once the deadline has passed; Z3 gets the
time left as its timeout (:func:`remaining_ms`), and ISL an operation limit
(``isl.Context.set_max_operations``) so that one long ISL call cannot
outlive the budget by much.  A decider turns :class:`BudgetExceeded` into
``Unknown``, and a pass into "leave the function unchanged".

>>> with within(0.5):
...     prove(cond, ctx)       # Unknown("the time budget of 0.5 s ran out") if it must
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from polypad.arguments import expect, expect_budget
from polypad.concurrency import at_fork_in_child
from polypad.errors import BudgetExceeded

#: Seconds a question may take unless the caller or set_default_budget says otherwise.
DEFAULT_BUDGET = 10.0
#: ISL operations allowed per second of budget (ISL counts steps of its
#: heavier algorithms, a few million of which take about a second here).
ISL_OPERATIONS_PER_SECOND = 5_000_000

_default = DEFAULT_BUDGET


class _Scope:
    """The deadline in force, the budget it came from, and whether it was hit."""

    __slots__ = ("deadline", "seconds", "tripped")

    def __init__(self, deadline: float, seconds: float) -> None:
        self.deadline, self.seconds, self.tripped = deadline, seconds, False


_deadline: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "polypad_deadline", default=None)
# The counters of the counting_time_limits blocks in force, innermost last.
_counters: contextvars.ContextVar[tuple[list[int], ...]] = contextvars.ContextVar(
    "polypad_time_limit_counters", default=())


def default_budget() -> float:
    """The budget, in seconds, of a call that passes ``budget=None``."""
    return _default


def set_default_budget(seconds: float) -> None:
    """Set the budget of every later call that passes ``budget=None``."""
    global _default
    expect(seconds, (int, float), "seconds", "set_default_budget", what="a number of seconds")
    _default = expect_budget(seconds, "set_default_budget")


@contextmanager
def within(budget: float | None = None) -> Iterator[float]:
    """Run the block under a deadline ``budget`` seconds away (the default when ``None``).

    Inside an enclosing ``within``, ``None`` shares the enclosing deadline,
    and an explicit budget the earlier of the two.  Yields the deadline (a
    ``time.monotonic()`` value).
    """
    seconds = _default if budget is None else expect_budget(budget, "within")
    now = time.monotonic()
    outer = _deadline.get()
    if outer is not None and (budget is None or outer.deadline <= now + seconds):
        scope = outer  # the enclosing deadline comes first: share it (and its trip)
    else:
        scope = _Scope(now + seconds, seconds)
    token = _deadline.set(scope)
    allowance = _isl_allowances.grant(max(scope.deadline - now, 0.0)) if outer is None \
        else None
    try:
        yield scope.deadline
    finally:
        _deadline.reset(token)
        if allowance is not None:
            _isl_allowances.release(allowance)


def remaining() -> float | None:
    """Seconds left before the current deadline, or ``None`` outside any ``within``."""
    current = _deadline.get()
    if current is None:
        return None
    return max(current.deadline - time.monotonic(), 0.0)


def remaining_ms(cap_ms: int) -> int:
    """Milliseconds a solver may run: ``cap_ms``, or less when the deadline is nearer (>= 1)."""
    left = remaining()
    if left is None:
        return int(cap_ms)
    return max(1, min(int(cap_ms), int(left * 1000)))


def expired() -> bool:
    """Whether the current deadline has passed."""
    left = remaining()
    return left is not None and left <= 0.0


def check() -> None:
    """Raise :class:`BudgetExceeded` if the current deadline has passed."""
    current = _deadline.get()
    if current is not None and time.monotonic() >= current.deadline:
        current.tripped = True
        note_time_limit()
        raise BudgetExceeded(current.seconds)


def note_time_limit() -> None:
    """Record that a time limit was reached: the budget, or a solver's timeout.

    What was being decided may then come out otherwise with more time (or on
    a less busy machine); :func:`counting_time_limits` blocks see it.
    """
    for counter in _counters.get():
        counter[0] += 1


def note_if_exhausted(err: BaseException) -> None:
    """:func:`note_time_limit` if ``err`` is the budget running out or isl stopping at
    its operation limit: for a handler that goes on without the answer it lost."""
    if is_exhausted(err) and not isinstance(err, BudgetExceeded):  # check() noted those
        note_time_limit()


def computed_in_time(make):
    """``(make(), in_time)``: ``in_time`` is False when a time limit was reached while
    ``make`` ran, or the deadline has passed -- a value to use, not to remember.

    >>> value, in_time = computed_in_time(lambda: facts_about(load))
    """
    with counting_time_limits() as limits:
        value = make()
    return value, not limits[0] and not expired()


@contextmanager
def counting_time_limits() -> Iterator[list[int]]:
    """Count in ``counter[0]`` the time limits reached inside the block (in this
    thread and in the deep workers it waits for).

    >>> with counting_time_limits() as hits:
    ...     decided = prove(cond, ctx)
    >>> hits[0]       # 0: no time limit shaped the answer
    """
    counter = [0]
    token = _counters.set((*_counters.get(), counter))
    try:
        yield counter
    finally:
        _counters.reset(token)


def exceeded_error() -> BudgetExceeded:
    """The error for the current deadline (the default budget outside any ``within``)."""
    current = _deadline.get()
    return BudgetExceeded(current.seconds if current is not None else _default)


_OUT_OF_OPERATIONS = "maximal number of operations exceeded"


def is_exhausted(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`BudgetExceeded`, or ISL stopping at its operation limit.

    ISL's parser, stopped by the limit while it reads a set, says "syntax error"
    (the limit's own message comes with the next call): for that error the
    context is asked whether it is past its limit, by reading the empty set.
    """
    if isinstance(err, BudgetExceeded):
        return True
    text = str(err)
    if _OUT_OF_OPERATIONS in text:
        return True
    return "syntax error" in text and _isl_past_its_limit()


def _isl_past_its_limit() -> bool:
    import islpy as isl

    if isl.DEFAULT_CONTEXT.get_max_operations() == 0:
        return False  # no limit in force: a syntax error is one
    try:
        isl.Set("{ : }")
    except isl.Error as probe:
        return _OUT_OF_OPERATIONS in str(probe)
    return False


def run_within(budget: float | None, work, on_exceeded):
    """``work()`` under :func:`within` ``(budget)``; ``on_exceeded(error)`` if it runs out.

    ISL reaching its operation limit counts as running out.  Only the
    outermost budgeted call handles the error: an inner one lets it rise, so
    that a pass stops as a whole instead of going on with half its answers.
    """
    import islpy as isl

    outermost = _deadline.get() is None
    with within(budget):
        try:
            return work()
        except (BudgetExceeded, isl.Error) as err:
            if not is_exhausted(err):
                raise
            if not isinstance(err, BudgetExceeded):
                note_time_limit()  # isl's operation limit stands for the time
            if not outermost:
                raise exceeded_error() from None
            return on_exceeded(exceeded_error())


class _IslAllowances:
    """The operation limit of isl's one context, shared by the questions of every thread.

    isl counts operations per context, and polypad uses one context (see
    docs/architecture.md, "Threads and processes").  Each outermost budgeted
    call is *granted* ``seconds * ISL_OPERATIONS_PER_SECOND`` operations; the
    limit is the sum of the grants of the calls running now, counted from the
    last time one started or ended.  A lone call gets exactly its own grant,
    as before threads were thought of.  Calls running side by side together
    get the sum, so a call that stays within its own grant is never stopped
    by the others' work, unless one of them overruns its own grant.  When the
    last call ends, the limit the context had before comes back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._grants: dict[object, tuple[int, int]] = {}  # token -> (thread, operations)
        self._before = 0  # the context's limit when no call was running

    def grant(self, seconds: float) -> object:
        """Add a call's grant; returns the token that :meth:`release` takes back."""
        import islpy as isl

        token = object()
        ctx = isl.DEFAULT_CONTEXT
        with self._lock:
            if not self._grants:
                self._before = ctx.get_max_operations()
            ops = max(1, int(seconds * ISL_OPERATIONS_PER_SECOND))
            self._grants[token] = (threading.get_ident(), ops)
            self._apply(ctx)
        return token

    def release(self, token: object) -> None:
        """End a call's grant."""
        import islpy as isl

        ctx = isl.DEFAULT_CONTEXT
        with self._lock:
            if self._grants.pop(token, None) is None:
                return
            if self._grants:
                self._apply(ctx)
            else:
                ctx.set_max_operations(self._before)
                ctx.reset_operations()

    def _apply(self, ctx) -> None:
        ctx.reset_operations()
        ctx.set_max_operations(sum(ops for _, ops in self._grants.values()))

    def renew_in_child(self) -> None:
        """After a fork: only the forking thread goes on in the child, so the grants
        of the other threads' calls go (their :meth:`release` never comes)."""
        self._lock = threading.Lock()
        me = threading.get_ident()
        others = [t for t, (thread, _) in self._grants.items() if thread != me]
        if not others:
            return
        import islpy as isl  # imported already: a grant was made

        for token in others:
            del self._grants[token]
        ctx = isl.DEFAULT_CONTEXT
        if self._grants:
            self._apply(ctx)
        else:
            ctx.set_max_operations(self._before)
            ctx.reset_operations()


_isl_allowances = _IslAllowances()
at_fork_in_child(_isl_allowances.renew_in_child)
