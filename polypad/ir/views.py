"""Buffer views: where the elements of a buffer declared over other memory live.

A view ``V`` (a :class:`~.nodes.DeclBuffer` of a buffer whose ``data`` is
another buffer ``B``) shares ``B``'s memory: its element ``idx`` is element
``elem_offset + flat(idx)`` of that memory, ``flat`` counting row-major over
``V``'s shape, and the memory's elements are ``B``'s, row-major over ``B``'s
shape.  TVM's flattening prints exactly such views (``A_1 = A.view(3072)``,
``T.decl_buffer((64,), data=A.data)``).

:func:`through_view` turns an access of a view into the access of the buffer
that owns the memory (its *root*), so the model, the bounds check and the
executors see one buffer where TVM's text names two.  A root is a parameter
or an allocation; a buffer declared over a pointer polypad does not follow
(``data=T.reinterpret(...)``) or over nothing is its own root, with memory
polypad cannot know (:func:`owns_unknown_memory`).
"""

from __future__ import annotations

from . import operators as ops
from .nodes import Buffer, Expr, IntImm, Var


def is_view(buffer: Buffer) -> bool:
    """True when ``buffer`` shares another buffer's memory."""
    return isinstance(buffer.data, Buffer)


def root(buffer: Buffer) -> Buffer:
    """The buffer that owns ``buffer``'s memory (``buffer`` itself unless it is a view)."""
    while isinstance(buffer.data, Buffer):
        buffer = buffer.data
    return buffer


def sharing(func, buffer: Buffer) -> list[Buffer]:
    """The other buffers of ``func`` over ``buffer``'s memory: its root and every view
    of that root, in the order they are declared (parameters first)."""
    from .nodes import Allocate, DeclBuffer
    from .visitor import walk

    declared = [p for p in func.params if isinstance(p, Buffer)]
    declared += [x.buffer for x in walk(func.body) if isinstance(x, (Allocate, DeclBuffer))]
    base = root(buffer)
    out: list[Buffer] = []
    for b in declared:
        if b is not buffer and root(b) is base and not any(b is c for c in out):
            out.append(b)
    return out


def require_unshared(func, buffer: Buffer, where: str) -> None:
    """Raise :class:`~polypad.errors.AliasError` when another buffer of ``func`` shares
    ``buffer``'s memory: ``where`` (a primitive) rewrites the accesses of ``buffer``
    alone, and the other's would go on reading or writing the old memory."""
    from polypad.errors import AliasError

    others = sharing(func, buffer)
    if others:
        names = ", ".join(repr(b.name) for b in others)
        raise AliasError(
            f"{where}: buffer {buffer.name!r} shares its memory with {names} (a view, "
            f"T.decl_buffer(..., data=...)); it rewrites the accesses of {buffer.name!r} "
            "alone and cannot follow the other's, so it refuses")


def owns_unknown_memory(buffer: Buffer) -> bool:
    """True for a root declared over a pointer expression or over no memory at all
    (``T.decl_buffer(..., data=T.reinterpret(...))``, a body's ``T.Buffer(shape)``,
    whose data is :data:`~.nodes_tvm.NO_DATA`)."""
    return buffer.data is not None and not isinstance(buffer.data, Buffer)


def _dim(d) -> Expr:
    return IntImm(d) if isinstance(d, int) else d


def flat_offset(indices, shape) -> Expr:
    """``indices`` counted row-major over ``shape``: ``i * 16 + j`` for (i, j) in (_, 16)."""
    out = None
    for index, extent in zip(indices, shape, strict=True):
        out = index if out is None else ops.add(ops.mul(out, _dim(extent)), index)
    return IntImm(0) if out is None else out


def unflatten(flat: Expr, shape) -> tuple[Expr, ...]:
    """The row-major indices of element ``flat`` of ``shape`` (the inverse of flat_offset)."""
    if len(shape) == 1:
        return (flat,)
    out = []
    rest = flat
    for k in range(len(shape) - 1, 0, -1):
        out.append(ops.floormod(rest, _dim(shape[k])))
        rest = ops.floordiv(rest, _dim(shape[k]))
    out.append(rest)
    return tuple(reversed(out))


def _plus(offset: Expr | None, x: Expr) -> Expr:
    if offset is None or (isinstance(offset, IntImm) and offset.value == 0):
        return x
    a, b = ops.promote(offset, x)
    return ops.add(a, b)


def through_view(buffer: Buffer, indices: tuple[Expr, ...]) -> tuple[Buffer, tuple[Expr, ...]]:
    """The root buffer and its indices for the access ``buffer[indices]``.

    A view of the same shape at offset 0 maps indices as they are; otherwise
    the element is flattened over the view's shape, moved by the offset and
    unflattened over the root's shape (``A_1[i * 16 + j]`` of ``A_1 =
    A.view(64)`` over ``A`` of shape (4, 16) is ``A[(i * 16 + j) // 16,
    (i * 16 + j) % 16]``, which the model reads as quasi-affine).
    """
    if not is_view(buffer):
        return buffer, indices
    base = root(buffer)
    offset = buffer.elem_offset
    same = (len(buffer.shape) == len(base.shape)
            and all(a is b or a == b for a, b in zip(buffer.shape, base.shape)))
    if same and (offset is None or (isinstance(offset, IntImm) and offset.value == 0)):
        return base, indices
    flat = _plus(offset, flat_offset(indices, buffer.shape))
    return base, unflatten(flat, base.shape)


def view_vars(buffer: Buffer) -> list[Var]:
    """The variables a view's declaration reads: its symbolic extents and offset."""
    from .visitor import walk

    out = [d for d in buffer.shape if isinstance(d, Var)]
    if buffer.elem_offset is not None:
        out += [x for x in walk(buffer.elem_offset) if isinstance(x, Var)]
    if isinstance(buffer.data, Expr):
        out += [x for x in walk(buffer.data) if isinstance(x, Var)]
    return out
