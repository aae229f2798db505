"""TVM's cross-thread reductions run as atomic updates, their init first.

A block whose reduction axis is bound to a thread axis
(:mod:`analyses.gpu_cross_thread`: TVM's ``tvm_thread_allreduce``) has every
thread of a block fold its value into one element::

    for k in T.thread_binding(32, thread="threadIdx.x"):
        with T.sblock("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]

:func:`cross_thread_atomics` gives the init a thread loop of its own, first,
and makes the update an atomic one (the block ``B_atomic`` annotated
``{"atomic": "+"}`` of ``sch.atomic``)::

    for k in T.thread_binding(32, thread="threadIdx.x"):
        with T.sblock("B_init"):
            ...
            if v_k == 0:
                B[v_i] = T.float32(0)
    for k in T.thread_binding(32, thread="threadIdx.x"):
        with T.sblock("B"):
            ...
            with T.sblock("B_atomic"):
                B[v_i] = B[v_i] + A[v_i, v_k]

The serial meaning is unchanged when the init runs at the loop's first
iteration only (then it preceded every update before, and still does), which
:func:`analyses.gpu_cross_thread.init_at_first_thread` proves with isl; the
barrier plan then puts a barrier between the init and the updates.  On a GPU
the updates run in the hardware's order: a float sum is reassociated, as
TVM's allreduce reassociates it (its tree and warp shuffles), and as
``sch.atomic`` documents.  The cuda target runs this after
:mod:`.lower_cross_thread_reduction`, which takes the blocks TVM lowers to its
tree; what reaches this pass is the rest.  A block of another shape, a combiner numba.cuda
has no atomic for, or an init that may run at another iteration is left as
it is, and the target's race refusal names the construct.
"""

from __future__ import annotations

import dataclasses

from analyses.combiners import update_of
from analyses.gpu_atomics import ATOMIC, ATOMICS
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.nodes_block import BlockHeader
from polypad.ir.substitute import free_vars


def cross_thread_atomics(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each cross-thread reduction it can rewrite rewritten (see the module
    docstring); ``func`` itself where there is none."""
    from analyses.gpu_cross_thread import cross_thread_reductions, init_at_first_thread

    for found in cross_thread_reductions(func):
        loop = found.loop
        parts = _parts(loop)
        if parts is None:
            continue
        block, init, update, lets = parts
        if any(loop.var in _expanded(i, lets) for i in update.indices):
            continue  # each thread updates its own element: no reduction across threads
        combine = update_of(update)
        known = combine and ATOMICS.get(combine.combiner.name)
        if not known or update.buffer.dtype not in known[1]:
            continue
        if not init_at_first_thread(func, loop, init.then_case):
            continue
        atomic = n.Block(f"{update.buffer.name}_atomic", update,
                         BlockHeader(annotations=((ATOMIC, combine.combiner.name),)))
        first = dataclasses.replace(loop, body=n.Block(f"{block.name}_init",
                                                       _keep(block.body, init), None))
        then = dataclasses.replace(loop, body=n.Block(block.name,
                                                      _keep(block.body, atomic), None))
        func = replace(func, loop, n.SeqStmt((first, then)))
    return func


def _parts(loop: n.For):
    """The block that is ``loop``'s body, its init (``if`` at the first iteration), its
    update and its lets, where it has that shape (lets, an optional ``T.where`` if, then
    the init and the update); else ``None``."""
    block = loop.body
    if not isinstance(block, n.Block):
        return None
    lets: dict[n.Var, n.Expr] = {}
    stmt = block.body
    while True:
        if isinstance(stmt, n.LetStmt):
            lets[stmt.var] = stmt.value
            stmt = stmt.body
        elif isinstance(stmt, n.IfThenElse) and stmt.else_case is None and isinstance(
                stmt.then_case, n.SeqStmt):
            stmt = stmt.then_case
        else:
            break
    if not (isinstance(stmt, n.SeqStmt) and len(stmt.stmts) == 2):
        return None
    init, update = stmt.stmts
    if not (isinstance(init, n.IfThenElse) and init.else_case is None
            and isinstance(init.then_case, n.BufferStore) and isinstance(update, n.BufferStore)
            and init.then_case.buffer is update.buffer):
        return None
    return block, init, update, lets


def _expanded(expr: n.Expr, lets: dict) -> set[n.Var]:
    """The variables ``expr`` reads, through the block's lets."""
    out: set[n.Var] = set()
    todo = list(free_vars(n.Evaluate(expr)))
    while todo:
        v = todo.pop()
        if v in out:
            continue
        out.add(v)
        if v in lets:
            todo.extend(free_vars(n.Evaluate(lets[v])))
    return out


def _keep(stmt: n.Stmt, kept: n.Stmt) -> n.Stmt:
    """The block body ``stmt`` (lets, maybe the ``T.where`` if, then the init and the
    update) with the pair replaced by ``kept``."""
    if isinstance(stmt, n.LetStmt):
        return dataclasses.replace(stmt, body=_keep(stmt.body, kept))
    if isinstance(stmt, n.IfThenElse):
        return dataclasses.replace(stmt, then_case=_keep(stmt.then_case, kept))
    return kept


__all__ = ["cross_thread_atomics"]
