"""Printed names for variables and buffers.

IR variables are identities, so two different ``Var("i")`` may meet in one
function.  The printer gives each binding a name that no other binding in
scope holds: the variable's own name when it is free, else ``i_1``,
``i_2``...  Names are reused once a scope ends, so two loops in sequence
both print as ``i``, as people write them.
"""

from __future__ import annotations

import keyword
import re

from ..ir.nodes import Buffer, Var
from ..ir.substitute import free_symbols

__all__ = ["Namer", "free_symbols", "sanitize"]

# Names the script syntax itself reads, which a printed name must not take.  Inside
# a function only ``T.`` is read: ``I.`` stands in ``@I.ir_module`` alone, outside
# every function, so a variable or buffer may keep the name ``I`` (and round-trip,
# since buffer names are compared); a module class may not.
_LOCAL_RESERVED = frozenset(keyword.kwlist) | {"T"}
_RESERVED = _LOCAL_RESERVED | {"I"}


def sanitize(name: str, *, local: bool = False) -> str:
    """``name`` as a Python identifier that is not a keyword or a namespace.

    ``local`` is for names bound inside a function, which may be ``I``:

    >>> sanitize("I"), sanitize("I", local=True), sanitize("T", local=True)
    ('I_', 'I', 'T_')
    """
    reserved = _LOCAL_RESERVED if local else _RESERVED
    if name.isidentifier() and name not in reserved:
        return name
    out = re.sub(r"\W", "_", name) or "v"
    if out[0].isdigit():
        out = "v_" + out
    return out + "_" if out in reserved else out


class Namer:
    """Assigns printed names; ``bind``/``unbind`` bracket a binding's scope."""

    def __init__(self):
        self._names: dict[object, str] = {}
        self._active: dict[str, int] = {}
        self._holders: dict[str, list] = {}  # name -> the objects holding it, innermost last

    def bind(self, obj: Var | Buffer, may_shadow=None) -> str:
        """Name ``obj`` for a new scope, avoiding every name now in scope.

        ``may_shadow(other)`` says whether ``obj`` may take the name of an
        ``other`` in scope (Python rebinding it): a buffer that TVM's text
        declares again under its name (a packed function's ``A``) keeps it
        when nothing in its scope names the first.
        """
        base = sanitize(obj.name, local=True)
        name, k = base, 0
        while self._active.get(name) and not (
                may_shadow is not None and self._holders.get(name)
                and all(may_shadow(o) for o in self._holders[name])):
            k += 1
            name = f"{base}_{k}"
        self._names[obj] = name
        self._active[name] = self._active.get(name, 0) + 1
        self._holders.setdefault(name, []).append(obj)
        return name

    def unbind(self, obj: Var | Buffer) -> None:
        """End the scope opened by ``bind(obj)``."""
        name = self._names[obj]
        self._active[name] -= 1
        holders = self._holders.get(name)
        if holders and holders[-1] is obj:
            holders.pop()

    def name(self, obj: Var | Buffer) -> str:
        """The printed name of ``obj``; an unseen object is bound for good."""
        found = self._names.get(obj)
        return found if found is not None else self.bind(obj)
