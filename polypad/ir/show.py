"""Printing an IR node for an error message, in script syntax."""

from __future__ import annotations


def show(node) -> str:
    """``node`` in script syntax (``i * j``), for messages.

    The printer is imported lazily: it is a peer layer, and a message must
    never fail because of it, so a node it cannot print falls back to its repr.
    """
    try:
        from polypad.script import script

        return script(node)
    except Exception:
        return repr(node)
