"""TVM's cooperative fetch: a loop bound to a thread axis inside a loop bound to it.

TVM's GPU schedules (the tutorial's tiled matmul, ``cache_read(..., "shared")``
placed with ``compute_at`` inside the thread loops, dlight's ``Matmul`` and
``GEMV`` rules) copy a tile with loops bound to the same thread axes as the
loops around them::

    for ty in T.thread_binding(4, thread="threadIdx.y"):     # the output's thread
        for k_0 in range(4):
            for ax0 in T.thread_binding(4, thread="threadIdx.y"):   # the copy's
                A_shared[ax0, ...] = A[...]
            for k_1 in range(4):
                C[ty, ...] += A_shared[ty, k_1] * ...

Serially each ``ty`` copies the whole tile; on a GPU TVM gives the inner loop's
iterations to the threads of the outer one (``UnifyThreadBinding``): thread
``ty`` copies row ``ty``.  :func:`unify_thread_bindings` writes that GPU
program in the form the ``cuda`` target runs, where loops bound to one axis
stand in sequence: the outer thread loop is moved down through the serial
loops and sequences of its body, and where it meets a loop bound to its axis
that loop takes its place (the threads are the same); elsewhere it wraps
what it reaches::

    for k_0 in range(4):
        for ax0 in T.thread_binding(4, thread="threadIdx.y"):
            A_shared[ax0, ...] = A[...]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for k_1 in range(4):
                C[ty, ...] += A_shared[ty, k_1] * ...

The rewrite runs fewer copies, in another order, so it computes what the
function means only under conditions that
:func:`analyses.gpu_rebinding.check_rebinding` proves first with isl (the
copies repeat one another across the outer loop's iterations, every read of
what they write is fed within the same iteration, and nothing else crosses
those iterations); where one fails the build is refused with the instance and
the element.  The barrier plan then places the ``cuda.syncthreads()`` that the
copy and its readers need, as for any other kernel.

A loop bound to a virtual thread (``vthread``, ``vthread.x/y/z``: dlight's
are of extent 1, TVM's older GPU schedules interleave 2 to 8 register tiles
that way) becomes a loop each thread runs in turn, unrolled where its extent
is a constant, which is what the serial program means. TVM's lowering
interleaves the virtual threads' statements instead; both orders compute the
same wherever the barrier plan then finds no race, which it checks as for any
other serial loop.
"""

from __future__ import annotations

import dataclasses

from analyses.gpu_threads import THREAD_AXES, children
from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.locate import enclosing_loops, replace
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import Rewriter, walk

_VIRTUAL = (n.ForKind.VTHREAD, n.ForKind.VTHREAD_X, n.ForKind.VTHREAD_Y, n.ForKind.VTHREAD_Z)


def unify_thread_bindings(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with every thread loop that holds loops bound to its own axis moved
    down into them (see the module docstring), innermost first; ``func`` itself
    where there is none.  Raises :class:`~polypad.errors.BuildError` where the
    move is not proved to compute what ``func`` computes, or cannot be written."""
    from analyses.gpu_rebinding import check_rebinding

    func = _VirtualThreadsInTurn().visit(func)
    while True:
        found = _innermost_rebound(func)
        if found is None:
            return func
        outer, inner = found
        check_rebinding(func, outer, inner)
        sunk = _sink(outer, outer.body, inner)
        if not isinstance(sunk, n.For) and not enclosing_loops(func, outer):
            sunk = _one_block(sunk)
        func = replace(func, outer, sunk)


def rebound_loops(loop: n.For) -> list[n.For]:
    """The outermost loops inside ``loop`` bound to ``loop``'s axis."""
    out: list[n.For] = []

    def visit(stmt):
        for child in children(stmt):
            if isinstance(child, n.For) and child.kind == loop.kind:
                out.append(child)
            else:
                visit(child)

    visit(loop)
    return out


def _innermost_rebound(func: n.PrimFunc) -> tuple[n.For, list[n.For]] | None:
    """A thread loop with loops bound to its axis inside, none of which holds another
    such loop, and those loops; ``None`` where there is none."""
    for node in walk(func.body):
        if not (isinstance(node, n.For) and node.kind in THREAD_AXES):
            continue
        inner = rebound_loops(node)
        if not inner:
            continue
        deeper = [m for m in walk(node.body) if isinstance(m, n.For) and m.kind in THREAD_AXES
                  and rebound_loops(m)]
        if not deeper:
            return node, inner
    return None


def _holds(stmt: n.Stmt, inner: list[n.For]) -> bool:
    ids = {id(loop) for loop in inner}
    return any(id(m) in ids for m in walk(stmt))


def _sink(outer: n.For, stmt: n.Stmt, inner: list[n.For]) -> n.Stmt:
    """``stmt`` run by every thread of ``outer``: ``outer`` wrapped around each part of
    it that holds none of ``inner``, each of ``inner`` in its own place."""
    if not _holds(stmt, inner):
        return dataclasses.replace(outer, body=stmt)
    if any(loop is stmt for loop in inner):
        return stmt  # the copy's loop runs on outer's threads: it takes outer's place
    name, axis = outer.var.name, outer.kind.value
    match stmt:
        case n.SeqStmt():
            return dataclasses.replace(stmt, stmts=tuple(_sink(outer, s, inner)
                                                         for s in stmt.stmts))
        case n.For():
            if outer.var in free_vars(n.SeqStmt((n.Evaluate(stmt.min),
                                                 n.Evaluate(stmt.extent)))):
                raise BuildError(_cannot(name, axis, f"loop {stmt.var.name!r} between them "
                                         f"has bounds that depend on {name!r}"))
            return dataclasses.replace(stmt, body=_sink(outer, stmt.body, inner))
        case n.IfThenElse():
            if outer.var in free_vars(n.Evaluate(stmt.condition)):
                raise BuildError(_cannot(name, axis, f"an if between them tests {name!r}"))
            return dataclasses.replace(
                stmt, then_case=_sink(outer, stmt.then_case, inner),
                else_case=None if stmt.else_case is None
                else _sink(outer, stmt.else_case, inner))
        case n.LetStmt():
            if outer.var in free_vars(n.Evaluate(stmt.value)):
                raise BuildError(_cannot(name, axis, f"let {stmt.var.name!r} between them "
                                         f"depends on {name!r}"))
            return dataclasses.replace(stmt, body=_sink(outer, stmt.body, inner))
        case n.Allocate() if stmt.buffer.scope == "local":
            # One per thread either way; the barrier plan refuses what two threads share.
            return dataclasses.replace(stmt, body=_sink(outer, stmt.body, inner))
    what = (f"buffer {stmt.buffer.name!r} in {stmt.buffer.scope} memory is allocated"
            if isinstance(stmt, n.Allocate) else f"a {type(stmt).__name__} stands")
    raise BuildError(_cannot(name, axis, f"{what} between them"))


def _one_block(stmt: n.Stmt) -> n.For:
    """``stmt`` (a launch's statements, once its outer thread loop moved down) inside a
    block loop of one block, so that it stays one launch: the launch model makes each
    statement at the top of the function a launch of its own."""
    used = {m.kind for m in walk(stmt) if isinstance(m, n.For)}
    axis = next(k for k in (n.ForKind.BLOCK_IDX_X, n.ForKind.BLOCK_IDX_Y, n.ForKind.BLOCK_IDX_Z)
                if k not in used)
    one = n.IntImm(1)
    return n.For(n.Var("one_block"), n.IntImm(0), one, axis, stmt)


def _cannot(name: str, axis: str, why: str) -> str:
    return (f"loop {name!r} is bound to {axis} and holds loops bound to {axis} too "
            f"(a cooperative copy); polypad runs them as TVM does, each inner iteration "
            f"on the thread of that index, only with the outer loop moved down to them: {why}")


class _VirtualThreadsInTurn(Rewriter):
    def visit_For(self, node: n.For):
        body = self.visit(node.body)
        if node.kind in _VIRTUAL:
            constant = isinstance(node.extent, n.IntImm)
            kind = n.ForKind.UNROLL if constant and node.extent.value > 1 else n.ForKind.SERIAL
            return dataclasses.replace(node, kind=kind, body=body)
        return node if body is node.body else dataclasses.replace(node, body=body)


__all__ = ["rebound_loops", "unify_thread_bindings"]
