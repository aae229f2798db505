"""Reads of shared memory that no earlier write of the same allocation feeds.

The reference executor fills every allocation with zeros each time it runs
the ``Allocate``; a GPU's ``cuda.shared.array`` holds whatever was there.
The two agree on every read that, in the serial program, some earlier
instance of the same allocation wrote: the barrier plan
(:mod:`analyses.gpu_sync`) keeps every conflicting pair in its serial order,
so that read sees the same write on the GPU, never the unset memory.  A read
of an element that nothing wrote before it in that allocation reads the
reference's zero; :func:`unwritten_shared_reads` finds them, exactly, with
isl, and the ``cuda`` target zero-fills just those buffers
(:mod:`polypad.transform.shared_zero_fill`).

"The same allocation" is the same iteration of every loop around the
``Allocate`` (the serial program allocates afresh in each).  A write whose
relation over-approximates (``may``: a dropped guard) feeds nothing here,
so an answer of "written" is never a guess.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n
from polypad.model import extract_gathers

from . import instances as inst
from .evidence import Element, Instance
from .gpu_threads import children


def _enclosing_loops(func: n.PrimFunc, scope: str) -> dict[n.Buffer, set[int]]:
    """For each buffer ``func`` allocates in memory ``scope``, the ids of the loops
    around its ``Allocate``."""
    out: dict[n.Buffer, set[int]] = {}

    def visit(stmt, loops):
        if isinstance(stmt, n.Allocate) and stmt.buffer.scope == scope:
            out[stmt.buffer] = {id(loop) for loop in loops}
        if isinstance(stmt, n.For):
            loops = loops + (stmt,)
        for child in children(stmt):
            visit(child, loops)

    visit(func.body, ())
    return out


def unwritten_shared_reads(func: n.PrimFunc, scope: str = "shared"
                           ) -> dict[n.Buffer, tuple[Instance, Element]]:
    """For each buffer in memory ``scope`` (``"shared"``, or ``"local"``: the target
    zero-fills only those of these it must) some read of which may find no earlier
    write in the same allocation (see the module docstring): the first such read
    instance and its element.  Buffers absent from the answer are proved written before
    every read."""
    allocated = _enclosing_loops(func, scope)
    if not allocated:
        return {}
    model = extract_gathers(func)
    out: dict[n.Buffer, tuple[Instance, Element]] = {}
    for buffer, around in allocated.items():
        writes = [(s, a) for s in model.statements for a in s.accesses
                  if a.buffer is buffer and a.kind == "write" and not a.may and not s.may]
        for d in model.statements:
            for b in d.accesses:
                if b.buffer is not buffer or b.kind != "read":
                    continue
                left = b.relation
                for s, a in writes:
                    earlier = s.time.lex_lt_map(d.time).reverse()  # d -> s before it
                    shared = [k for k, loop in enumerate(d.loops) if id(loop) in around]
                    for k in shared:  # the same allocation: the loops around it agree
                        earlier = earlier.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
                    written = earlier.apply_range(a.relation)  # d -> elements written before
                    left = left.subtract(written)
                    if left.is_empty():
                        break
                if left.is_empty() or buffer in out:
                    continue
                point = inst.first_point(isl.UnionMap.from_map(left))
                values, _ = inst.point_coordinates(point)
                k = d.domain.dim(isl.dim_type.set)
                out[buffer] = (inst.instance(model, d, values[:k]),
                               Element(buffer.name, tuple(int(v) for v in values[k:])))
    return out


__all__ = ["unwritten_shared_reads"]
