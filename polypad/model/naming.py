"""Unique ISL names for IR identities.

IR variables and buffers are identities: two loops may both call their
counter ``i`` and still be different variables.  ISL identifies parameters
and tuples by *name*, so every identity that reaches ISL gets a name that is
unique within one :class:`Names` table — its own name when that is free,
``name_1``, ``name_2``, ... otherwise.  The first identity to ask keeps the
plain name, so hand-written ISL text such as ``"[n] -> { S0[i] : i < n }"``
matches what the model builds for the usual, collision-free programs.
"""

from __future__ import annotations

import re

_INVALID = re.compile(r"[^A-Za-z0-9_]")


class Names:
    """A two-way table between identities (``Var``/``Buffer``) and ISL names."""

    def __init__(self) -> None:
        self._by_obj: dict[int, tuple[object, str]] = {}
        self._by_name: dict[str, object] = {}

    def name(self, obj) -> str:
        """The ISL name of ``obj`` (a ``Var`` or ``Buffer``), assigned on first use."""
        entry = self._by_obj.get(id(obj))
        if entry is not None:
            return entry[1]
        base = _INVALID.sub("_", obj.name) or "v"
        if base[0].isdigit():
            base = "_" + base
        candidate, k = base, 0
        while candidate in self._by_name:
            k += 1
            candidate = f"{base}_{k}"
        # Keep obj alive in the entry so id(obj) cannot be reused by another object.
        self._by_obj[id(obj)] = (obj, candidate)
        self._by_name[candidate] = obj
        return candidate

    def lookup(self, name: str):
        """The identity named ``name``, or ``None``."""
        return self._by_name.get(name)

    def __contains__(self, obj) -> bool:
        return id(obj) in self._by_obj

    def objects(self) -> list:
        """Every named identity, in naming order."""
        return [obj for obj, _ in self._by_obj.values()]
