"""Printing an IR node for an error message, in script syntax.

The IR does not import the layers above it: the script layer registers its
printer here (:func:`register_printer`) when it is imported, and until then
a node shows as its repr.
"""

from __future__ import annotations

from collections.abc import Callable

_printer: Callable[[object], str] | None = None


def register_printer(printer: Callable[[object], str]) -> None:
    """Make ``printer`` (the script printer) the way :func:`show` writes nodes."""
    global _printer
    _printer = printer


def show(node) -> str:
    """``node`` in script syntax (``i * j``), for messages.

    A message must never fail because of the printer, so a node it cannot
    print (or any node before a printer is registered) falls back to its repr.
    """
    if _printer is not None:
        try:
            return _printer(node)
        except Exception:
            pass
    return repr(node)
