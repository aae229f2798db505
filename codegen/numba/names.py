"""Python identifiers for the variables and buffers of emitted source.

The shared :class:`polypad.ir.naming.Names` table, kept clear of what the
generated module itself uses (``np``, ``range``) and of its ``_pp_`` helpers.
"""

from __future__ import annotations

from polypad.ir.naming import Names as _Names

#: Names the generated module refers to, so no variable may take them.
RESERVED = frozenset({"np", "numba", "kernel", "range", "min", "max", "abs"})


class Names(_Names):
    """Assigns each key (a ``Var`` or ``Buffer``) a distinct Python identifier."""

    def __init__(self):
        super().__init__(reserved=RESERVED)

    def sanitize(self, hint: str) -> str:
        base = super().sanitize(hint)
        # "_pp_" names are the module's helpers.
        return "v" + base if base.startswith("_pp_") else base
