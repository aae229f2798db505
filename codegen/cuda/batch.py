"""Unrolled copies of one store written with their loads first, each once.

``for jj in T.unroll(4): B[i, jj * 256 + tx] = A[i, jj * 256 + tx] * 2 + 1``
written out as four load-compute-store lines makes each thread wait for one
load at a time: the compiler may not move the second load of ``A`` above the
first store to ``B`` unless it knows the two arrays apart.  A CUDA
programmer loads the four values first, then stores, so that the four loads
are in flight at once; and in a register tile's update
``C_local[i1, j1] += A_shared[ty + 16 * i1, k] * B_shared[k, tx + 16 * j1]``
loads the 8 values of ``A_shared`` and the 8 of ``B_shared`` once into
registers (the fragments) for the 64 multiply-adds.  :func:`batch` finds
the unrolled nests where the ``cuda`` target may load every distinct
element of shared or global memory that the copies read first, once, into
a register, and then run the copies in order on the registers; the same
results follow:

- every copy is one store (through blocks; unrolled or one-iteration loops,
  vectorized loops of 2 or 4 lanes (each lane a copy, :mod:`.wide_runs`),
  thread loops that every thread runs, and ``if``s on counters, around it), so
  nothing else runs in between; a guarded copy's loads move under its guard
  (``v = A[...] if guard else 0``), so no load runs that the program does not
  run;
- only loads of buffers no copy writes move: distinct buffers are distinct
  memory (the call refuses a written argument that overlaps another,
  :mod:`codegen.calling`, and :mod:`.runtime` for device arrays), so moving
  a load above a store of another buffer changes no value, nor does reading
  the element once for two reads with no store to it in between;
- only loads the copy runs on every evaluation move
  (:func:`codegen.eager_loads.eager_loads`): one in an arm of
  ``T.if_then_else`` may name an element outside its buffer where its
  condition does not hold (``T.if_then_else(X[i] >= 0, A[X[i]], 0)``);
- the nest holds no barrier, and no store is atomic.

Nests that load nothing from shared or global memory but what they write
(a register tile's zeroing, its write-back) are written as before: there is
no latency to overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.ir import nodes as ir
from polypad.ir.visitor import walk

from ..eager_loads import eager_loads

#: Most loads moved first (each takes a register).
MAX_BATCH = 64

#: The extents of the vectorized loops written out like unrolled ones, each lane a copy
#: (:mod:`.wide_runs` finds the runs among them that move as one wide access).
VECTOR_LANES = (2, 4)


@dataclass
class Batch:
    """The copies of an unrolled nest: the thread loops around the store (each assigned
    once) and, per copy, the counters' values and the store."""

    threads: list[ir.For]
    copies: list[tuple[dict, ir.BufferStore]]
    #: Per copy, the conditions (of counters, not memory) under which it runs: a partial
    #: last pass of a tile copy.  Its loads move first under the same conditions.
    guards: list[tuple[ir.Expr, ...]] = field(default_factory=list)
    #: The vectorized loops written out (:data:`VECTOR_LANES`), outer first.
    lanes: list[ir.For] = field(default_factory=list)


def batch(loop: ir.For, plan, atomics: dict, full) -> Batch | None:
    """The :class:`Batch` of the unrolled ``loop`` (see the module docstring), or None;
    ``full(l)`` says whether the thread loop ``l`` runs on every thread (no guard)."""
    found = Batch([], [])
    if not _expand(loop, {}, found, full, ()) or len(found.copies) < 2:
        return None
    if any(plan.at(x) for x in walk(loop) if isinstance(x, (ir.SeqStmt, ir.For))):
        return None
    written = {id(store.buffer) for _, store in found.copies}
    for _, store in found.copies:
        if id(store) in atomics:
            return None
    if not found.lanes and not any(moved_loads(store, written) for _, store in found.copies):
        return None  # no load of memory to overlap: registers and constants only
        # (vectorized lanes may still store in runs: .wide_runs decides)
    return found


def moved_loads(store: ir.BufferStore, written: set[int]) -> list[ir.BufferLoad]:
    """The loads of ``store`` (its indices', then its value's, in walk order) that may
    move first: :func:`movable`, and run on every evaluation (see the module
    docstring)."""
    parts = (*store.indices, store.value)
    eager = {id(x) for part in parts for x in eager_loads(part)}
    return [x for part in parts for x in walk(part) if id(x) in eager and movable(x, written)]


def movable(node, written: set[int]) -> bool:
    """Whether ``node`` is a load that may move first (see the module docstring)."""
    return (isinstance(node, ir.BufferLoad) and node.buffer.scope != "local"
            and id(node.buffer) not in written)


def _expand(stmt: ir.Stmt, constants: dict, found: Batch, full, guards: tuple) -> bool:
    match stmt:
        case ir.Block():
            return _expand(stmt.body, constants, found, full, guards)
        case ir.For() if stmt.kind in (ir.ForKind.SERIAL, ir.ForKind.UNROLL):
            if not (isinstance(stmt.min, ir.IntImm) and isinstance(stmt.extent, ir.IntImm)):
                return False
            if stmt.extent.value != 1 and stmt.kind is not ir.ForKind.UNROLL:
                return False
            for value in range(stmt.min.value, stmt.min.value + stmt.extent.value):
                if not _expand(stmt.body, {**constants, stmt.var: value}, found, full, guards):
                    return False
            return True
        case ir.For() if (stmt.kind is ir.ForKind.VECTORIZED and isinstance(stmt.min, ir.IntImm)
                          and stmt.min.value == 0 and isinstance(stmt.extent, ir.IntImm)
                          and stmt.extent.value in VECTOR_LANES):
            if all(loop is not stmt for loop in found.lanes):
                found.lanes.append(stmt)
            for value in range(stmt.extent.value):
                if not _expand(stmt.body, {**constants, stmt.var: value}, found, full, guards):
                    return False
            return True
        case ir.For() if stmt.kind.value.startswith("threadIdx") and full(stmt):
            if all(loop is not stmt for loop in found.threads):
                found.threads.append(stmt)
            return _expand(stmt.body, constants, found, full, guards)
        case ir.IfThenElse() if stmt.else_case is None and not any(
                isinstance(x, ir.BufferLoad) for x in walk(stmt.condition)):
            return _expand(stmt.then_case, constants, found, full, guards + (stmt.condition,))
        case ir.BufferStore():
            found.copies.append((constants, stmt))
            found.guards.append(guards)
            return True
    return False

