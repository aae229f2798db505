"""How a vectorized loop with loops inside it runs its lanes: the lanes go innermost.

``T.vectorized`` runs a loop's iterations in vector lanes.  When the loop
holds loops of its own -- max-pooling vectorized over the channel ``c``,
with the window loops inside -- each lane runs the inner loops for its own
``c``; TVM's vectorizer writes that with the inner loops outside and vector
operations inside.  So does :func:`lanes_innermost`::

    for c in T.vectorized(64):                 for rh in T.serial(2):
        for rh in T.serial(2):          ->         for rw in T.serial(2):
            for rw in T.serial(2):                     for c in T.vectorized(64):
                P[c] = T.max(P[c], ...)                    P[c] = T.max(P[c], ...)

The loop moves below every loop, ``if``, let and block inside it that does
not depend on its counter; it stops at a statement that does (an ``if`` or a
let over ``c``, a loop whose bounds use it), at an allocation (each
iteration has its own) and at a statement without loops, which the lanes
then run whole.

**Why it is exact.**  The new order runs the instances of each iteration of
``c`` in their original order and only interleaves different iterations;
that keeps every dependence the loop does not carry, and a vectorized loop
carries none but the updates of one exact reduction on its element
(:func:`~polypad.schedule.legality.check_vectorize`), which may swap.  The
reference executor runs the loop as written; the Numba target runs it
this way (:mod:`codegen.numba.emit`), so that LLVM vectorizes the innermost
loop, which is ``c``, and each lane's reduction over ``rh``, ``rw`` keeps its
order: fast-math reassociates nothing across the inner loops.
"""

from __future__ import annotations

import dataclasses

from polypad.ir import nodes as n
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk


def lanes_innermost(loop: n.For) -> tuple[n.Stmt, tuple[n.Stmt, ...]]:
    """``loop`` with itself moved below the loops inside it (see the module docstring),
    and the statements holding loops that it still stays around (the *stuck* ones).

    ``loop`` itself comes back when there is nothing to move it below.
    """
    if not any(isinstance(x, n.For) for x in walk(loop.body)):
        return loop, ()
    stuck: list[n.Stmt] = []
    out = _sink(loop, loop.body, stuck)
    return out, tuple(stuck)


def _sink(loop: n.For, stmt: n.Stmt, stuck: list) -> n.Stmt:
    var = loop.var
    loops_inside = any(isinstance(x, n.For) for x in walk(stmt))
    if not loops_inside:
        return dataclasses.replace(loop, body=stmt)
    match stmt:
        case n.For() if (stmt.kind in (n.ForKind.SERIAL, n.ForKind.UNROLL)
                         and var not in _bounds_vars(stmt)):
            return dataclasses.replace(stmt, body=_sink(loop, stmt.body, stuck))
        case n.SeqStmt():
            return n.SeqStmt(tuple(_sink(loop, s, stuck) for s in stmt.stmts), span=stmt.span)
        case n.IfThenElse() if var not in free_vars(stmt.condition):
            other = None if stmt.else_case is None else _sink(loop, stmt.else_case, stuck)
            return dataclasses.replace(stmt, then_case=_sink(loop, stmt.then_case, stuck),
                                       else_case=other)
        case n.LetStmt() if var not in free_vars(stmt.value):
            return dataclasses.replace(stmt, body=_sink(loop, stmt.body, stuck))
        case n.Block():
            return dataclasses.replace(stmt, body=_sink(loop, stmt.body, stuck))
    stuck.append(stmt)
    return dataclasses.replace(loop, body=stmt)


def _bounds_vars(loop: n.For) -> set:
    return set(free_vars(loop.min)) | set(free_vars(loop.extent))
