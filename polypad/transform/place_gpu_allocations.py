"""Shared and local buffers allocated at the top of a function, moved into the kernel.

TVM's GPU schedules declare their tiles at the function's root block
(``A_shared = T.sblock_alloc_buffer((16, 16), scope="shared")``), outside
the loops bound to ``blockIdx``; TVM's ``PlanAndUpdateBufferAllocationLocation``
then allocates each where its uses meet.  In the ``cuda`` target's launch
model a buffer allocated outside every launch is one for the whole grid,
which shared memory cannot be (each block has its own) and local memory
cannot be either (each thread has its own).  :func:`place_gpu_allocations`
does what TVM does: the ``Allocate`` of each such buffer moves down to the
innermost statement holding every use, a shared one no deeper than the
loops bound to thread axes (shared memory is the block's).

Exact when no value of the buffer crosses the iterations of the loops it
moves into (a fresh allocation reads zero where the old one held an earlier
iteration's value), which :func:`analyses.allocation_scope.carried_flow`
decides; where it does not hold the allocation stays, and the launch model
reports what then cannot run.
"""

from __future__ import annotations

from analyses.gpu_threads import THREAD_AXES
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk


def place_gpu_allocations(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each shared or local buffer allocated above its launches moved to
    where its uses meet, where that is proved exact (see the module docstring)."""
    from analyses.allocation_scope import carried_flow

    for alloc in _top_allocations(func.body):
        if alloc.buffer.scope not in ("shared", "local"):
            continue
        current = next(a for a in _top_allocations(func.body) if a.buffer is alloc.buffer)
        target, entered = _meeting_point(current.body, alloc.buffer)
        if not entered or carried_flow(func, alloc.buffer, entered) is not None:
            continue
        moved = n.Allocate(alloc.buffer, target, span=alloc.span)
        func = replace(func, current, current.body)
        func = replace(func, target, moved)
    return func


def _top_allocations(stmt: n.Stmt) -> list[n.Allocate]:
    """The allocations above every launch (as :func:`analyses.gpu_threads.structure`
    reads the top of a function)."""
    match stmt:
        case n.SeqStmt():
            return [a for s in stmt.stmts for a in _top_allocations(s)]
        case n.Block() | n.LetStmt():
            return _top_allocations(stmt.body)
        case n.Allocate():
            return [stmt] + _top_allocations(stmt.body)
    return []


def _uses(stmt: n.Stmt, buffer: n.Buffer) -> bool:
    return any(getattr(m, "buffer", None) is buffer for m in walk(stmt))


def _own_uses(stmt: n.Stmt, buffer: n.Buffer) -> bool:
    """Whether ``stmt`` itself, apart from its body, mentions ``buffer``."""
    parts = {k: getattr(stmt, k) for k in ("min", "extent", "value") if hasattr(stmt, k)}
    return any(_uses(n.Evaluate(v), buffer) for v in parts.values())


def _meeting_point(body: n.Stmt, buffer: n.Buffer) -> tuple[n.Stmt, list[n.For]]:
    """The innermost statement under ``body`` that holds every use of ``buffer`` (for
    shared memory, none inside a thread loop), and the loops entered to reach it."""
    entered: list[n.For] = []
    stmt = body
    while True:
        if isinstance(stmt, n.For) and stmt.kind in THREAD_AXES and buffer.scope == "shared":
            return stmt, entered
        match stmt:
            case n.SeqStmt():
                using = [s for s in stmt.stmts if _uses(s, buffer)]
                if len(using) != 1:
                    return stmt, entered
                inner = using[0]
            case n.For() | n.LetStmt() | n.Allocate():
                if _own_uses(stmt, buffer):
                    return stmt, entered
                inner = stmt.body
            case _:
                return stmt, entered
        if isinstance(stmt, n.For):
            entered.append(stmt)
        if isinstance(inner, n.Block):
            return inner, entered
        stmt = inner


__all__ = ["place_gpu_allocations"]
