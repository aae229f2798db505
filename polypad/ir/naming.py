"""Unique names for IR identities, for tools that identify things by name.

IR variables and buffers are identities: two loops may both call their
counter ``i`` and still be different variables.  isl (parameters, tuples)
and emitted Python source identify things by *name*, so every identity that
reaches them gets a name unique within one :class:`Names` table: its own
name when that is free, ``name_1``, ``name_2``, ... otherwise.  The first
identity to ask keeps the plain name, so hand-written isl text such as
``"[n] -> { S0[i] : i < n }"`` matches what the model builds.
"""

from __future__ import annotations

import keyword
import re
import threading

from polypad.concurrency import at_fork_in_child

_INVALID = re.compile(r"[^A-Za-z0-9_]")
# One lock for every table: allocating a name takes microseconds, and one lock is
# one thing to renew in a forked child (another thread may have held it).
_lock = threading.RLock()


def _renew_lock() -> None:
    global _lock
    _lock = threading.RLock()


at_fork_in_child(_renew_lock)


class Names:
    """A two-way table between identities (``Var``/``Buffer``) and unique names.

    ``reserved`` names are never handed out (e.g. what a generated module
    itself uses).  A table may be shared by threads (the model of a function
    asked about from several): a name is allocated under a lock, so two
    threads naming one identity get one name.
    """

    def __init__(self, reserved=()) -> None:
        self._by_obj: dict[object, str] = {}
        self._by_name: dict[str, object] = {}
        self._used: set[str] = set(reserved)

    def name(self, obj, hint: str | None = None) -> str:
        """The name of ``obj``, allocated from ``hint`` (or ``obj.name``) on first use."""
        found = self._by_obj.get(obj)
        if found is None:
            with _lock:
                found = self._by_obj.get(obj)
                if found is None:
                    found = self.fresh(hint if hint is not None else obj.name)
                    self._by_obj[obj] = found
                    self._by_name[found] = obj
        return found

    __call__ = name

    def sanitize(self, hint: str) -> str:
        """``hint`` as an identifier: ASCII letters, digits and ``_``."""
        base = _INVALID.sub("_", hint) or "v"
        return "v" + base if base[0].isdigit() else base

    def fresh(self, hint: str) -> str:
        """A new name resembling ``hint`` that nothing in this table has."""
        base = self.sanitize(hint)
        with _lock:
            candidate, k = base, 0
            while candidate in self._used or keyword.iskeyword(candidate):
                k += 1
                candidate = f"{base}_{k}"
            self._used.add(candidate)
        return candidate

    def lookup(self, name: str):
        """The identity named ``name``, or ``None``."""
        return self._by_name.get(name)

    def __contains__(self, obj) -> bool:
        return obj in self._by_obj

    def objects(self) -> list:
        """Every named identity, in naming order."""
        return list(self._by_obj)
