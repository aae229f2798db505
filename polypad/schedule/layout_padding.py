"""The statements ``transform_layout`` adds for a pad value (RFC 0077).

A buffer written in the function gets a padding stage right after its write
stage::

    for io, ii in T.grid(4, 4):
        with T.block("B_padding"):
            if 4 * io + ii >= 14:
                B[io, ii] = -2.0

A buffer the function only reads (an input) gets an assumption at the start::

    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == -1.0)

The condition is written as the RFC writes it: the logical index (the
inverse map) within the logical bounds, with each bound the transformed box
already implies left out.  isl checks that this form is exactly the
complement of the padding set; where it is not (a map that skips indices,
such as ``[2 * i]``), the index map's own padding predicate is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from polypad.ir import nodes as n
from polypad.ir.intrinsics import assume
from polypad.ir.operators import as_expr, ge, logical_and, logical_or, lt, negate
from polypad.ir.substitute import free_vars, substitute
from polypad.model.affine import AffineSpace
from polypad.model.conditions import to_set

from .pad_value import PadValue, check_pad_expr


def padding_condition(index_map, shape, indices: Sequence[n.Var]) -> tuple[n.Expr, n.Expr]:
    """``(inside, padding)`` over the transformed ``indices`` of a buffer of ``shape``.

    ``inside`` holds where a logical index maps to the point, ``padding``
    (its negation) where none does; both within the transformed shape.

    >>> padding_condition(IndexMap(lambda i: [i // 4, i % 4]), (14,), [io, ii])
    (4 * io + ii < 14, 4 * io + ii >= 14)
    """
    indices = tuple(indices)
    relation = index_map.relation(shape)
    inverse_map, predicate = relation.inverse(indices)
    space = AffineSpace(indices)
    box = to_set(logical_and(*(_in_range(v, extent) for v, extent in
                               zip(indices, relation.transformed_shape()))), space)
    padding = box.intersect(to_set(predicate, space))
    if padding.is_empty():
        return n.BoolImm(True), n.BoolImm(False)
    logical = inverse_map.trace(len(indices))[1]
    bounds = []
    for expr, extent in zip(logical, shape):
        for bound in (_bound(expr, ge, 0), _bound(expr, lt, extent)):
            if not box.is_subset(to_set(bound, space)):
                bounds.append(bound)
    inside = logical_and(*bounds) if bounds else n.BoolImm(True)
    if box.subtract(to_set(inside, space)).is_equal(padding):
        return inside, negate(inside)
    return negate(predicate), predicate


def padding_record(index_map, old: n.Buffer) -> n.Padding | None:
    """The padding of ``old`` transformed by ``index_map``, for the new buffer to record.

    The map's own padding, and the old buffer's padding carried through the
    map (a second transform keeps the first one's padding: an element that
    was padding holds no more logical data at its new place).  ``None`` when
    the result has none.
    """
    axes = tuple(index_vars(index_map, old.shape, axis_names(index_map, old.ndim)))
    _, padding = padding_condition(index_map, old.shape, axes)
    if old.padding is not None:
        inverse, _ = index_map.relation(old.shape).inverse(axes)
        earlier = substitute(old.padding.predicate,
                             dict(zip(old.padding.axes, inverse.trace(len(axes))[1])))
        padding = logical_or(padding, earlier)
    if isinstance(padding, n.BoolImm) and not padding.value:
        return None
    return n.Padding(axes, padding)


def has_padding(index_map, shape, names: Sequence[str]) -> bool:
    """Whether the transformed buffer has an element no logical index maps to."""
    _, padding = padding_condition(index_map, shape, index_vars(index_map, shape, names))
    return not (isinstance(padding, n.BoolImm) and not padding.value)


def index_vars(index_map, shape, names: Sequence[str]) -> list[n.Var]:
    """Variables named ``names`` for the transformed indices of a buffer of ``shape``, of
    the dtype that holds every one of them (:attr:`LayoutRelation.index_dtype`: ``int64``
    for an ``int64`` shape or a transformed extent past ``2**31 - 1``, else ``int32``)."""
    dtype = index_map.relation(shape).index_dtype
    return [n.Var(name, dtype) for name in names]


def axis_names(index_map, ndim: int) -> list[str]:
    """Names for loops over the transformed axes, after the logical ones they
    come from: ``i`` split in two gives ``io, ii``; ``j`` kept gives ``j``."""
    inputs, outputs, _ = index_map.trace(ndim)
    sources = []
    for out in outputs:
        used = [v for v in free_vars(out) if any(v is x for x in inputs)]
        sources.append(used[0] if len(used) == 1 else None)
    names = []
    for k, source in enumerate(sources):
        if source is None:
            names.append(f"ax{k}")
            continue
        group = [j for j, s in enumerate(sources) if s is source]
        if len(group) == 1:
            names.append(source.name)
        elif len(group) == 2:
            names.append(source.name + ("o" if group[0] == k else "i"))
        else:
            names.append(f"{source.name}{group.index(k)}")
    return _unique(names)


def padding_stage(buffer: n.Buffer, pad: PadValue, names: Sequence[str], index_map,
                  logical_shape, block_name: str, func: n.PrimFunc) -> n.Stmt:
    """The loop nest that stores the pad value to every padding element of ``buffer``."""
    indices = index_vars(index_map, logical_shape, names)
    _, padding = padding_condition(index_map, logical_shape, indices)
    value = check_pad_expr(pad.at(indices), buffer, indices, func)
    store = n.BufferStore(buffer, value, tuple(indices))
    body = n.Block(block_name, n.IfThenElse(padding, store))
    return _loops(indices, buffer.shape, body)


def assume_stage(buffer: n.Buffer, pad: PadValue, names: Sequence[str], index_map,
                 logical_shape, func: n.PrimFunc) -> n.Stmt:
    """The loop nest of ``T.assume(inside or buffer[...] == pad)`` over ``buffer``."""
    indices = index_vars(index_map, logical_shape, names)
    inside, _ = padding_condition(index_map, logical_shape, indices)
    value = check_pad_expr(pad.at(indices), buffer, indices, func)
    holds = n.Eq(n.BufferLoad(buffer, tuple(indices)), value)
    # `inside` is never the constant True here: transform_layout adds no stage
    # when there is no padding (a fact about every element would be false).
    assert not isinstance(inside, n.BoolImm), "assume_stage needs padding"
    fact = logical_or(inside, holds)
    return _loops(indices, buffer.shape, n.Evaluate(assume(fact)))


def _loops(indices, shape, body: n.Stmt) -> n.Stmt:
    for var, extent in reversed(list(zip(indices, shape))):
        body = n.For(var, n.IntImm(0, var.dtype), as_expr(extent, var.dtype), n.ForKind.SERIAL,
                     body)
    return body


def _in_range(var: n.Var, extent) -> n.Expr:
    return logical_and(ge(var, 0), lt(var, extent))


def _bound(expr: n.Expr, compare, value) -> n.Expr:
    """``compare(expr, value)`` with a trailing constant moved across:
    ``8 * io + ii - 2 >= 0`` reads ``8 * io + ii >= 2``."""
    if isinstance(value, int) and isinstance(expr, (n.Add, n.Sub)) \
            and isinstance(expr.b, n.IntImm):
        shift = expr.b.value if isinstance(expr, n.Add) else -expr.b.value
        return compare(expr.a, value - shift)
    return compare(expr, value)


def _unique(names: list[str]) -> list[str]:
    out, seen = [], set()
    for name in names:
        candidate, k = name, 1
        while candidate in seen:
            candidate, k = f"{name}_{k}", k + 1
        seen.add(candidate)
        out.append(candidate)
    return out
