"""Unrolled copies of one store written loads first, stores after.

``for jj in T.unroll(4): B[i, jj * 256 + tx] = A[i, jj * 256 + tx] * 2 + 1``
written out as four load-compute-store lines makes each thread wait for one
load at a time: the compiler may not move the second load of ``A`` above the
first store to ``B`` unless it knows the two arrays apart.  A CUDA
programmer loads the four values first, then stores them, so that the four
loads are in flight at once.  :func:`batch` finds the unrolled nests where
the ``cuda`` target may do that, and the same results follow:

- every copy is one store (through blocks; unrolled or one-iteration loops,
  and thread loops that every thread runs, around it), so nothing else runs
  in between;
- no copy's value or index reads a buffer any copy writes: distinct buffers
  are distinct memory (the call refuses a written argument that overlaps
  another, :mod:`codegen.calling` and :mod:`.runtime` for device arrays), so
  moving a load above a store of another buffer changes no value;
- the nest holds no barrier, and no store is atomic.
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.ir import nodes as ir
from polypad.ir.visitor import walk

#: Most copies written loads first (registers each holds one value).
MAX_BATCH = 64


@dataclass
class Batch:
    """The copies of an unrolled nest: the thread loops around the store (each assigned
    once) and, per copy, the counters' values and the store."""

    threads: list[ir.For]
    copies: list[tuple[dict, ir.BufferStore]]


def batch(loop: ir.For, plan, atomics: dict, full) -> Batch | None:
    """The :class:`Batch` of the unrolled ``loop`` (see the module docstring), or None;
    ``full(l)`` says whether the thread loop ``l`` runs on every thread (no guard)."""
    found = Batch([], [])
    if not _expand(loop, {}, found, full) or len(found.copies) < 2:
        return None
    if len(found.copies) > MAX_BATCH:
        return None
    if any(plan.at(x) for x in walk(loop) if isinstance(x, (ir.SeqStmt, ir.For))):
        return None
    written = {id(store.buffer) for _, store in found.copies}
    for _, store in found.copies:
        if id(store) in atomics:
            return None
        for part in (store.value, *store.indices):
            if any(isinstance(x, ir.BufferLoad) and id(x.buffer) in written
                   for x in walk(part)):
                return None
    return found


def _expand(stmt: ir.Stmt, constants: dict, found: Batch, full) -> bool:
    match stmt:
        case ir.Block():
            return _expand(stmt.body, constants, found, full)
        case ir.For() if stmt.kind in (ir.ForKind.SERIAL, ir.ForKind.UNROLL):
            if not (isinstance(stmt.min, ir.IntImm) and isinstance(stmt.extent, ir.IntImm)):
                return False
            if stmt.extent.value != 1 and stmt.kind is not ir.ForKind.UNROLL:
                return False
            for value in range(stmt.min.value, stmt.min.value + stmt.extent.value):
                if not _expand(stmt.body, {**constants, stmt.var: value}, found, full):
                    return False
            return True
        case ir.For() if stmt.kind.value.startswith("threadIdx") and full(stmt):
            if all(loop is not stmt for loop in found.threads):
                found.threads.append(stmt)
            return _expand(stmt.body, constants, found, full)
        case ir.BufferStore():
            found.copies.append((constants, stmt))
            return True
    return False
