"""``double_buffer``: a shared tile cached at a loop in two stages (TVM's
``double_buffer_scope``).

Before (``cache_read("C", "A", "shared", at="k_0")``, the copy's loops bound to
the block's threads)::

    for k_0 in T.serial(4):
        A_shared = T.alloc_buffer((8, 8), "float32", scope="shared")
        with T.block("A_shared"):
            ...  A_shared[ax0, ax1] = A[8 * i_0 + ax0, 8 * k_0 + ax1]
        ...  C[...] = C[...] + A_shared[i_1, k_1] * ...

after ``sch.double_buffer("A_shared")``::

    A_shared = T.alloc_buffer((2, 8, 8), "float32", scope="shared")
    with T.block("A_shared_prologue"):
        ...  A_shared[0, ax0, ax1] = A[8 * i_0 + ax0, ax1]
    for k_0 in T.serial(4):
        if k_0 + 1 < 4:
            with T.block("A_shared"):
                ...  A_shared[(k_0 + 1) % 2, ax0, ax1] = A[8 * i_0 + ax0, 8 * (k_0 + 1) + ax1]
        ...  C[...] = C[...] + A_shared[k_0 % 2, i_1, k_1] * ...

The tile of step ``k`` lives in half ``k % 2`` (counted from the loop's
start): the prologue loads the first step's before the loop, and each step
loads the next step's tile into the other half, where the copy was, while
its own readers read the current half.  On a GPU the two no longer touch one
element within a step, so the barrier plan (:mod:`analyses.gpu_sync`) needs
one barrier per step, at the start of the loop body (it orders both the
tile loaded in the step before for this step's readers and this step's
overwrite of the half the step before read), instead of two.

Exact when (:func:`stages_of` checks the first, refusing with a
:class:`~polypad.errors.PolypadError`;
:func:`.gpu_legality.check_double_buffer` the others, refusing with an
:class:`~polypad.errors.IllegalTransformError` naming the instance and the
element):

- the buffer is in ``"shared"`` memory, allocated directly in the body of a
  serial loop (between the two only allocations and sequences), and written
  there by one statement, the copy, which reads neither it nor anything
  allocated in the loop (the first step's copy runs before the loop);
- every read of it finds the element written by that step's copy (so no
  value is carried from one step to the next through the buffer: with two
  stages such a read would see the step before last) --
  :func:`analyses.gpu_shared_reads.unwritten_shared_reads`, with isl;
- nothing else in the loop writes a buffer the copy reads: the copy of step
  ``k + 1`` now runs before the rest of step ``k``.
"""

from __future__ import annotations

import dataclasses

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.locate import ancestors, find_buffer, replace
from polypad.ir.naming import fresh_block_name
from polypad.ir.stages import seq
from polypad.ir.substitute import substitute
from polypad.ir.views import require_unshared
from polypad.ir.visitor import Rewriter, walk
from polypad.transform._fold import fold_constant

from .register_staging import staged


@dataclasses.dataclass(frozen=True)
class Stages:
    """A shared tile cached at a loop, as :func:`stages_of` finds it: the buffer, its
    allocation, the serial loop around it, the statements of the allocation's body
    and the index of the copy among them."""

    buffer: n.Buffer
    alloc: n.Allocate
    loop: n.For
    stmts: tuple[n.Stmt, ...]
    at: int

    @property
    def fill(self) -> n.Stmt:
        """The copy that fills the tile at each step."""
        return self.stmts[self.at]

    @property
    def where(self) -> str:
        return f"double_buffer of {self.buffer.name}"


@dataclasses.dataclass(frozen=True)
class DoubleBuffered:
    """What :func:`double_buffer` made: the function, the two-stage buffer, the loop
    the stages alternate over (rebuilt), the copy before it and the one in it."""

    func: n.PrimFunc
    buffer: n.Buffer
    loop: n.For
    prologue: n.Stmt
    prefetch: n.Stmt


def stages_of(func: n.PrimFunc, buffer: str | n.Buffer) -> Stages:
    """The shared tile ``buffer`` and the loop it is cached at; a
    :class:`~polypad.errors.PolypadError` for a buffer that is no shared tile allocated
    in a serial loop's body and filled there by one copy."""
    old = find_buffer(func, buffer)
    require_unshared(func, old, "double_buffer")
    where = f"double_buffer of {old.name}"
    if old.scope != "shared":
        raise PolypadError(f"{where}: the buffer is in {old.scope!r} memory; double "
                           "buffering is for a shared tile cached at a loop "
                           "(cache_read(..., \"shared\", at=loop))")
    alloc = next((a for a in walk(func.body) if isinstance(a, n.Allocate)
                  and a.buffer is old), None)
    if alloc is None:
        raise PolypadError(f"{where}: it is a parameter, not a buffer the function "
                           "allocates")
    loop = _loop_around(func, alloc, where)
    stmts = alloc.body.stmts if isinstance(alloc.body, n.SeqStmt) else (alloc.body,)
    writers = [k for k, s in enumerate(stmts) if _touches(s, old, write=True)]
    if len(writers) != 1:
        raise PolypadError(f"{where}: {len(writers)} statements of the loop body write "
                           f"{old.name}; double buffering needs one, the copy that fills "
                           "it at each step")
    fill = stmts[writers[0]]
    if _touches(fill, old, write=False):
        raise PolypadError(f"{where}: the copy into {old.name} reads it too")
    inside = {id(a.buffer) for a in walk(loop.body) if isinstance(a, n.Allocate)}
    for load in walk(fill):
        if isinstance(load, n.BufferLoad) and id(load.buffer) in inside:
            raise PolypadError(f"{where}: the copy reads {load.buffer.name}, which is "
                               f"allocated in the loop {loop.var.name!r}: the first step's "
                               "copy, before the loop, could not read it")
    return Stages(old, alloc, loop, tuple(stmts), writers[0])


def double_buffer(func: n.PrimFunc, found: Stages, *,
                  through_registers: bool = False) -> DoubleBuffered:
    """``func`` with the tile ``found`` in two stages (the module docstring); its
    legality is :func:`.gpu_legality.check_double_buffer`.  ``through_registers``
    stages the next step's tile in a local buffer (:mod:`.register_staging`)."""
    old, loop, fill = found.buffer, found.loop, found.fill
    var, first = loop.var, loop.min
    step = var if _is_zero(first) else op.sub(var, first)
    new = dataclasses.replace(old, shape=(2,) + tuple(old.shape))
    nxt = op.add(var, 1)
    prefetch = n.IfThenElse(_Fold().visit(op.lt(nxt, op.add(first, loop.extent))),
                            _Halves(old, new, op.floormod(op.add(step, 1), 2)).visit(
                                _Fold().visit(substitute(fill, {var: nxt}))))
    current = _Halves(old, new, op.floormod(step, 2))
    body = [prefetch if k == found.at else current.visit(s)
            for k, s in enumerate(found.stmts)]
    local = None
    if through_registers:
        local, load, prefetch = staged(func, prefetch, new, found.where)
        body = [load if k == found.at else s for k, s in enumerate(body)] + [prefetch]
    inner = _splice(loop.body, found.alloc, body)
    new_loop = dataclasses.replace(loop, body=inner if local is None
                                   else n.Allocate(local, inner))
    prologue = _Halves(old, new, op.const(0)).visit(
        fresh_copy(_Fold().visit(substitute(fill, {var: first}))))
    if isinstance(prologue, n.Block):
        prologue = dataclasses.replace(prologue,
                                       name=fresh_block_name(func, f"{prologue.name}_prologue"))
    out = replace(func, loop, n.Allocate(new, seq(prologue, new_loop)))
    return DoubleBuffered(out, new, new_loop, prologue, prefetch)


def _loop_around(func: n.PrimFunc, alloc: n.Allocate, where: str) -> n.For:
    """The serial loop whose body holds ``alloc`` with only allocations and sequences
    in between."""
    path = ancestors(func, alloc)[:-1]
    for k in range(len(path) - 1, -1, -1):
        node = path[k]
        if isinstance(node, n.For):
            if node.kind is not n.ForKind.SERIAL:
                raise PolypadError(f"{where}: the loop {node.var.name!r} around it is "
                                   f"{node.kind.value}; the two stages alternate over a "
                                   "serial loop")
            return node
        if not isinstance(node, (n.Allocate, n.SeqStmt)):
            raise PolypadError(f"{where}: its allocation is not directly in a loop's body "
                               f"(a {type(node).__name__} is in between); cache it at a "
                               "loop with cache_read(..., \"shared\", at=loop)")
    raise PolypadError(f"{where}: it is allocated outside every loop; cache it at a loop "
                       "with cache_read(..., \"shared\", at=loop)")


def _splice(root: n.Stmt, alloc: n.Allocate, body: list[n.Stmt]) -> n.Stmt:
    """``root`` with ``alloc`` replaced by the statements ``body``, spliced into the
    sequence holding it (no sequence nested in a sequence)."""
    if root is alloc:
        return seq(*body)
    parent = ancestors(root, alloc)[-2]
    if isinstance(parent, n.SeqStmt):
        k = next(i for i, x in enumerate(parent.stmts) if x is alloc)
        return replace(root, parent, seq(*parent.stmts[:k], *body, *parent.stmts[k + 1:]))
    return replace(root, alloc, seq(*body))


def _touches(stmt: n.Stmt, buffer: n.Buffer, *, write: bool) -> bool:
    kind = n.BufferStore if write else n.BufferLoad
    return any(isinstance(x, kind) and x.buffer is buffer for x in walk(stmt))


def _is_zero(expr) -> bool:
    return isinstance(expr, n.IntImm) and expr.value == 0


class _Fold(Rewriter):
    """Constant arithmetic folded bottom-up (``4 * 0 + ax1`` is ``ax1``), as executed."""

    def visit_BinaryOp(self, node):
        return fold_constant(self.generic_visit(node))

    def visit_Compare(self, node):
        return fold_constant(self.generic_visit(node))


class _Halves(Rewriter):
    """Accesses of ``old`` as accesses of ``new`` (one more axis, first) at ``half``."""

    def __init__(self, old: n.Buffer, new: n.Buffer, half: n.Expr):
        self.old, self.new, self.half = old, new, half

    def visit_BufferLoad(self, node: n.BufferLoad):
        node = self.generic_visit(node)
        if node.buffer is not self.old:
            return node
        return dataclasses.replace(node, buffer=self.new, indices=(self.half,) + node.indices)

    def visit_BufferStore(self, node: n.BufferStore):
        node = self.generic_visit(node)
        if node.buffer is not self.old:
            return node
        return dataclasses.replace(node, buffer=self.new, indices=(self.half,) + node.indices)


__all__ = ["DoubleBuffered", "Stages", "double_buffer", "stages_of"]
