"""TVM's lowered GPU buffers put where the ``cuda`` target's launch model reads them.

TVM's GPU lowering (``FlattenBuffer``, ``LowerCrossThreadReduction``) leaves
two things at places the launch model (:func:`analyses.gpu_threads.structure`:
each statement at the top of the function is one launch) cannot read:

- the flattened views of the parameters, declared once above everything
  (``x_1 = x.view(48)``).  Above two launches, or above an allocation, the
  whole function would read as one launch.  :func:`sink_top_views` declares
  each view again inside each launch that uses it instead: a view owns no
  memory, so where it is declared changes nothing it computes;
- a temporary in global memory allocated inside a launch (argmax's
  ``x_red_temp_v1``: thread 0 of each block writes its element of it), which
  a kernel cannot allocate.  :func:`hoist_launch_globals` allocates it above
  the launches instead (the host allocates it, zero-filled, for each call)
  where it is outside every thread loop (inside one it is each thread's own,
  which scope ``"local"`` says, and the refusal suggests) and that computes
  the same: where no dependence on it of any kind (flow, anti, output) is carried
  by the loops it leaves, so that different iterations touch different elements
  (a fresh allocation reads zero where the hoisted one would hold another
  iteration's value, and the launch model would see two blocks write one
  element where each block had its own), which
  :func:`analyses.allocation_scope.carried_dependence` decides with isl.  Where that
  does not hold, or its shape depends on more than the scalar parameters, the
  allocation stays and the launch model refuses it as before.
"""

from __future__ import annotations

from dataclasses import replace as with_fields

from analyses.gpu_threads import THREAD_AXES, children
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.operators import as_expr
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk

#: The statements the launch model walks through at the top of a function to the launches.
_WRAPPERS = (n.DeclBuffer, n.Block, n.Allocate, n.LetStmt)


def sink_top_views(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each view declared at its top (above the launches) declared inside
    each launch that uses it, and nowhere else (see the module docstring)."""
    if not any(views for _, views in _launches(func.body)):
        return func
    return with_fields(func, body=_sink(func.body, ()))


def _launches(stmt: n.Stmt, views: tuple[n.DeclBuffer, ...] = ()):
    """Each launch below the statements the launch model walks through at the top of a
    function, with the views declared above it (outermost first)."""
    if isinstance(stmt, n.SeqStmt):
        for s in stmt.stmts:
            yield from _launches(s, views)
    elif isinstance(stmt, _WRAPPERS):
        declared = (stmt,) if isinstance(stmt, n.DeclBuffer) else ()
        yield from _launches(stmt.body, views + declared)
    else:
        yield stmt, views


def _sink(stmt: n.Stmt, views: tuple[n.DeclBuffer, ...]) -> n.Stmt:
    if isinstance(stmt, n.DeclBuffer):
        return _sink(stmt.body, views + (stmt,))
    if isinstance(stmt, n.SeqStmt):
        return with_fields(stmt, stmts=tuple(_sink(s, views) for s in stmt.stmts))
    if isinstance(stmt, _WRAPPERS):
        return with_fields(stmt, body=_sink(stmt.body, views))
    used = {id(getattr(m, "buffer", None)) for m in walk(stmt)}
    for view in reversed(views):  # the outermost view stays outermost
        if id(view.buffer) in used:
            stmt = n.DeclBuffer(view.buffer, stmt, span=view.span)
    return stmt


def hoist_launch_globals(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each global buffer allocated inside a launch allocated above the
    launches instead, where that is proved to compute the same (module docstring)."""
    from analyses.allocation_scope import carried_dependence

    params = {p for p in func.params if isinstance(p, n.Var)}
    for alloc, loops in _launch_globals(func.body):
        shape_vars = {v for e in alloc.buffer.shape for v in free_vars(as_expr(e))}
        if not shape_vars <= params or any(loop.kind in THREAD_AXES for loop in loops):
            continue  # inside a thread loop, one per thread: scope "local" is the answer
        hoisted = replace(func, alloc, alloc.body)
        hoisted = with_fields(hoisted, body=n.Allocate(alloc.buffer, hoisted.body,
                                                       span=alloc.span))
        # The loops it leaves, found again by their variables in the rewritten function
        # (a variable two loops share brings both: more checked, never fewer).
        left = {loop.var for loop in loops}
        around = [s for s in walk(hoisted.body) if isinstance(s, n.For) and s.var in left]
        if carried_dependence(hoisted, alloc.buffer, around) is None:
            func = hoisted
    return func


def _launch_globals(stmt: n.Stmt) -> list[tuple[n.Allocate, list[n.For]]]:
    """The global allocations inside the launches, each with the loops around it."""
    found = []

    def visit(node: n.Stmt, loops: list[n.For]) -> None:
        if isinstance(node, n.Allocate) and node.buffer.scope not in ("shared", "local"):
            found.append((node, loops))
        inner = loops + [node] if isinstance(node, n.For) else loops
        for child in children(node):
            visit(child, inner)

    for launch, _ in _launches(stmt):
        visit(launch, [])
    return found


__all__ = ["hoist_launch_globals", "sink_top_views"]
