"""Reads of padding whose value nobody gave (RFC 0077 review).

"Without a pad_value, no read or write of the padding existed before, so no
later transformation may introduce one."  ``transform_layout`` records on the
new buffer which elements are padding (``Buffer.padding``, a predicate over
its axes).  A pad value gives the padding a meaning: an input gets a
``T.assume`` about it, a buffer the function writes a stage that stores it.
Without one, the padding holds whatever the caller's memory (or a fresh
allocation) held: no value a transformation may rely on.

:func:`unknown_padding_reads` finds the reads of padding that see such a
value: a read of a padding element that no store and no ``T.assume`` reached
before it (the assumption is the caller's promise about that element).
:func:`introduced_padding_read` compares two versions of a function, such as
before and after a conditional is removed, and names a read of padding the
second makes that the first did not.

Everything is ISL on the model's instances and program times; nothing is
enumerated.

>>> introduced_padding_read(f, g)   # Refuted: S0(k=0, jo=3, ji=31) reads B[0, 3, 31] ...
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import AffineSpace, Model, extract, to_set
from polypad.model.isl_helpers import empty_union_map

from . import instances as inst
from .evidence import Counterexample, Decision, Element, Refuted, Unknown


def padded_buffers(f: n.PrimFunc) -> list[n.Buffer]:
    """The buffers of ``f`` (parameters and allocations) that record padding."""
    found = {id(p): p for p in f.params if isinstance(p, n.Buffer) and p.padding is not None}
    for node in walk(f.body):
        if isinstance(node, n.Allocate) and node.buffer.padding is not None:
            found[id(node.buffer)] = node.buffer
    return list(found.values())


def unknown_padding_reads(model: Model) -> tuple[isl.UnionMap, isl.UnionMap]:
    """``(certain, maybe)``: reads ``S[i] -> Buf[e]`` of a padding element that no store
    and no ``T.assume`` reached before.

    ``certain`` holds the reads that happen for sure (no data-dependent guard)
    and that no store, even one under such a guard, reaches first; ``maybe``
    the others that might see an unknown value.
    """
    certain, maybe = empty_union_map(), empty_union_map()
    padded = [b for b in model.buffer_names.objects()
              if isinstance(b, n.Buffer) and b.padding is not None]
    if not padded:
        return certain, maybe
    depth = inst.depth_of(model)
    times = {s.name: inst.statement_time(s, depth) for s in model.statements}
    for buffer in padded:
        padding = _padding_set(model, buffer)
        # Who reaches an element first: stores (sure or not) and assumptions.
        reachers = [(s, a) for s in model.statements for a in s.accesses
                    if a.buffer is buffer and (a.kind == "write" or s.is_assume)]
        sure_reachers = [(s, a) for s, a in reachers if not a.may]
        for s in model.statements:
            if s.is_assume:
                continue
            for a in s.accesses:
                if a.buffer is not buffer or a.kind != "read":
                    continue
                reads = a.relation.intersect_range(padding)
                if reads.is_empty():
                    continue
                unreached = _unreached(reads, times[s.name], reachers, times)
                if not a.may and not s.may:
                    certain = certain.union(isl.UnionMap.from_map(unreached))
                # Reached only by a store that may not run: the value may be unknown.
                maybe = maybe.union(isl.UnionMap.from_map(
                    _unreached(reads, times[s.name], sure_reachers, times)))
    return certain, maybe.subtract(certain)


def introduced_padding_read(before: n.PrimFunc, after: n.PrimFunc, what: str
                            ) -> Decision | None:
    """A read of padding with no known value that ``after`` makes and ``before`` does not.

    Compared by element: ``after`` may read such an element only where
    ``before`` already did.  Returns ``Refuted`` naming the reading instance
    and the element, ``Unknown`` when such a read may happen (a guard on data
    decides) or the functions cannot be modelled, and ``None`` when there is
    none.  ``what`` describes ``after`` in the evidence ("running the then
    branch everywhere").
    """
    if not padded_buffers(after):
        return None
    try:
        old_model, new_model = extract(before), extract(after)
    except (PolypadError, isl.Error) as err:
        rise_unless_expected(err, DIVISIONS_REFUSED)  # out of budget, ISL failing: rise
        return Unknown(f"{what} may read padding: the function cannot be modelled ({err})")
    old_certain, old_maybe = unknown_padding_reads(old_model)
    new_certain, new_maybe = unknown_padding_reads(new_model)
    already = _elements(old_certain).union(_elements(old_maybe))
    found = _first_outside(new_certain, already)
    if found is not None:
        return Refuted(_evidence(new_model, found, what))
    found = _first_outside(new_maybe, already)
    if found is not None:
        cex = _evidence(new_model, found, what)
        return Unknown(f"{cex}; a guard on data decides whether that read happens (or "
                       "whether a store reaches the element first)")
    return None


def _padding_set(model: Model, buffer: n.Buffer) -> isl.Set:
    """The padding elements of ``buffer``, in the model's space for it."""
    record = buffer.padding
    space = AffineSpace(record.axes, tuple_name=model.buffer_name(buffer), names=model.names)
    return to_set(record.predicate, space).intersect(inst.buffer_box(model, buffer))


def _unreached(reads: isl.Map, time: isl.Map, reachers, times: dict) -> isl.Map:
    """The pairs of ``reads`` (``S[i] -> Buf[e]``) whose element none of ``reachers``
    (``(statement, access)``) touches at an earlier time."""
    out = reads
    for s, a in reachers:
        # S[i] -> R[j] with R[j] strictly before S[i], then R[j]'s elements.
        earlier = time.lex_gt_map(times[s.name])
        out = out.subtract(earlier.apply_range(a.relation))
        if out.is_empty():
            break
    return out


def _elements(reads: isl.UnionMap) -> isl.UnionSet:
    return reads.range()


def _first_outside(reads: isl.UnionMap, elements: isl.UnionSet) -> isl.Point | None:
    """The first pair of ``reads`` whose element is not in ``elements``."""
    return inst.first_point(reads.subtract_range(elements))


def _evidence(model: Model, point: isl.Point, what: str) -> Counterexample:
    """The counterexample of one read pair ``[S[i] -> Buf[e]]``."""
    space = point.get_space().unwrap()
    name = space.get_tuple_name(isl.dim_type.in_)
    n_in = space.dim(isl.dim_type.in_)
    coords, params = inst.point_coordinates(point)
    statement = model.statement(name)
    buffer = model.buffer(space.get_tuple_name(isl.dim_type.out))
    read = inst.instance(model, statement, coords[:n_in])
    element = Element(buffer.name, tuple(coords[n_in:]))
    text = (f"{what} makes {read} read {element}, padding of {buffer.name} that holds no "
            f"known value: no pad_value, T.assume or earlier store gives it one, and "
            f"without a pad_value no transformation may introduce a read of the padding")
    return Counterexample(text, instances=(read,), element=element, params=params)
