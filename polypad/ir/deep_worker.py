"""Deep trees without ``RecursionError``: walkers step onto a big stack when they must.

polypad's walkers recurse over the IR, a few Python frames per level, and
IR trees can be deep: a 10,000-term sum ``a + b + c + ...`` is a
left-nested chain 10,000 levels deep.  Python stops at its recursion limit
(1000 frames unless raised), and raising the limit on an ordinary thread's
small C stack would trade the ``RecursionError`` for a crash.

So every recursive walker takes each step down through :func:`guarded`,
which counts the levels the current thread is in.  While the count is below
:data:`HOP_DEPTH` (where any thread has room), that costs one counter; past
it, the rest of the walk runs on a *deep worker*: a thread with a
:data:`STACK_SIZE` stack, during whose run the recursion limit is raised to
:data:`DEEP_RECURSION_LIMIT`, sized so that the stack holds that many
frames.  The caller waits for it, so nothing runs concurrently, and the
worker sees the caller's context variables (the time budget of
:mod:`polypad.budget`).  Inside a worker everything may recurse -- other
walkers, and Python's own recursion through the generated ``__eq__``,
``__hash__`` and ``__repr__`` of nested nodes.  :func:`run_deep` runs any
call that way.

A tree too deep even for a worker (some 40,000 levels) raises
:class:`~polypad.errors.TooDeepError`, never ``RecursionError``.

While a worker runs, the raised recursion limit holds for every thread
(CPython has one limit per interpreter); another thread that recursed that
deep on a small stack would crash instead of raising.

This module imports nothing of the IR, so that the grammar can guard its
generated methods with it (:func:`guard_generated_methods`); the front
doors' :func:`~polypad.ir.deep.deep_entry`, which measures trees, is in
:mod:`polypad.ir.deep`, above the grammar and the visitor.
"""

from __future__ import annotations

import contextvars
import ctypes
import functools
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from polypad.concurrency import at_fork_in_child
from polypad.errors import TooDeepError

#: Levels a thread walks on its own stack before the walk moves to a worker.
#: A level is at most a handful of frames, so this stays far below the
#: default recursion limit of 1000 whatever the caller's own depth.
HOP_DEPTH = 100
#: Stack of a deep worker; only the pages it touches are ever committed.
STACK_SIZE = 512 * 1024 * 1024
#: The recursion limit while a worker runs: under 3 KiB of stack per frame.
DEEP_RECURSION_LIMIT = 200_000

F = TypeVar("F", bound=Callable)


class _State(threading.local):
    depth = 0  # guarded levels this thread is inside
    deep = False  # this thread is a deep worker


_state = _State()
_lock = threading.Lock()  # guards the two process-wide settings below
_workers = 0  # deep workers running, in any thread
_saved_limit = 0  # the recursion limit to restore when the last one ends


def guarded(fn: F) -> F:
    """Decorate one step of a recursive walker so that deep trees move to a worker.

    ``fn`` is called as before; when its thread is already :data:`HOP_DEPTH`
    guarded levels deep (and is not a worker), the call runs through
    :func:`run_deep` instead.

    >>> class Printer:
    ...     @guarded
    ...     def expr(self, e): ...
    """

    @functools.wraps(fn)
    def step(*args, **kwargs):
        state = _state
        depth = state.depth
        if depth >= HOP_DEPTH and not state.deep:
            return run_deep(fn, *args, **kwargs)
        state.depth = depth + 1
        try:
            return fn(*args, **kwargs)
        finally:
            state.depth = depth

    return step  # type: ignore[return-value]


def in_worker() -> bool:
    """Whether the current thread is a deep worker (or running under one)."""
    return _state.deep


def run_deep(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a deep worker; directly when already on one.

    Returns what ``fn`` returns and raises what it raises, except that a
    ``RecursionError`` becomes :class:`~polypad.errors.TooDeepError`.
    """
    if _state.deep:
        return fn(*args, **kwargs)
    context = contextvars.copy_context()
    outcome: list = []

    def work() -> None:
        _state.deep = True
        try:
            outcome.append((True, context.run(fn, *args, **kwargs)))
        except BaseException as err:  # handed over to the waiting caller
            outcome.append((False, err))

    with _raised_limit():
        thread = _start(work)
        try:
            thread.join()
        except BaseException:  # Ctrl-C while waiting: stop the worker too
            _interrupt(thread)
            thread.join()
            raise
    ok, value = outcome[0]
    if ok:
        return value
    if isinstance(value, RecursionError):
        raise TooDeepError(
            f"the input is nested too deeply for polypad to walk ({value}); split "
            "long expressions with lets or local variables") from None
    raise value


class _raised_limit:
    """The recursion limit raised to :data:`DEEP_RECURSION_LIMIT` while any worker runs."""

    def __enter__(self) -> None:
        global _workers, _saved_limit
        with _lock:
            if _workers == 0:
                _saved_limit = sys.getrecursionlimit()
                sys.setrecursionlimit(max(_saved_limit, DEEP_RECURSION_LIMIT))
            _workers += 1

    def __exit__(self, *exc) -> None:
        global _workers
        with _lock:
            _workers -= 1
            if _workers == 0:
                sys.setrecursionlimit(_saved_limit)


def _renew_in_child() -> None:
    """After a fork: no worker runs in the child (only the forking thread is copied),
    so the lock is free and a limit raised for a worker of another thread goes back."""
    global _lock, _workers
    _lock = threading.Lock()
    if _workers:
        _workers = 0
        sys.setrecursionlimit(_saved_limit)


at_fork_in_child(_renew_in_child)


def _start(work: Callable[[], None]) -> threading.Thread:
    """A started thread running ``work`` on a :data:`STACK_SIZE` stack."""
    thread = threading.Thread(target=work, name="polypad-deep", daemon=True)
    with _lock:  # the stack size is a process-wide setting read by start()
        old = threading.stack_size()
        try:
            threading.stack_size(STACK_SIZE)
            thread.start()
        except (RuntimeError, ValueError, MemoryError) as err:
            raise TooDeepError(f"the input is nested too deeply to walk on an ordinary "
                               f"stack, and no thread with a bigger one could start: "
                               f"{err}") from None
        finally:
            threading.stack_size(old)
    return thread


def _interrupt(thread: threading.Thread) -> None:
    """Raise ``KeyboardInterrupt`` in ``thread`` at its next bytecode (CPython)."""
    if thread.ident is None or not thread.is_alive():
        return
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async_exc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


def guard_generated_methods(*roots: type, skip: tuple[type, ...] = ()) -> None:
    """Let the generated ``__eq__``, ``__hash__`` and ``__repr__`` of the node classes
    under ``roots``, which recurse through the children, move to a deep worker as every
    walker does: hashing a 10,000-term sum must not overflow the stack.  The classes
    in ``skip`` (identities) have nothing to recurse into."""
    nested = list(roots)
    while nested:
        cls = nested.pop()
        nested += cls.__subclasses__()
        if cls in skip:
            continue
        for name in ("__eq__", "__hash__", "__repr__"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "guarded", False):
                step = guarded(method)
                step.guarded = True
                setattr(cls, name, step)
