"""Elements kept in a register for the length of a serial loop (scalar promotion).

A thread that updates one element of shared or global memory at every
iteration of a loop (``B_rf[tx] = B_rf[tx] + A[i, k * 256 + tx]``, rfactor's
partial sums) need not load and store it each time: it may load it once
before the loop into a register, update the register, and store it once
after -- what a CUDA programmer writes, and what the compiler cannot do by
itself where it cannot prove that ``A`` and ``B_rf`` do not overlap.

The emitted kernel computes the same exactly when no other access can see
the difference:

- in the thread: every access of the buffer inside the loop is to that one
  element, by an index of values fixed before the loop (no variable bound
  inside it, and no load: ``B[X[tx]]`` names another element once the loop
  writes ``X[tx]``), so no access inside the loop reads it from memory;
- in the other threads: the loop holds no barrier, so every conflicting
  access of another thread is ordered before the loop starts or after it
  ends (:mod:`analyses.gpu_sync` orders every such pair by a barrier
  outside the loop), when memory holds what the serial program says;
- the accesses are not conditional (no ``if``, no bound loop, no atomic
  update, a loop of a constant, positive trip count), so the load and the
  store after are of an element the loop touches, on every run: the store
  writes no element another thread might own at the time.
"""

from __future__ import annotations

from polypad.ir import nodes as ir
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk


def promotable(loop: ir.For, plan, atomics: dict, local: set) -> list[tuple[ir.Buffer, tuple]]:
    """The ``(buffer, indices)`` of the elements ``loop`` may keep in registers (see the
    module docstring); ``local`` are the buffers already per thread."""
    if not (isinstance(loop.extent, ir.IntImm) and loop.extent.value > 0):
        return []
    inside: set = {loop.var}
    stores: list[ir.BufferStore] = []
    for x in walk(loop.body):
        match x:
            case ir.For() if x.kind not in (ir.ForKind.SERIAL, ir.ForKind.UNROLL):
                return []
            case ir.For():
                inside.add(x.var)
            case ir.IfThenElse():
                return []
            case ir.LetStmt():
                inside.add(x.var)
            case ir.BufferStore():
                stores.append(x)
        if isinstance(x, (ir.SeqStmt, ir.For)) and plan.at(x):
            return []
    if plan.at(loop):
        return []
    out = []
    for store in stores:
        buffer, indices = store.buffer, tuple(store.indices)
        if buffer.scope not in ("shared", "global", "") or buffer in local:
            continue
        if id(store) in atomics or any(v in inside for i in indices for v in free_vars(i)):
            continue
        if any(isinstance(x, ir.BufferLoad) for i in indices for x in walk(i)):
            continue  # a data-dependent index: its element may change inside the loop
        if any(b is buffer and i == indices for b, i in out):
            continue
        same = all(tuple(x.indices) == indices for x in walk(loop.body)
                   if isinstance(x, (ir.BufferLoad, ir.BufferStore)) and x.buffer is buffer)
        allocated = any(isinstance(x, ir.Allocate) and x.buffer is buffer
                        for x in walk(loop.body))
        if same and not allocated:
            out.append((buffer, indices))
    return out
