"""Whether a buffer's allocation may move inside loops: no value crosses their iterations.

Allocating a buffer inside a loop makes it fresh (zero-filled, in the
reference semantics) at every iteration.  A read then finds what its own
iteration wrote, or zero.  The function computes the same as with the buffer
allocated outside exactly when every read's last writer in the original is
in the same iteration of those loops, or there is none (it read the initial
zero): when no flow dependence on the buffer is carried by any of them.
:func:`carried_flow` decides that with isl, from the value-based dataflow
(:func:`analyses.dependences`), and gives the pair that crosses.

Moving an allocation the other way, out of a loop (to where every iteration shares
it), needs more: no dependence of any kind on it carried by the loops it leaves,
so that different iterations touch different elements.  :func:`carried_dependence`
decides that for the kinds asked for.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n

from . import instances as inst
from .dataflow import dependences
from .evidence import Counterexample
from .loop_carried import _carried_pairs


def carried_flow(func: n.PrimFunc, buffer: n.Buffer, loops: list[n.For]
                 ) -> Counterexample | None:
    """A flow dependence on ``buffer`` between two iterations of one of ``loops`` (with
    the same iterations of the loops around it), or ``None`` where there is none."""
    return carried_dependence(func, buffer, loops, ("flow",))


def carried_dependence(func: n.PrimFunc, buffer: n.Buffer, loops: list[n.For],
                       kinds: tuple[str, ...] = ("flow", "anti", "output")
                       ) -> Counterexample | None:
    """A dependence of one of ``kinds`` on ``buffer`` between two iterations of one of
    ``loops`` (with the same iterations of the loops around it), or ``None``."""
    deps = dependences(func)
    names = {a.relation.get_tuple_name(isl.dim_type.out) for s in deps.model.statements
             for a in s.accesses if a.buffer is buffer}
    if not names:
        return None
    for kind in kinds:
        tagged = _on(deps.tagged(kind), names)
        for loop in loops:
            pairs = _carried_pairs(deps.model, loop)
            if pairs is None:
                continue
            found = tagged.zip().intersect_domain(pairs.wrap()).zip()
            if found.is_empty():
                continue
            src, dst, element, params = deps.decode(inst.first_point(found))
            return Counterexample(_CROSSING[kind].format(src=src, dst=dst, element=element)
                                  + f" in another iteration of loop {loop.var.name!r}",
                                  instances=(src, dst), element=element, params=params)
    return None


#: How a crossing dependence of each kind is told (the source is the earlier instance).
_CROSSING = {
    "flow": "{dst} reads {element}, which {src} writes",
    "anti": "{dst} writes {element}, which {src} reads",
    "output": "{dst} writes {element}, which {src} writes",
}


def _on(tagged: isl.UnionMap, names: set[str]) -> isl.UnionMap:
    """The pairs of ``tagged`` (``[S -> Buf[e]] -> [S' -> Buf[e]]``) on those buffers."""
    kept = isl.UnionMap.empty(tagged.get_space())

    def keep(m: isl.Map) -> None:
        nonlocal kept
        element = m.get_space().domain().unwrap().range()
        if element.get_tuple_name(isl.dim_type.set) in names:
            kept = kept.union(isl.UnionMap.from_map(m))

    tagged.foreach_map(keep)
    return kept


__all__ = ["carried_dependence", "carried_flow"]
