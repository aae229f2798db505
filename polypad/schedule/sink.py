"""Statements beside a loop moved into its first (or last) iteration: a perfect nest.

A reduction written with its init before the loop over its axis (the
README's row sum, a hand-written matmul) is not a perfect nest, so the loop
over ``k`` could not be reordered past the loops around the init.  TVM's
``T.init()`` is the same program written as one::

    for i, j in T.grid(64, 64):                  for i, j in T.grid(64, 64):
        with T.block("C"):                           with T.block("C"):
            C[i, j] = T.float32(0)          ->           for k in T.serial(64):
            for k in T.serial(64):                           if k == 0:
                C[i, j] = C[i, j] + ...                          C[i, j] = T.float32(0)
                                                             C[i, j] = C[i, j] + ...

:func:`perfect_nest` makes that move where a chain of loops a primitive
names is broken by a sequence: what stands before the next loop goes under
``if k == <start>:`` first in its body, what stands after it under ``if k
== <last>:`` at its end.  Every instance then runs in the same order as
before, *provided the loop runs at least once* whenever those statements
run: :func:`~polypad.schedule.legality.check_sunk` proves that with isl,
statement by statement, and refuses with the point where it fails.
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.operators import add, sub
from polypad.ir.stages import seq, sequence
from polypad.ir.visitor import walk

from .fuse_reorder import through_blocks
from .sink_guards import guard_step, is_guard


def perfect_nest(func: n.PrimFunc, loops: list[n.For], primitive: str = "reorder"
                 ) -> tuple[n.PrimFunc, list[tuple[n.Stmt, n.Var]], list[n.For]]:
    """``func`` with the chain from the outermost of ``loops`` down to the others made
    perfect where a sequence breaks it, and the statements moved, each with the
    variable of the loop it went into, and the chain of loops in the new function,
    outermost first.  A guard (a split's tail) on the way moves down the chain
    (:mod:`.sink_guards`; ``primitive`` names the refusal where it cannot).
    Nothing moves where nothing breaks the
    chain (or where a sequence holds more than one way down): ``func`` comes back.
    The statements under the outermost loop must be objects of their own
    (:func:`.reduction_nest.unshared`): a moved one is replaced by identity.
    """
    wanted = {x.var for x in loops}
    current = min(loops, key=lambda x: _depth(func, x))
    found = {current.var}
    moved: list[tuple[n.Stmt, n.Var]] = []
    chain = [current]
    # A statement no rewrite here rebuilds: which copy of the top loop is ours.
    leaf = next((x for x in walk(current) if isinstance(x, (n.BufferStore, n.Evaluate))), None)
    changed = False
    while not wanted <= found:
        body = through_blocks(current.body)
        while True:
            new, step = _step(body, wanted, primitive, func)
            if new is None:
                break
            func = replace(func, body, new)
            moved += step
            changed = True
            body = through_blocks(new)
        if not isinstance(body, n.For):
            break
        current = body
        chain.append(current)
        found.add(current.var)
    if changed:  # the loops above a statement that moved were rebuilt
        chain = _rebuilt(func, chain, leaf)
    return func, moved, chain


def _step(body: n.Stmt, wanted: set, primitive: str, func: n.PrimFunc):
    """``body`` (in ``func``) one step closer to the next loop of the chain, and the
    statements moved into a loop; ``(None, [])`` where it is as close as it gets."""
    if isinstance(body, n.SeqStmt):
        return sunk_sequence(body, wanted) or (None, [])
    if is_guard(body) and _reaches(body.then_case, wanted):
        return guard_step(body, lambda s: sunk_sequence(s, wanted), primitive,
                          _ranges_around(func, body))
    return None, []


def _ranges_around(func: n.PrimFunc, stmt: n.Stmt) -> dict:
    """The counters of the loops around ``stmt`` with constant bounds, each with its
    inclusive range."""
    from polypad.ir.locate import ancestors

    return {x.var: (x.min.value, x.min.value + x.extent.value - 1)
            for x in ancestors(func, stmt) if isinstance(x, n.For)
            and isinstance(x.min, n.IntImm) and isinstance(x.extent, n.IntImm)
            and x.extent.value > 0}


def sunk_sequence(body: n.SeqStmt, wanted: set
                  ) -> tuple[n.For, list[tuple[n.Stmt, n.Var]]] | None:
    """The one loop of ``body`` on the way down to ``wanted`` with the statements
    before and after it moved into its first and last iterations, and those moved,
    each with that loop's variable; None where the way down is not one loop."""
    down = [s for s in body.stmts if _reaches(s, wanted)]
    if len(down) != 1 or not isinstance(down[0], n.For):
        return None
    inner = down[0]
    k = next(i for i, s in enumerate(body.stmts) if s is inner)
    before, after = body.stmts[:k], body.stmts[k + 1:]
    return _sunk(inner, before, after), [(s, inner.var) for s in (*before, *after)]


def _reaches(stmt: n.Stmt, wanted: set) -> bool:
    return any(isinstance(y, n.For) and y.var in wanted for y in walk(stmt))


def _rebuilt(func: n.PrimFunc, chain: list[n.For], leaf) -> list[n.For]:
    """The loops of ``chain`` (by variable) in ``func``, under the top loop holding ``leaf``."""
    top = next(y for y in walk(func.body) if isinstance(y, n.For) and y.var is chain[0].var
               and (leaf is None or any(z is leaf for z in walk(y))))
    out = [top]
    for x in chain[1:]:
        out.append(next(y for y in walk(out[-1]) if isinstance(y, n.For) and y.var is x.var))
    return out


def _sunk(loop: n.For, before: tuple, after: tuple) -> n.For:
    first = _guarded(before, n.Eq(loop.var, loop.min))
    last = _guarded(after, n.Eq(loop.var, _last(loop)))
    return n.For(loop.var, loop.min, loop.extent, loop.kind, sequence(first, loop.body, last),
                 span=loop.span)


def _guarded(stmts: tuple, cond: n.Expr) -> n.Stmt | None:
    """``stmts`` under ``cond``; a lone ``if`` (without ``else``) takes it as a conjunct:
    an init sunk twice (``tile`` of ``k``) reads ``if k_0 == 0 and k_1 == 0:``."""
    if not stmts:
        return None
    if len(stmts) == 1 and isinstance(stmts[0], n.IfThenElse) and stmts[0].else_case is None:
        return n.IfThenElse(n.And(stmts[0].condition, cond), stmts[0].then_case)
    return n.IfThenElse(cond, seq(*stmts))


def _last(loop: n.For) -> n.Expr:
    if isinstance(loop.min, n.IntImm) and isinstance(loop.extent, n.IntImm):
        return n.IntImm(loop.min.value + loop.extent.value - 1, loop.var.dtype)
    if isinstance(loop.min, n.IntImm) and loop.min.value == 0:
        return sub(loop.extent, 1)
    return sub(add(loop.min, loop.extent), 1)


def _depth(func: n.PrimFunc, loop: n.For) -> int:
    from polypad.ir.locate import ancestors

    return len(ancestors(func, loop))
