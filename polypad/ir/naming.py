"""Unique names for IR identities, for tools that identify things by name.

IR variables and buffers are identities: two loops may both call their
counter ``i`` and still be different variables.  isl (parameters, tuples)
and emitted Python source identify things by *name*, so every identity that
reaches them gets a name unique within one :class:`Names` table: its own
name when that is free, ``name_1``, ``name_2``, ... otherwise.  The first
identity to ask keeps the plain name, so hand-written isl text such as
``"[n] -> { S0[i] : i < n }"`` matches what the model builds.

A rewrite that adds loops, variables or blocks to a function names them the
same way against what the function already uses (:func:`fresh_name`,
:func:`fresh_block_name`): ``i_0``, ``i_0_1``, ``B_padding_1``.
"""

from __future__ import annotations

import keyword
import re
import threading

from polypad.concurrency import at_fork_in_child

from . import nodes as n
from .visitor import walk

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
            # Only the base can be a Python keyword: ``if_1`` is none.
            taken = self._used | {base} if keyword.iskeyword(base) else self._used
            candidate = fresh_name(taken, base)
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


# ---------------------------------------------------------------- fresh names in a function


def var_names(func: n.PrimFunc) -> set[str]:
    """The names of every variable of ``func``: parameters, loop counters, lets."""
    taken = {p.name for p in func.params}
    for node in walk(func.body):
        if isinstance(node, (n.For, n.LetStmt, n.Let)):
            taken.add(node.var.name)
        elif isinstance(node, n.Var):
            taken.add(node.name)
    return taken


def fresh_name(taken: set[str], base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... : the first not in ``taken`` (then taken)."""
    candidate, k = base, 0
    while candidate in taken:
        k += 1
        candidate = f"{base}_{k}"
    taken.add(candidate)
    return candidate


def block_names(func: n.PrimFunc) -> set[str]:
    """The names of every block in ``func``."""
    return {b.name for b in walk(func.body) if isinstance(b, n.Block)}


def fresh_block_name(func: n.PrimFunc, name: str) -> str:
    """``name``, or ``name_1``, ``name_2``... when a block of ``func`` has it."""
    return fresh_name(block_names(func), name)
