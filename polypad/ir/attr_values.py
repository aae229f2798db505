"""Values of function and statement attributes that are not plain literals.

``T.func_attr({...})`` and ``T.attr(...)`` carry TVM's attribute values:
literals (``str``, ``int``, ``float``, ``bool``, None), lists (kept as
tuples, which TVM's attributes never are), dicts (:class:`AttrMap`) and
calls such as ``T.target("cuda", host="llvm")`` or ``T.target({...})``
(:class:`AttrCall`).  polypad steers nothing by them; it keeps them so
that a function prints back as it was written.  All are immutable and
hashable, so a ``PrimFunc`` holding them is too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AttrMap:
    """A dict value, ``{"arr": [0, 0], "key": 3}``: its items in order."""

    items: tuple[tuple[str, object], ...]


@dataclass(frozen=True, slots=True)
class AttrCall:
    """A call value, ``T.target("cuda", host="llvm")``: ``T.<name>`` with its
    positional arguments and keyword arguments (in order), each an attribute value."""

    name: str
    args: tuple[object, ...] = ()
    kwargs: tuple[tuple[str, object], ...] = ()
