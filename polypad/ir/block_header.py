"""A block's header against its body: what still fits, and where each part stands.

A :class:`~polypad.ir.nodes.BlockHeader` says how TVM's block dialect
spells a block whose meaning the lowered body holds::

    Block("C", LetStmt(vi, i, LetStmt(vk, k,            # axes: vi (S), vk (R)
        IfThenElse(where,                                # where=True
            Allocate(X,                                  # the block's buffers
                SeqStmt((IfThenElse(vk == 0, init),      # init=True
                         update)))))))

Each part describes a shape of the body, so a pass that rewrites the body
may leave a part that no longer holds.  :func:`fit` keeps what still does,
and ``Block`` calls it whenever it is made (this module hands it to the
grammar when imported: :func:`~polypad.ir.nodes_stmt.fit_headers_with`):
the axes must be the variables of the leading lets, in order (a split
rewrites their values, which is fine); ``where`` needs the ``if`` (without
``else``) under them; ``init`` needs the ``if`` on exactly the reduce axes
at their starts first in the rest; a declared region must name a buffer
the body still loads (for ``reads``) or stores (``writes``), and where it
says one element on an axis (extent 1), every such access of that buffer
must use that very index (a layout or cache rewrite changes the buffer or
the index, and the region goes: TVM infers it again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import operators as ops
from .nodes import (
    Allocate,
    And,
    Block,
    BufferLoad,
    BufferStore,
    Expr,
    IfThenElse,
    IntImm,
    LetStmt,
    SeqStmt,
    Stmt,
)
from .nodes_block import BlockAxis, BlockHeader, BufferRegion
from .nodes_stmt import fit_headers_with
from .visitor import children


@dataclass(frozen=True)
class Layout:
    """Where a header's parts stand in a block body.

    ``lets`` are the leading ``LetStmt``s (all of them, axes first);
    ``where`` the ``if`` of ``T.where`` (or None); ``allocates`` the
    block's own allocations under it; ``rest`` the statement under those;
    ``init`` the ``if`` of ``T.init()`` at the head of ``rest`` (or None)
    and ``after`` the statements after it.
    """

    lets: tuple[LetStmt, ...]
    where: IfThenElse | None
    allocates: tuple[Allocate, ...]
    rest: Stmt
    init: IfThenElse | None
    after: tuple[Stmt, ...]


def init_condition(axes: tuple[BlockAxis, ...]) -> Expr | None:
    """When ``T.init()`` runs: every reduce axis at the start of its domain (None: no
    reduce axis).  The parser builds the same expression."""
    cond = None
    for axis in axes:
        if axis.kind == "R":
            c = ops.eq(axis.var, axis.min)
            cond = c if cond is None else And(cond, c)
    return cond


def layout(body: Stmt, header: BlockHeader) -> Layout:
    """Split ``body`` where ``header`` places its parts (which must fit: see :func:`fit`)."""
    lets = []
    node = body
    while isinstance(node, LetStmt):
        lets.append(node)
        node = node.body
    # The header's lets come first; a let after them is part of the body proper.
    inner = lets[len(header.axes) - 1].body if header.axes else body
    where = None
    if header.where:
        where, inner = inner, inner.then_case
    allocates = []
    while isinstance(inner, Allocate):
        allocates.append(inner)
        inner = inner.body
    init, after = None, ()
    if header.init:
        if isinstance(inner, SeqStmt):
            init, after = inner.stmts[0], inner.stmts[1:]
        else:
            init = inner
    return Layout(tuple(lets[:len(header.axes)]), where, tuple(allocates), inner, init, after)


def fit(body: Stmt, header: BlockHeader) -> BlockHeader | None:
    """The part of ``header`` that still describes ``body`` (None when nothing does).

    >>> fit(LetStmt(vi, i, store), BlockHeader(axes=(BlockAxis(vj, "S", 0, 4),))) is None
    True
    """
    node, count = body, 0
    while count < len(header.axes) and isinstance(node, LetStmt):
        if node.var is not header.axes[count].var:
            break
        node, count = node.body, count + 1
    if count < len(header.axes):
        # The lets are not the axes any more: every part naming them goes.
        out = BlockHeader(annotations=header.annotations)
        return out if out.annotations else None
    where = header.where and isinstance(node, IfThenElse) and node.else_case is None
    if where:
        node = node.then_case
    while isinstance(node, Allocate):
        node = node.body
    init = header.init and _is_init(node, header.axes)
    reads, writes = header.reads, header.writes
    if reads is not None or writes is not None:
        loads, stores = _accesses(body)
        reads = _regions_fit(reads, loads)
        writes = _regions_fit(writes, stores)
    if (where == header.where and init == header.init and reads is header.reads
            and writes is header.writes):
        return header
    out = replace(header, where=where, init=init, reads=reads, writes=writes)
    return None if out == _EMPTY else out


_EMPTY = BlockHeader()


def _is_init(node: Stmt, axes) -> bool:
    first = node.stmts[0] if isinstance(node, SeqStmt) and node.stmts else node
    cond = init_condition(axes)
    return (isinstance(first, IfThenElse) and first.else_case is None and cond is not None
            and first.condition == cond)


def _accesses(body: Stmt) -> tuple[dict, dict]:
    """Buffer -> the index tuples of its loads, and of its stores, under ``body``.

    An access inside a nested block is listed without its indices (None): they
    are over that block's own axes, which the region does not name.
    """
    loads: dict = {}
    stores: dict = {}
    stack = [(body, False)]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, BufferLoad):
            loads.setdefault(node.buffer, []).append(None if nested else node.indices)
        elif isinstance(node, BufferStore):
            stores.setdefault(node.buffer, []).append(None if nested else node.indices)
        inner = nested or (isinstance(node, Block) and node is not body)
        stack.extend((child, inner) for child in children(node))
    return loads, stores


def _regions_fit(regions: tuple[BufferRegion, ...] | None, accesses: dict):
    if regions is None:
        return None
    for r in regions:
        found = accesses.get(r.buffer)
        if found is None:
            return None
        for k, (lo, extent) in enumerate(r.region):
            if isinstance(extent, IntImm) and extent.value == 1 and any(
                    ix is not None and (len(ix) != len(r.region) or ix[k] != lo)
                    for ix in found):
                return None
    return regions


fit_headers_with(fit)
