"""Lowering buffer views: one flat buffer per piece of memory that views share.

TVM's flattening declares views (``A_1 = A.view(96)``) and its storage
rewrite declares one allocation under two names; both executors assume that
two buffers are two pieces of memory (the Numba emitter holds an element in
a local across a loop on that assumption).  So before either runs, every
buffer that has a view gets one flat, 1-d buffer over its memory, declared
where the memory begins (at the top for a parameter, inside the allocation
for a ``T.alloc_buffer``), and every access, of the buffer or of any of its
views, becomes an access of that flat buffer at the element's row-major
position plus the view's offset::

    A_1 = T.decl_buffer((96,), data=A.data)        A_flat = T.decl_buffer((96,), data=A.data)
    A[i, j] = A_1[i * 12 + j + 1]          ->      A_flat[i * 12 + j] = A_flat[i * 12 + j + 1]

The flat buffer is the one kind of view the executors run: the reference
executor reshapes the array (a numpy view), the Numba kernel too.

A view's own shape bounds its accesses, whatever the size of the memory
behind it: the bounds analysis (:func:`analyses.check_bounds`) checks an access
of ``A_1`` against ``A_1``'s shape, and what it proves relies on it.  So each
flat access lowered from a view keeps the access as written in its
``view_access`` (``(A_1, (X[i],))``), and every target checks those indices
against the view's shape before the flat one: the reference executor
always (``_Interpreter.check_view``), a compiled kernel where the analysis
could not prove them inside (:mod:`codegen.bounds_guards`).  An access
outside is the :class:`~polypad.errors.BoundsCheckError` of a plain buffer,
naming the view.
A view whose extents are not constants or scalar parameters (TVM's ``A_1 =
A.view(n * m)`` under a let) is bounded by its memory alone, as the analysis
has it (it cannot read a let as a parameter).
"""

from __future__ import annotations

import math

from polypad.ir import operators as ops
from polypad.ir.nodes import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    LetStmt,
    PrimFunc,
    Var,
)
from polypad.ir.views import flat_offset, is_view, root
from polypad.ir.visitor import Rewriter, walk


def lower_views(func: PrimFunc) -> PrimFunc:
    """``func`` with its views replaced by flat buffers over the memory they share."""
    roots: dict[int, Buffer] = {}
    for node in walk(func.body):
        if isinstance(node, DeclBuffer) and is_view(node.buffer):
            base = root(node.buffer)
            roots[id(base)] = base
    if not roots:
        return func
    flat = {key: Buffer(f"{b.name}_flat", (_size_dim(b),), b.dtype, (), b.scope, data=b)
            for key, b in roots.items()}
    body = _Flatten(roots, flat, set(func.params)).visit(func.body)
    for p in reversed(func.params):  # a parameter's flat buffer is declared at the top
        if isinstance(p, Buffer) and id(p) in flat:
            body = _declare(flat[id(p)], p, body)
    return PrimFunc(func.name, func.params, body, func.attrs, func.ret_dtype)


def _size_dim(buffer: Buffer) -> int | Var:
    if all(isinstance(d, int) for d in buffer.shape):
        return math.prod(buffer.shape)
    return Var(f"{buffer.name}_size", "int64")  # bound by a let where it is declared


def _declare(flat: Buffer, base: Buffer, body):
    """``DeclBuffer(flat)`` over ``body``, behind a let of its element count if symbolic."""
    stmt = DeclBuffer(flat, body)
    size = flat.shape[0]
    if isinstance(size, Var):
        count = None
        for d in base.shape:
            d = ops.cast("int64", d if isinstance(d, Var) else ops.const(d, "int64"))
            count = d if count is None else ops.mul(count, d)
        stmt = LetStmt(size, count, stmt)
    return stmt


def checks_own_shape(view: Buffer, params) -> bool:
    """Whether an access of ``view`` is checked against the view's own shape: a view
    whose every extent is a constant or one of the scalar ``params`` (as
    :meth:`analyses.bounds.Checker.targets` decides it)."""
    return is_view(view) and all(isinstance(d, int) or d in params for d in view.shape)


class _Flatten(Rewriter):
    def __init__(self, roots: dict[int, Buffer], flat: dict[int, Buffer], params: set):
        self.roots, self.flat, self.params = roots, flat, params

    def _place(self, buffer: Buffer, indices) -> tuple[Buffer, tuple, tuple | None] | None:
        base = root(buffer)
        if id(base) not in self.flat:
            return None
        index = flat_offset(indices, buffer.shape)
        if buffer is not base and buffer.elem_offset is not None:
            index = ops.add(*ops.promote(buffer.elem_offset, index))
        through = (buffer, indices) if checks_own_shape(buffer, self.params) else None
        return self.flat[id(base)], (index,), through

    def visit_BufferLoad(self, node: BufferLoad):
        indices = tuple(self.visit(i) for i in node.indices)
        placed = self._place(node.buffer, indices)
        if placed is None:
            return self.generic_visit(node)
        return BufferLoad(placed[0], placed[1], view_access=placed[2])

    def visit_BufferStore(self, node: BufferStore):
        indices = tuple(self.visit(i) for i in node.indices)
        placed = self._place(node.buffer, indices)
        if placed is None:
            return self.generic_visit(node)
        return BufferStore(placed[0], self.visit(node.value), placed[1], span=node.span,
                           view_access=placed[2])

    def visit_DeclBuffer(self, node: DeclBuffer):
        if is_view(node.buffer):
            return self.visit(node.body)  # its accesses now name the flat buffer
        return self.generic_visit(node)

    def visit_Allocate(self, node: Allocate):
        body = self.visit(node.body)
        if id(node.buffer) in self.flat:
            body = _declare(self.flat[id(node.buffer)], node.buffer, body)
        if body is node.body:
            return node
        return Allocate(node.buffer, body, span=node.span)
