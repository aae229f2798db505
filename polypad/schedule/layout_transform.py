"""``transform_layout``: give a buffer a new layout, with padding (RFC 0077, RFC 0039).

Before, with ``transform_layout("compute", "B", lambda i: [i // 4, i % 4],
pad_value=-2.0)``::

    def func(A: T.Buffer(14, "float32"), B: T.Buffer(14, "float32")):
        for i in T.serial(14):
            with T.block("compute"):
                B[i] = 2.0 * A[i]

after::

    def func(A: T.Buffer(14, "float32"), B: T.Buffer((4, 4), "float32")):
        for i in T.serial(14):
            with T.block("compute"):
                B[i // 4, i % 4] = 2.0 * A[i]
        for io, ii in T.grid(4, 4):
            with T.block("B_padding"):
                if 4 * io + ii >= 14:
                    B[io, ii] = -2.0

Every access of the buffer, anywhere in the function, goes through the map,
and the buffer takes the transformed shape (and the map's axis separators).
The map must be quasi-affine (:class:`NotAffineError`) and injective on the
buffer's shape (:class:`NonInjectiveError` naming two logical indices that
collide).  This is correct because the map is a bijection from the logical
indices onto the non-padding part of the new shape: each element keeps its
value at its new place, and no access reaches the padding.

With a pad value, the padding gets a meaning: a buffer written in the
function gets a padding stage right after its (last) write stage; a buffer
it only reads gets a ``T.assume`` at the start, a fact the caller promises
about its input (rule 1 of the review notes).  ``T.undef()`` assumes or
writes "any valid value": it grants permission to read or overwrite.
Applying a second transform to the same buffer rewrites the first's
statements through the second map, so each padding keeps its own semantics
(RFC 0077, "Multiple Buffer Semantics").
"""

from __future__ import annotations

from polypad.errors import ArgumentTypeError, IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, find_buffer
from polypad.ir.naming import fresh_block_name
from polypad.ir.stages import insert_after, prepend, stage_of, stores_to
from polypad.ir.views import require_unshared
from polypad.layout import IndexMap

from .interface import check_interface, is_parameter
from .layout_padding import (
    assume_stage,
    axis_names,
    has_padding,
    padding_record,
    padding_stage,
)
from .layout_rewrite import relayout
from .pad_value import resolve_pad_value


def as_index_map(index_map) -> IndexMap:
    """An :class:`IndexMap` from an index map, a callable or ``"lambda ..."`` text."""
    if isinstance(index_map, IndexMap):
        return index_map
    if isinstance(index_map, str) or callable(index_map):
        return IndexMap(index_map)
    raise ArgumentTypeError(f"Schedule.transform_layout: index_map must be an IndexMap, a "
                            f"callable or lambda text, not {type(index_map).__name__}")


def transform_layout(func: n.PrimFunc, block: str | None, buffer, index_map, pad_value=None,
                     *, preserve_interface: bool = False) -> n.PrimFunc:
    """``func`` with ``buffer`` in the layout ``index_map``; see the module docstring.

    ``block`` names a block that accesses the buffer (checked to exist; the
    transform covers the whole function, as a layout belongs to the buffer),
    or is ``None``.
    """
    if block is not None:
        find_block(func, block)
    old = find_buffer(func, buffer)
    require_unshared(func, old, "transform_layout")
    check_interface(func, old, preserve=preserve_interface, primitive="transform_layout")
    index_map = as_index_map(index_map)
    relation = index_map.relation(old.shape)
    relation.check_injective()
    # TVM's keywords stay (an alignment, extents written T.int64 and so printed again).
    new = n.Buffer(old.name, _shape(relation.transformed_shape(), old, index_map), old.dtype,
                   relation.separators, old.scope, padding_record(index_map, old),
                   tvm_attrs=old.tvm_attrs)
    pad = resolve_pad_value(pad_value, func, old, new)
    out = relayout(func, old, new, index_map)
    if pad is None:
        return out
    names = list(pad.names) if pad.names else axis_names(index_map, old.ndim)
    if not has_padding(index_map, old.shape, names):
        return out  # no padding: nothing to store, nothing to assume
    writes = stores_to(out, new)
    if writes:
        stage = stage_of(out, writes[-1])
        name = fresh_block_name(out, f"{new.name}_padding")
        fill = padding_stage(new, pad, names, index_map, old.shape, name, out)
        return insert_after(out, stage, fill)
    if not is_parameter(out, new):
        raise IllegalTransformError(
            f"pad_value for {new.name}: the buffer is allocated in {func.name} but never "
            f"written, so there is no write stage to follow with the padding, and an "
            f"assumption about memory nobody wrote would be false", evidence=new.name)
    return prepend(out, assume_stage(new, pad, names, index_map, old.shape, out))


def _shape(extents, buffer: n.Buffer, index_map: IndexMap) -> tuple:
    for extent in extents:
        if not isinstance(extent, (int, n.Var)):
            raise PolypadError(
                f"{index_map!r} gives buffer {buffer.name} the extent {extent}, which is not "
                f"a constant or a parameter; a buffer shape must be one or the other")
    return tuple(extents)
