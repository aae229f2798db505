"""Which rows and columns of a large grid a picture draws.

A picture stays readable by drawing a window of a large buffer or set, not
by shrinking everything: the first and last few rows, and the rows around
what the reader came to see (the padding, the touched region's edge, a
counterexample's element), with each run of rows left out drawn as one gap
that says how many it hides.  :func:`pick` chooses; the plots draw.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

Pick = list  # of int (drawn) and range (a run left out, drawn as one gap)


def pick(n: int, focus: Iterable[int] = (), *, limit: int, context: int = 1,
         ends: int = 2) -> Pick:
    """The indices of ``0 .. n-1`` to draw, at most about ``limit`` of them: all when
    ``n <= limit``; else the first and last ``ends``, each ``focus`` index with
    ``context`` neighbours while room is left, and the start in the room left over.
    Each run left out is a ``range``.

    >>> pick(100, [50], limit=8)
    [0, 1, 2, range(3, 49), 49, 50, 51, range(52, 98), 98, 99]
    """
    if n <= limit:
        return list(range(n))
    keep = set(range(min(ends, n))) | set(range(max(0, n - ends), n))
    for f in sorted(set(focus)):
        near = {k for k in range(f - context, f + context + 1) if 0 <= k < n}
        if len(keep | near) > limit:
            break
        keep |= near
    for k in range(n):  # the room left shows the start
        if len(keep) >= limit:
            break
        keep.add(k)
    out: Pick = []
    previous = -1
    for k in sorted(keep):
        if k - previous == 2:  # a gap of one: drawing the row takes no more room
            out.append(previous + 1)
        elif k - previous > 2:
            out.append(range(previous + 1, k))
        out.append(k)
        previous = k
    return out


def drawn(chosen: Pick) -> list[int]:
    """The indices ``chosen`` draws (its gaps left out)."""
    return [k for k in chosen if isinstance(k, int)]


def changes(rows: np.ndarray) -> list[int]:
    """The rows of a 2-D array that differ from the row before them (row 0 counts
    as a change when it differs from row 1): where something begins or ends."""
    if rows.ndim != 2 or len(rows) == 0:
        return []
    differ = np.any(rows[1:] != rows[:-1], axis=1)
    found = [k + 1 for k in np.flatnonzero(differ)]
    return ([0] if found and found[0] == 1 else []) + found


def wrap_width(n: int) -> int:
    """How many elements of a 1-D buffer of ``n`` one drawn row holds: all of a short
    buffer, else 16, so that tiles of 2, 4, 8 and 16 line up in columns."""
    return n if n <= 24 else 16
