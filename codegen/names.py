"""Python identifiers for the variables and buffers of emitted source.

Variables and buffers are identities that may share a name (two loops both
called ``i``), and a name may not be a valid identifier or may clash with
what the generated module itself uses (``np``, ``range``).  Each identity
gets one identifier, its own name where possible, else a numbered variant.
"""

from __future__ import annotations

import keyword
import re

#: Names the generated module refers to, so no variable may take them.
RESERVED = frozenset({"np", "numba", "kernel", "range", "min", "max", "abs"})


class Names:
    """Assigns each key (a ``Var`` or ``Buffer``) a distinct identifier."""

    def __init__(self):
        self._by_key: dict[object, str] = {}
        self._used: set[str] = set(RESERVED)

    def __call__(self, key, hint: str | None = None) -> str:
        """The identifier of ``key``, allocated from ``hint`` (or ``key.name``) once."""
        found = self._by_key.get(key)
        if found is None:
            found = self.fresh(hint if hint is not None else key.name)
            self._by_key[key] = found
        return found

    def fresh(self, hint: str) -> str:
        """A new identifier resembling ``hint`` that no key has yet."""
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "v" + base
        # "_pp_" names are the module's helpers.
        if base.startswith("_pp_"):
            base = "v" + base
        name, k = base, 0
        while name in self._used or keyword.iskeyword(name):
            k += 1
            name = f"{base}_{k}"
        self._used.add(name)
        return name
