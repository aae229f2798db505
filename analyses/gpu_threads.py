"""How a function with GPU-bound loops runs on a GPU: its kernels, launch extents and
the thread that runs each statement instance.

A loop bound to a thread axis (``T.thread_binding(n, thread="threadIdx.x")``,
``sch.bind(loop, "threadIdx.x")``) is a serial loop to the reference
executor.  On a GPU its iterations are threads: every thread of the launch
runs the kernel's code with each bound loop replaced by its own index.  The
model of that execution, which every GPU question here and the ``cuda``
target share:

- each statement at the top of the function body (through sequences, blocks,
  allocations and lets) is one kernel launch, ordered after the one before;
- a launch's extent on an axis is the largest extent of the loops bound to it
  (loops bound to one axis in sequence share it; a smaller one is guarded);
- a statement instance runs on the thread whose index on each axis is its
  bound loop's counter minus the loop's start, or 0 where no loop around it
  is bound to the axis (``if threadIdx.x == 0``: it runs once, not once per
  thread).

Each thread then runs its instances in program order, and two threads are
ordered only by a barrier (:mod:`analyses.gpu_sync`, which proves where one is
needed and refuses what no barrier can order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.nodes import ForKind
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk

#: The GPU axes, in launch order: three block axes, then three thread axes.
AXES = (ForKind.BLOCK_IDX_X, ForKind.BLOCK_IDX_Y, ForKind.BLOCK_IDX_Z,
        ForKind.THREAD_IDX_X, ForKind.THREAD_IDX_Y, ForKind.THREAD_IDX_Z)
BLOCK_AXES = AXES[:3]
THREAD_AXES = AXES[3:]
#: TVM's virtual threads: loops each thread runs in turn on a GPU
#: (:mod:`polypad.transform.unify_thread_bindings`).
VIRTUAL = (ForKind.VTHREAD, ForKind.VTHREAD_X, ForKind.VTHREAD_Y, ForKind.VTHREAD_Z)


def is_bound(loop: n.For) -> bool:
    """Whether ``loop`` is bound to a GPU block or thread axis."""
    return loop.kind in AXES


@dataclass
class Launch:
    """One kernel launch: the statement it runs and the loops bound in it, by axis."""

    root: n.Stmt
    index: int
    loops: dict[ForKind, list[n.For]] = field(default_factory=dict)

    def extents(self, axis: ForKind) -> list[n.Expr]:
        """The extents of the loops bound to ``axis`` (none: the axis has extent 1)."""
        return [loop.extent for loop in self.loops.get(axis, [])]

    def constant_extent(self, axis: ForKind) -> int | None:
        """The launch extent on ``axis`` where every bound loop's extent is a constant."""
        extents = self.extents(axis)
        if not extents:
            return 1
        if all(isinstance(e, n.IntImm) for e in extents):
            return max(e.value for e in extents)
        return None

    def full(self, loop: n.For) -> bool:
        """Whether ``loop`` (bound in this launch) spans its axis's whole launch extent,
        so that it needs no guard."""
        extents = self.extents(loop.kind)
        constant = self.constant_extent(loop.kind)
        if constant is not None:
            return isinstance(loop.extent, n.IntImm) and loop.extent.value == constant
        return all(e == loop.extent for e in extents)


@dataclass
class Structure:
    """A function's launches, the allocations and lets outside them, in order."""

    launches: list[Launch]
    allocations: list[n.Allocate]
    lets: list[n.LetStmt]

    def launch_of(self) -> dict[int, Launch]:
        """The launch of every statement node inside one, by ``id``."""
        out = {}
        for launch in self.launches:
            for node in walk(launch.root):
                out[id(node)] = launch
        return out


def structure(func: n.PrimFunc) -> Structure:
    """The launches of ``func`` (see the module docstring).

    Raises :class:`~polypad.errors.BuildError` where the GPU cannot run what
    the function says: a loop bound to an axis inside another loop bound to
    it, a virtual thread, a global buffer allocated inside a launch (a kernel
    cannot allocate global memory), or a bound loop whose extent is not an expression
    of the scalar parameters (the launch extent is computed before the launch).
    """
    out = Structure([], [], [])
    _top(func.body, out)
    params = {p for p in func.params if isinstance(p, n.Var)}
    for launch in out.launches:
        _bound_loops(launch.root, launch, (), params)
    return out


def _top(stmt: n.Stmt, out: Structure) -> None:
    match stmt:
        case n.SeqStmt():
            for s in stmt.stmts:
                _top(s, out)
        case n.Block():
            _top(stmt.body, out)
        case n.Allocate():
            out.allocations.append(stmt)
            _top(stmt.body, out)
        case n.LetStmt():
            out.lets.append(stmt)
            _top(stmt.body, out)
        case _:
            out.launches.append(Launch(stmt, len(out.launches)))


def _bound_loops(stmt: n.Stmt, launch: Launch, active: tuple, params: set) -> None:
    if isinstance(stmt, n.Allocate) and stmt.buffer.scope not in ("shared", "local"):
        raise BuildError(f"buffer {stmt.buffer.name!r} is allocated in {stmt.buffer.scope} "
                         "memory inside a kernel; give it scope 'shared' or 'local' "
                         "(sch.set_scope), or allocate it outside the thread-bound loops")
    if isinstance(stmt, n.For) and stmt.kind in VIRTUAL:
        # The cuda target and the GPU checks run unify_thread_bindings first, which
        # makes every virtual thread a loop each thread runs in turn.
        raise BuildError(f"loop {stmt.var.name!r} is bound to {stmt.kind.value}: run "
                         "polypad.transform.unify_thread_bindings first, which makes a "
                         "virtual thread a loop each thread runs in turn")
    if isinstance(stmt, n.For) and stmt.kind in AXES:
        if stmt.kind in active:
            raise BuildError(f"loop {stmt.var.name!r} is bound to {stmt.kind.value} "
                             "inside another loop bound to it")
        unknown = [v.name for v in free_vars(stmt.extent) if v not in params]
        if unknown:
            raise BuildError(
                f"loop {stmt.var.name!r} is bound to {stmt.kind.value} with extent "
                f"depending on {', '.join(unknown)}; a launch extent must be a "
                "constant or an expression of the scalar parameters")
        launch.loops.setdefault(stmt.kind, []).append(stmt)
        active = active + (stmt.kind,)
    for child in children(stmt):
        _bound_loops(child, launch, active, params)


def children(stmt: n.Stmt) -> list[n.Stmt]:
    """The statements directly inside ``stmt``."""
    match stmt:
        case n.SeqStmt():
            return list(stmt.stmts)
        case n.For() | n.Block() | n.Allocate() | n.LetStmt() | n.DeclBuffer():
            return [stmt.body]
        case n.IfThenElse():
            return [stmt.then_case] + ([stmt.else_case] if stmt.else_case is not None else [])
    return []


def bound_axes(loops) -> dict[ForKind, n.For]:
    """The loops of ``loops`` (a statement's enclosing loops) bound to each axis."""
    return {loop.kind: loop for loop in loops if loop.kind in AXES}


def coordinates(s) -> isl.Map:
    """``S[...] -> [bx, by, bz, tx, ty, tz]``: the thread that runs each instance of the
    model statement ``s`` (0 on an axis no loop around it is bound to)."""
    from polypad.model.affine import to_pw_aff
    from polypad.model.isl_helpers import time_map

    bound = bound_axes(s.loops)
    entries = []
    for axis in AXES:
        loop = bound.get(axis)
        if loop is None:
            entries.append(0)
        else:
            entries.append(s.space.var(loop.var).sub(to_pw_aff(loop.min, s.space)))
    return time_map(s.space, entries, s.domain)


def thread_text(values) -> str:
    """``block (0, 0, 0) thread (1, 0, 0)`` for six coordinates."""
    values = [int(v) for v in values]
    return f"block {tuple(values[:3])} thread {tuple(values[3:])}"
