"""Shared state that stays correct under threads and in forked processes.

polypad keeps a few small caches at module level (the programs and dataflow
of the functions asked about last, which functions are deep, ...).  Several
threads may ask questions at once, so each cache is a :class:`Recent`: a
lock guards every lookup, insertion and eviction, never the work that
computes a value, so two threads asking about one function compute at the
same time and the first value stored is the one both keep using.

A process forked while another thread held one of these locks would inherit
it locked, with no thread left to release it.  :func:`at_fork_in_child`
registers what a module must renew in a forked child (its locks, counts of
helper threads that do not exist there); :class:`Recent` renews its own.

>>> _PROGRAMS = Recent(16)
>>> found = _PROGRAMS.get((func,))          # None, or the value stored for func
>>> program = _PROGRAMS.put((func,), Program(func))
"""

from __future__ import annotations

import contextvars
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any


class Recent:
    """The ``keep`` entries stored last, keyed by the identity of their owners.

    An entry belongs to a tuple of *owners* (a function, a domain...) and an
    optional hashable ``extra`` key; it is found only while every owner is
    the very object it was stored with (the entry holds them, so no other
    object can take their ``id`` meanwhile).  Safe to share between threads.

    Each entry is tagged with the :func:`generation` it was stored at, and found
    only in that generation: :func:`forget_all` counts before it clears, so an
    entry it has not cleared yet is already out of date for a call that begins
    in between.
    """

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._entries: dict[Hashable, tuple[tuple, Any, int]] = {}
        self._lock = threading.Lock()
        _ALL.add(self)

    @staticmethod
    def _key(owners: tuple, extra: Hashable) -> Hashable:
        return (tuple(map(id, owners)), extra)

    def get(self, owners: tuple, extra: Hashable = None) -> Any | None:
        """The value stored for ``owners`` and ``extra``, or ``None``."""
        with self._lock:
            found = self._entries.get(self._key(owners, extra))
        if found is None or not _current(found, owners):
            return None
        return found[1]

    def put(self, owners: tuple, value: Any, extra: Hashable = None) -> Any:
        """Store ``value`` unless a value for ``owners`` is there already; return the
        value stored (the first one stored wins).

        A value computed by a call that began before the caches were last emptied
        (:func:`forget_all`) is returned but not stored: it may share objects the
        failed call rewrote."""
        key = self._key(owners, extra)
        with self._lock:
            # The generation read once: where forget_all counts after this, the
            # entry is stored under the old count and found by no later call.
            now = _generation
            began = _began_at.get()
            if began is not None and began != now:
                return value
            found = self._entries.get(key)
            if found is not None and _current(found, owners):
                return found[1]
            if found is None and len(self._entries) >= self._keep:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (owners, value, now)
            return value

    def extras(self) -> list[Hashable]:
        """The ``extra`` keys of the entries held, oldest first."""
        with self._lock:
            return [extra for (_, extra), entry in self._entries.items()
                    if entry[2] == _generation]

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _renew_lock(self) -> None:
        self._lock = threading.Lock()


_ALL: weakref.WeakSet[Recent] = weakref.WeakSet()


def _current(entry: tuple, owners: tuple) -> bool:
    """Whether ``entry`` belongs to ``owners`` and was stored since the caches were
    last emptied."""
    stored_owners, _, stored_at = entry
    return stored_at == _generation and all(
        a is b for a, b in zip(stored_owners, owners, strict=True))


# How many times the caches were emptied (forget_all), and the count when the
# outermost polypad call running in this thread (or task) began: a call that
# began before the last emptying may hold objects a failed call rewrote, in
# another thread (polypad.isl_failure).
_forgets = itertools.count(1)
_generation = 0
_began_at: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "polypad_began_at_generation", default=None)


def forget_all() -> None:
    """Empty every :class:`Recent` cache: after ISL failed, what they hold may share
    objects the failed call rewrote (:mod:`polypad.isl_failure`).

    A call running meanwhile in another thread may already hold such an object;
    :func:`began_since_last_forget` tells it (and its answer is not used).  The
    count moves first: a call that begins before every cache is cleared finds no
    entry of the old count (:class:`Recent` tags each entry with its count)."""
    global _generation
    _generation = next(_forgets)
    for cache in list(_ALL):
        cache.clear()


def generation() -> int:
    """How many times :func:`forget_all` has emptied the caches."""
    return _generation


def began_since_last_forget() -> bool:
    """Whether the outermost call running in this thread began after the caches were
    last emptied (``True`` outside any such call)."""
    began = _began_at.get()
    return began is None or began == _generation


def beginning_call():
    """Mark the start of an outermost call in this thread: returns the token that
    :func:`ending_call` takes back."""
    return _began_at.set(_generation)


def ending_call(token) -> None:
    """Undo :func:`beginning_call`."""
    _began_at.reset(token)


def at_fork_in_child(renew: Callable[[], None]) -> None:
    """Call ``renew()`` in every child process this process forks, before it runs.

    For per-process state a fork copies but the child may not use as it is:
    locks another thread may have held at the fork, counts of helper threads
    that do not exist in the child.  (Spawned children import polypad afresh
    and need nothing.)
    """
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=renew)


def _renew_caches() -> None:
    for cache in list(_ALL):
        cache._renew_lock()


at_fork_in_child(_renew_caches)
