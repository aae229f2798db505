"""Lowering a cross-thread reduction (TVM's ``tvm_thread_allreduce``) to loops and stores.

A :class:`~polypad.ir.nodes.ThreadAllReduce` in the body of the thread loop
it reduces over means: every thread runs what comes before it, then the
offers of all threads are combined, then every thread finds the combination
in the reduction's targets and runs what comes after.  That is what the
loops below say, each of the block's threads running them in turn, with the
combination a tree over a shared buffer ``red`` of ``P`` elements (``P`` the
power of two at or above the ``T`` threads, ``h = P / 2``)::

    for tx in T.thread_binding(T, thread="threadIdx.x"):   # before
        before(tx)
        red[tx] = T.if_then_else(cond, value, identity)
    for s in T.thread_binding(T - h, thread="threadIdx.x"):   # then h/2, ..., 1
        red[s] = combine(red[s], red[s + h])
    ...
    for tx in T.thread_binding(T, thread="threadIdx.x"):   # after
        target = red[0]
        after(tx)

Thread loops around the reduction's own (``threadIdx.y`` around a reduction
over ``threadIdx.x``) make groups that reduce apart: ``red`` has a row for
each, indexed by their counters.

It is the program every target runs: the reference executor and Numba
serially, the ``cuda`` target with the threads of a block, where the
barrier plan (:mod:`analyses.gpu_sync`) puts one ``cuda.syncthreads()``
between two steps of the tree, as for ``sch.tree_reduce``.  The tree
reassociates the combination as TVM's own lowering does (its warp shuffles
and shared-memory tree); every target adds in the same order, so they agree
bit for bit.  The combiner must be commutative and associative, which
``codegen.build`` asks :func:`analyses.reducer_laws.reducer_laws` first (and
refuses the build where Z3 does not prove it).

What comes before and after is each thread's own code, and the split runs
all of the first before any of the second, as a GPU does across the
barrier the reduction holds.  The one thing that does not survive the split
is a thread's private memory, which the serial executors share between
threads: a local buffer, or one allocated between the loop and the
reduction, written before and read after is refused
(:class:`~polypad.errors.BuildError`), as is a reduction over other threads
than the innermost thread loop around it, or in thread loops of no constant
extent.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.operators import const
from polypad.ir.show import show
from polypad.ir.substitute import substitute
from polypad.ir.views import root
from polypad.ir.visitor import Rewriter, walk

#: Statements a reduction may sit under, between its thread loop and itself.
_WRAPPERS = (n.Allocate, n.DeclBuffer, n.LetStmt, n.AttrStmt)


def lower_allreduce(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each cross-thread reduction written as loops (module docstring)."""
    if not any(isinstance(x, n.ThreadAllReduce) for x in walk(func.body)):
        return func
    taken = {b.name for b in func.params if isinstance(b, n.Buffer)}
    taken |= {x.buffer.name for x in walk(func.body) if isinstance(x, (n.Allocate, n.DeclBuffer))}
    body = _Lower(taken).visit(func.body)
    for left in walk(body):
        if isinstance(left, n.ThreadAllReduce):
            threads = ", ".join(v.name for v in left.threads)
            raise BuildError(f"cannot build {func.name!r}: the cross-thread reduction"
                             f"{at(left)} reduces over ({threads}), which is not the one "
                             "thread loop around it that it sits in (through allocations "
                             "and lets only): polypad lowers a reduction over the innermost "
                             "thread axis around it")
    return dataclasses.replace(func, body=body)


def at(node: n.Stmt) -> str:
    """`` at file:line:column`` of ``node``, or nothing where it has no place."""
    span = node.span
    return "" if span is None else f" at {span.filename}:{span.line}:{span.column}"


class _Lower(Rewriter):
    def __init__(self, taken: set[str]):
        self.outer: list[n.For] = []  # the thread loops around the one visited
        # Shared buffers get names of their own in the function: the model names
        # buffers in isl by name, and two of one name would be one to it.
        self.buffers = (f"red_buf{k}" for k in itertools.count() if f"red_buf{k}" not in taken)

    def visit_For(self, loop: n.For):
        threaded = loop.kind.value.startswith("threadIdx")
        if threaded:
            self.outer.append(loop)
        try:
            loop = self.generic_visit(loop)
        finally:
            if threaded:
                self.outer.pop()
        if threaded and _found(loop.body, loop.var) is not None:
            return _split(loop, tuple(self.outer), self.buffers)
        return loop


def _found(stmt: n.Stmt, var: n.Var) -> n.ThreadAllReduce | None:
    """The reduction over ``var`` that ``stmt`` holds through wrappers and sequences."""
    while isinstance(stmt, _WRAPPERS):
        stmt = stmt.body
    items = stmt.stmts if isinstance(stmt, n.SeqStmt) else (stmt,)
    for item in items:
        if isinstance(item, n.ThreadAllReduce) and item.threads == (var,):
            return item
        if isinstance(item, _WRAPPERS):
            inner = _found(item, var)
            if inner is not None:
                return inner
    return None


def _halves(stmt: n.Stmt, found: n.ThreadAllReduce):
    """``(before, after)``: functions making, from a list of statements to put where
    ``found`` stands, the part of ``stmt`` before it and the part after it, each under
    the wrappers that hold ``found`` in ``stmt``."""
    if isinstance(stmt, _WRAPPERS):
        inner_before, inner_after = _halves(stmt.body, found)
        return (lambda extra: dataclasses.replace(stmt, body=inner_before(extra)),
                lambda extra: dataclasses.replace(stmt, body=inner_after(extra)))
    items = list(stmt.stmts) if isinstance(stmt, n.SeqStmt) else [stmt]
    k = next(k for k, item in enumerate(items) if item is found
             or (isinstance(item, _WRAPPERS) and _contains(item, found)))
    head, tail = items[:k], items[k + 1:]
    if items[k] is found:
        return (lambda extra: _seq(head + extra), lambda extra: _seq(extra + tail))
    before, after = _halves(items[k], found)
    return (lambda extra: _seq([*head, before(extra)]),
            lambda extra: _seq([after(extra), *tail]))


def _contains(stmt: n.Stmt, node: n.Stmt) -> bool:
    return any(x is node for x in walk(stmt))


def _seq(items: list[n.Stmt]) -> n.Stmt:
    return items[0] if len(items) == 1 else n.SeqStmt(tuple(items))


def _split(loop: n.For, outer: tuple[n.For, ...], names: Iterator[str],
           earlier: tuple[n.BufferStore, ...] = ()) -> n.Stmt:
    """``loop`` split at its reduction; ``outer``, the thread loops around it, each
    reduce their own group (``threadIdx.y`` around a reduction over ``threadIdx.x``),
    so the shared buffer has a row per group.  ``earlier``: the result stores of the
    reductions split off before this one in the same loop, which each part after it
    repeats, so that a thread reads its own copy (on a GPU, a local target is
    private to each thread)."""
    found = _found(loop.body, loop.var)
    for each in (*outer, loop):
        if not isinstance(each.extent, n.IntImm):
            raise BuildError(f"the cross-thread reduction{at(found)} runs in thread loop "
                             f"{each.var.name}, whose extent {each.extent} is not a constant")
        if not (isinstance(each.min, n.IntImm) and each.min.value == 0):
            # The shared rows are indexed by the thread counters, from 0.
            raise BuildError(f"the cross-thread reduction{at(found)} runs in thread loop "
                             f"{each.var.name}, which starts at {show(each.min)}, not at 0")
    _check_lets(loop.body, found)
    threads = loop.extent.value
    reducer = found.reducer
    rows = tuple(o.extent.value for o in outer)
    group = tuple(o.var for o in outer)
    reds = tuple(n.Buffer(next(names), (*rows, max(threads, 1)), i.dtype,
                          scope="shared") for i in reducer.identities)
    x = loop.var
    offers = [n.BufferStore(red, _offer(found, value, ident), (*group, x))
              for red, value, ident in zip(reds, found.values, reducer.identities)]
    origin = (*group, const(0, x.dtype))
    results = [n.BufferStore(t.buffer, n.BufferLoad(red, origin), t.indices)
               for t, red in zip(found.targets, reds)]
    make_before, make_after = _halves(loop.body, found)
    # The earlier results again, as statements of their own: deciders (the barrier
    # plan) tell statements apart by identity.
    again = [fresh_copy(store) for store in earlier]
    first, second = make_before(offers), make_after([*again, *results])
    _check_private(loop, first, second, found, {s.value.buffer for s in earlier})
    after_var = n.Var(x.name, x.dtype)
    second = substitute(second, {x: after_var})
    out: list[n.Stmt] = [dataclasses.replace(loop, body=first)]
    out += _tree(loop, reds, reducer, threads, group)
    after = dataclasses.replace(loop, var=after_var, body=second)
    # A second reduction in the same loop splits what follows the first.
    if _found(second, after_var) is not None:
        after = _split(after, outer, names, (*earlier, *results))
    out.append(after)
    stmt: n.Stmt = n.SeqStmt(tuple(out))
    for red in reversed(reds):
        stmt = n.Allocate(red, stmt)
    return stmt


def _offer(found: n.ThreadAllReduce, value: n.Expr, identity: n.Expr) -> n.Expr:
    if isinstance(found.condition, n.BoolImm) and found.condition.value:
        return value
    return n.Select(found.condition, value, identity)


def _tree(loop: n.For, reds, reducer: n.CommReducer, threads: int,
          group: tuple[n.Var, ...]) -> list[n.Stmt]:
    """The steps folding the offers of ``threads`` threads into ``red[0]``."""
    steps = []
    half = 1
    while half * 2 < threads:
        half *= 2
    count = threads - half  # the first step folds the top, which may be short
    level = 0
    while half >= 1 and threads > 1:
        s = n.Var(f"{loop.var.name}_s{level}", loop.var.dtype)
        low = {a: n.BufferLoad(red, (*group, s)) for a, red in zip(reducer.lhs, reds)}
        high = {b: n.BufferLoad(red, (*group, s + half)) for b, red in zip(reducer.rhs, reds)}
        values = [substitute(r, {**low, **high}) for r in reducer.results]
        if len(reds) == 1:
            body: n.Stmt = n.BufferStore(reds[0], values[0], (*group, s))
        else:  # every result from the old values, then the stores
            lets = [n.Var(f"{red.name}_next", red.dtype) for red in reds]
            body = _seq([n.BufferStore(red, v, (*group, s)) for red, v in zip(reds, lets)])
            for var, value in reversed(list(zip(lets, values))):
                body = n.LetStmt(var, value, body)
        steps.append(dataclasses.replace(loop, var=s, min=const(0, s.dtype),
                                         extent=const(count, s.dtype), body=body))
        half //= 2
        count = half
        level += 1
    return steps


def _check_lets(stmt: n.Stmt, found: n.ThreadAllReduce) -> None:
    """Refuse a let around the reduction whose value reads memory the loop writes: the
    split evaluates it again after the reduction (in both halves), where what it read
    may have changed (a store of another thread, or the reduction's own targets).
    Memory nothing in the loop writes (layer norm's ``x[i] - mean``) reads the same
    in both halves."""
    written = {root(x.buffer) for x in walk(stmt) if isinstance(x, n.BufferStore)}
    written |= {root(t.buffer) for t in found.targets}
    while isinstance(stmt, _WRAPPERS) or isinstance(stmt, n.SeqStmt):
        if isinstance(stmt, n.SeqStmt):
            stmt = next((x for x in stmt.stmts if _contains(x, found)), None)
            if stmt is None or stmt is found:
                return
            continue
        changed = sorted({x.buffer.name for x in walk(stmt.value) if isinstance(x, n.BufferLoad)
                          and root(x.buffer) in written}) if isinstance(stmt, n.LetStmt) else []
        if changed:
            raise BuildError(f"the cross-thread reduction{at(found)} sits under the let "
                             f"{stmt.var.name}, whose value reads {', '.join(changed)}, "
                             "which the loop writes: polypad would evaluate it again after "
                             "the reduction; store it in a local buffer first")
        stmt = stmt.body


def _check_private(loop: n.For, before: n.Stmt, after: n.Stmt, found: n.ThreadAllReduce,
                   earlier: set[n.Buffer]) -> None:
    """Refuse what the split would break: a thread's private memory, written before the
    reduction and read after it (module docstring), through any view of it.  An earlier
    reduction's result is no such write: every thread stores the same value."""
    between = {x.buffer for x in walk(loop.body) if isinstance(x, n.Allocate)
               or (isinstance(x, n.DeclBuffer) and root(x.buffer) is x.buffer)}
    written = {root(x.buffer) for x in walk(before) if isinstance(x, n.BufferStore)
               and not (isinstance(x.value, n.BufferLoad) and x.value.buffer in earlier)}
    read = {root(x.buffer) for x in walk(after) if isinstance(x, n.BufferLoad)}
    local = {root(x.buffer) for x in walk(loop.body)
             if isinstance(x, (n.BufferStore, n.BufferLoad)) and x.buffer.scope == "local"}
    for buffer in written & read:
        if buffer.scope == "local" or buffer in local or buffer in between:
            raise BuildError(
                f"the cross-thread reduction{at(found)} splits the threads of loop "
                f"{loop.var.name!r}: {buffer.name} ({buffer.scope}) is written before it and "
                "read after it, memory each thread keeps to itself on a GPU, which the "
                "threads run in turn would share")
