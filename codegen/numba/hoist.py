"""Bounds checks out of the loop they do not depend on (:mod:`.guards`).

A checked access whose index does not change in a serial loop -- the gather
``A[B[i]]`` in ``for j`` -- is checked once, before the loop, instead of at
each iteration::

    _h = B[i]
    _pp_index_1(_h, A.shape, 0)          # raises unless 0 <= _h < A.shape[0]
    for j in range(8):
        C[i, j] = A[_h] * X[j]

Inside a parallel loop's body the check before the loop records its failure
in the flag array instead and keeps whether it passed, ``_ok``; the access
reads ``(A[_h] if _ok else 0)``.  Only where that is exact: the loop surely
runs (else the check would fail where no access runs), the access is in a
statement directly in the loop's body and outside every lazy operand
(``Select``, ``and``, ``or``), so that every iteration runs it, and the index
of each axis it checks reads no variable bound inside the loop and no buffer
the loop stores to, so that every iteration computes the same value; and the
loop holds no ``assert`` or checked ``T.assume`` (the caller's condition),
which is part of the program and often what keeps the access inside, and no
loop whose range is checked (:mod:`codegen.loop_ranges`), whose
``LoopRangeError`` the reference executor would raise first.  Nor past a check
that stays in the loop: the checks of the body are moved in the order they run,
up to the first that cannot move (it changes from one iteration to the next, it
is in an ``if``, an inner loop or a lazy operand), so that no check before the
loop fails where one inside would have failed first.  A failure is then reported
before the loop's first iteration instead of in it, with the reference
executor's message (the stores of the iterations before it are not made).

Only the axes the analysis could not prove are checked
(:mod:`analyses.bounds_axes`), so the embedding lookup ``A[B[i], j]`` in
``for j`` is checked before the loop too: its proved axis ``j`` may change
in the loop (it may read the loop's counter, nothing else bound inside and
no element), and the check passes its value at the first iteration, where
the reference executor fails, for the message::

    _h = B[i]
    _pp_index_2_0(_h, 0, A.shape, 0)     # tests axis 0 only
    for j in range(64):
        C[i, j] = A[_h, j]

Of the accesses in the loop's body sharing one check (a load and a store of
one element), the first in evaluation order -- a store's value, then its
indices, then the store -- is the one the check reports.  An access that an
earlier statement of the body also makes (in an ``if``, an inner loop, a lazy
operand) is not hoisted: that statement would fail first, at its own line.
"""

from __future__ import annotations

from collections.abc import Callable

from polypad.ir import nodes as ir
from polypad.ir.visitor import walk

from ..bounds_guards import location
from ..eager_loads import eager_loads
from ..source_text import ATOM
from .guards import GuardState


def hoist_checks(loop: ir.For, printer, line: Callable[[str], None], runs: bool
                 ) -> list[tuple]:
    """Write the checks that can go before ``loop`` (through ``line``), where the
    loop surely ``runs`` and the kernel has checks, and make ``printer`` read the
    accesses through them; returns their keys, for the caller to forget after the
    loop."""
    state = printer.guard
    if state is None or not runs:
        return []
    keys = []
    for access, stmt in hoistable(loop, state):
        if (access.buffer, tuple(access.indices)) in printer.hoisted:
            continue  # checked before a loop around this one already
        # Reported where the access stands, as the reference reports it.
        located, state.guards.at = state.guards.at, location(stmt)
        lines, held = hoisted_lines(access, state, printer, loop)
        state.guards.at = located
        for text in lines:
            line(text)
        keys.append((access.buffer, tuple(access.indices)))
        printer.hoisted[keys[-1]] = held
    return keys


def hoistable(loop: ir.For, state: GuardState
              ) -> list[tuple[ir.BufferLoad | ir.BufferStore, ir.BufferStore]]:
    """The checked accesses of ``loop``'s body whose check can go before it (distinct
    by ``(buffer, indices)``, in order), each with the statement holding it."""
    bound = {x.var for x in walk(loop) if isinstance(x, (ir.For, ir.LetStmt, ir.Let))}
    stored = {x.buffer for x in walk(loop.body) if isinstance(x, ir.BufferStore)}
    body = loop.body.stmts if isinstance(loop.body, ir.SeqStmt) else (loop.body,)
    found: dict[tuple, tuple] = {}
    # The accesses of the statements before: one of them failing first is reported
    # at its own line, so a later statement's check of the same element stays put.
    earlier: set[tuple] = set()
    for stmt in body:
        before = set(earlier)
        earlier.update((x.buffer, tuple(x.indices)) for x in walk(stmt)
                       if isinstance(x, (ir.BufferLoad, ir.BufferStore)))
        # Its checks of elements not checked before the loop already (one of those
        # passes there, so it passes here).
        checked = [x for x in walk(stmt) if isinstance(x, (ir.BufferLoad, ir.BufferStore))
                   and (x.buffer, tuple(x.indices)) not in found
                   and state.needs(x.buffer, tuple(x.indices))]
        if not isinstance(stmt, ir.BufferStore):
            if checked:  # it may fail first, inside the loop: nothing after it moves
                break
            continue
        # In the order the statement runs them (the value, the indices, the store):
        # of a load and a store of one element, the first is the one reported.
        candidates = [*eager_loads(stmt.value), *(x for i in stmt.indices
                                                    for x in eager_loads(i)), stmt]
        if any(not any(x is c for c in candidates) for x in checked):
            break  # a lazy operand's check, which may run first or not at all
        for access in candidates:
            key = (access.buffer, tuple(access.indices))
            if state.view_axes(access.view_access):
                # Its view's check runs where the access runs, first: no check of the
                # same element before the loop.
                before.add(key)
                continue
            if key in found or key in before or not state.needs(*key):
                continue
            if not _invariant(access, state.axes(*key), loop, bound, stored):
                # It stays in the loop, where it may fail before a later check would:
                # a check after it, moved before the loop, would be reported first.
                return list(found.values())
            found[key] = (access, stmt)
    return list(found.values())


def _invariant(access: ir.BufferLoad | ir.BufferStore, tested, loop: ir.For, bound: set,
               stored: set) -> bool:
    """Whether the check of ``access``'s ``tested`` axes gives the same answer at every
    iteration of ``loop`` (``bound``: the variables bound inside it, ``stored``: the
    buffers it stores to), and the axes it proved name the element it fails at."""
    reads = [x for k in tested for x in walk(access.indices[k])]
    if any(isinstance(x, ir.Var) and x in bound for x in reads):
        return False
    if any(isinstance(x, ir.BufferLoad) and x.buffer in stored for x in reads):
        return False
    # An axis proved inside (:mod:`analyses.bounds_axes`) may change in the loop: the
    # check reports its value at the first iteration, where the reference executor
    # fails, so it may read the counter but nothing else bound inside, and no element.
    rest = [x for k, i in enumerate(access.indices) if k not in tested for x in walk(i)]
    return not any((isinstance(x, ir.Var) and x in bound and x is not loop.var)
                   or isinstance(x, ir.BufferLoad) for x in rest)


def hoisted_lines(access: ir.BufferLoad | ir.BufferStore, state: GuardState, printer,
                  loop: ir.For) -> tuple[list[str], tuple[list[str | None], str | None]]:
    """The lines (unindented) that compute and check ``access``'s index before
    ``loop``, and what the access then reads: per axis, the local holding a checked
    axis's index (None for an axis proved, printed in place) and, inside a parallel
    loop's body, the local saying whether the check passed."""
    buffer, indices = access.buffer, tuple(access.indices)
    is_store = isinstance(access, ir.BufferStore)
    name = printer.names(buffer)
    tested = state.axes(buffer, indices)
    local = [printer.names.fresh("_h") if k in tested else None
             for k in range(len(indices))]
    lines = [f"{h} = {printer(i)}" for h, i in zip(local, indices, strict=True)
             if h is not None]
    # The error names the element: a proved axis's index at the first iteration.
    saved = printer.subst.get(loop.var)
    printer.subst[loop.var] = printer.operand(loop.min, ATOM)
    try:
        values = [h if h is not None else printer(i)
                  for h, i in zip(local, indices, strict=True)]
    finally:
        if saved is None:
            del printer.subst[loop.var]
        else:
            printer.subst[loop.var] = saved
    if state.fail is None:
        lines.append(f"{state.call(buffer, name, indices, values, is_store)}")
        return lines, (local, None)
    ok = printer.names.fresh("_ok")
    lines.append(f"{ok} = {state.test(buffer, name, indices, values, is_store)}")
    return lines, (local, ok)
