"""Guards moved down a chain of loops, so that a split's tail guard does not break it.

``split`` of a loop whose extent its factors do not divide (the "predicate"
tail) puts ``if i_0 * 4 + i_1 < 5:`` around the body as deep as the loops
are perfectly nested; where that body is a block holding a sequence (a
reduction's init, then its ``k`` loop), the guard stays above the block, and
the chain down to the ``k`` loops is broken by an ``if``.  TVM has no such
guard in the nest: it is the block's ``T.where``.  :func:`guard_step` moves
such a guard one step down the chain:

* ``if a: if b: S`` -> ``if a and b: S`` (nested guards go together);
* ``if c: with T.block(...): S`` -> the guard becomes the block's ``T.where``
  predicate (after the lets of its axes; conjoined with a ``T.where`` it has);
* ``if c: for x in range(lo, e): S`` -> ``for x in range(lo, e): if c: S``,
  where ``c`` reads no buffer (refused otherwise: the body may write what it
  reads, and ``c`` would then be read again after each store).  Exact: ``c``
  cannot read ``x`` (it is bound below) nor memory, so it has one value at
  every iteration, every instance of ``S`` runs where and in the order it ran
  before, and where ``c`` is false
  the loop runs nothing but its bounds, which must then be safe to evaluate
  there: a bound that loads from a buffer (the index may be out of bounds
  where the guard is false), calls a function, or divides by a non-constant
  is refused (:func:`unsafe_bounds`);
* ``if c: S1; for k: S2`` -> the sequence made perfect first
  (:func:`.sink.sunk_sequence`), then the guard goes on down.
"""

from __future__ import annotations

import dataclasses

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.ranges import dtype_range, value_range
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk


def is_guard(stmt: n.Stmt) -> bool:
    """Whether ``stmt`` is an ``if`` without ``else``."""
    return isinstance(stmt, n.IfThenElse) and stmt.else_case is None


def guard_step(guard: n.IfThenElse, sink_sequence, primitive: str, around: dict):
    """``guard`` moved one step down (see the module), and the statements a sequence
    under it moved with :func:`.sink.sunk_sequence` (``sink_sequence``), or ``(None,
    [])`` where it stays.  Raises :class:`~polypad.errors.PolypadError` where the loop
    under it has bounds that are not safe to evaluate where the guard is false;
    ``around`` gives the ranges of the loop variables around the guard."""
    cond, inner = guard.condition, guard.then_case
    if is_guard(inner):
        return dataclasses.replace(guard, condition=n.And(cond, inner.condition),
                                   then_case=inner.then_case), []
    if isinstance(inner, n.Block):
        return into_block(inner, cond), []
    if isinstance(inner, n.For):
        read = next((x for x in walk(cond) if isinstance(x, n.BufferLoad)), None)
        if read is not None:
            raise PolypadError(
                f"{primitive}: the guard `if {show(cond)}:` above the loop over "
                f"{inner.var.name} cannot move into it: it reads {read.buffer.name}, once "
                "before the loop, and inside it would read it at every iteration, after "
                "the body's stores")
        reason = unsafe_bounds(inner, around)
        if reason is not None:
            raise PolypadError(
                f"{primitive}: the guard `if {show(cond)}:` above the loop over "
                f"{inner.var.name} cannot move into it: the loop's bounds {reason}, which "
                f"need not be safe to evaluate where the guard is false")
        if inner.var in free_vars(cond):  # pragma: no cover - a loop binds its variable below
            return None, []
        return dataclasses.replace(inner, body=dataclasses.replace(guard, then_case=inner.body)), []
    if isinstance(inner, n.SeqStmt):
        sunk = sink_sequence(inner)
        if sunk is None:
            return None, []
        stmt, moved = sunk
        return dataclasses.replace(guard, then_case=stmt), moved
    return None, []


def into_block(block: n.Block, cond: n.Expr) -> n.Block:
    """``block`` running only where ``cond`` holds: ``cond`` as its ``T.where``
    predicate, the ``if`` right after the lets of its axes (conjoined with the
    predicate it has: ``cond`` first, as it was tested first)."""
    header = block.header
    axes = len(header.axes) if header is not None else 0
    lets = []
    node = block.body
    for _ in range(axes):
        lets.append(node)
        node = node.body
    if header is not None and header.where:
        guarded = dataclasses.replace(node, condition=n.And(cond, node.condition))
    else:
        guarded = n.IfThenElse(cond, node)
    for let in reversed(lets):
        guarded = dataclasses.replace(let, body=guarded)
    if header is not None:
        header = dataclasses.replace(header, where=True)
    return dataclasses.replace(block, body=guarded, header=header)


def unsafe_bounds(loop: n.For, around: dict) -> str | None:
    """Why ``loop``'s bounds may fail where they were not evaluated before (None:
    they cannot): a buffer load, a call, a division by a non-constant, or a range
    that interval arithmetic over ``around`` (variable -> inclusive range; others
    over their dtype) does not keep inside the counter's dtype, which the
    executors refuse (:class:`~polypad.errors.LoopRangeError`)."""
    for bound in (loop.min, loop.extent):
        for x in walk(bound):
            if isinstance(x, n.BufferLoad):
                return f"read the buffer {x.buffer.name} ({show(bound)})"
            if isinstance(x, n.Call):
                return f"call {show(x)}"
            if isinstance(x, (n.Div, n.FloorDiv, n.FloorMod)) and not isinstance(x.b, n.IntImm):
                return f"divide by {show(x.b)}, which is not a constant"
    first, count = value_range(loop.min, around), value_range(loop.extent, around)
    lo, hi = dtype_range(loop.var.dtype)
    if first is None or count is None or first[0] < lo or first[1] + max(count[1], 1) - 1 > hi:
        return (f"(from {show(loop.min)}, {show(loop.extent)} times) may leave "
                f"{loop.var.dtype}")
    return None
