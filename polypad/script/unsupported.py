"""TVMScript constructs polypad knows by name but does not read, and why.

A construct from TVM's other dialects should be refused with a message that
names it and says what to write instead, not with a generic complaint about
its syntax.  :func:`refusal` gives that message; the parsers raise it at the
construct's own line and column.
"""

from __future__ import annotations

_BLOCK = "is not supported (block dialect): polypad reads TVM's lowered dialect; "

#: Construct -> the rest of the sentence that refuses it.
REFUSED = {
    "T.match_buffer_region": _BLOCK + "index the buffer itself",
    "T.comm_reducer": "is not supported: polypad has no reducer objects (a cross-thread "
                      "reduction is written with loops and stores)",
    "T.iter_var": "is not supported: write the thread axis as a loop, "
                  'for tx in T.thread_binding(n, thread="threadIdx.x")',
    "T.vscale": "is not supported: polypad's vectors have a constant number of lanes",
}


def refusal(name: str | None) -> str | None:
    """The message refusing construct ``name`` (``"T.axis.remap"``), or None if unknown."""
    rest = REFUSED.get(name) if name else None
    return None if rest is None else f"{name} {rest}"


def tuple_refusal(name: str | None) -> str | None:
    """The message for ``a, b = <name>(...)``, the way ``T.axis.remap`` is written."""
    rest = REFUSED.get(name) if name else None
    if rest is None:
        return None
    return f"tuple assignment from {name} {rest}"
