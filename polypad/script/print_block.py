"""Printing blocks in TVM's block dialect, from the block's header.

The lowered body holds a block's meaning; its
:class:`~polypad.ir.nodes.BlockHeader` says how TVM writes it.  Where the
header has axes, the leading lets print as ``T.axis`` declarations (a run
of lets bound to loop counters over their loops' ranges as one
``T.axis.remap``), the ``if`` under them as ``T.where``, the block's own
allocations as its buffers and the init ``if`` as ``with T.init():``,
with the declared regions and attributes between.  What a header does not
say prints as the lowered statement it is, so ``parse`` reads every form
back to the same IR.

Two spellings: TVM 0.27's ``tirx`` (``T.sblock``, ``T.sblock_attr``,
``T.sblock_alloc_buffer``; the function is ``@T.prim_func(s_tir=True)``)
and the older ``tir`` (``T.block``, ``T.block_attr``, ``T.alloc_buffer``).
"""

from __future__ import annotations

import json

from ..ir import operators as ops
from ..ir.block_header import Layout, layout
from ..ir.nodes import (
    Allocate,
    Block,
    BlockAxis,
    BlockHeader,
    BufferRegion,
    IntImm,
    SeqStmt,
    Stmt,
    Var,
)
from .derive_header import derive_header
from .print_lowered import attr_text

SPELLINGS = ("tirx", "tir")

# The names of the block statements in each spelling.
_NAMES = {
    "tirx": {"block": "T.sblock", "attr": "T.sblock_attr", "alloc": "T.sblock_alloc_buffer"},
    "tir": {"block": "T.block", "attr": "T.block_attr", "alloc": "T.alloc_buffer"},
}

_KIND_NAMES = {"S": "spatial", "R": "reduce", "scan": "scan", "O": "opaque"}


class BlockPrinting:
    """The block statements of the printer (mixed into it: it needs ``emit``,
    ``expr``, ``stmt``, ``namer``, ``loops`` and ``spelling``)."""

    def block_name(self, what: str) -> str:
        return _NAMES[self.spelling][what]

    def _Block(self, s: Block, indent: int) -> None:
        self.emit(indent, f"with {self.block_name('block')}({json.dumps(s.name)}):")
        # A block made without a header gets the one TVM needs to read it; one with
        # nothing to declare still opens with its own buffers.
        header = s.header or derive_header(s.body, self.loops) or BlockHeader()
        parts = layout(s.body, header)
        inner = indent + 1
        self._axes(header.axes, parts, inner)
        if parts.where is not None:
            self.emit(inner, f"T.where({self.expr(parts.where.condition)})")
        for word, regions in (("T.reads", header.reads), ("T.writes", header.writes)):
            if regions is not None:
                self.emit(inner, f"{word}({', '.join(self._region(r) for r in regions)})")
        if header.annotations:
            items = ", ".join(f"{json.dumps(k)}: {attr_text(v)}" for k, v in header.annotations)
            self.emit(inner, f"{self.block_name('attr')}({{{items}}})")
        for a in parts.allocates:
            args = self._buffer_args(a.buffer)
            self.emit(inner, f"{self.namer.bind(a.buffer)} = {self.block_name('alloc')}({args})")
        self._block_body(parts, inner)
        for a in parts.allocates:
            self.namer.unbind(a.buffer)
        for let in parts.lets:
            self.namer.unbind(let.var)

    def _block_body(self, parts: Layout, indent: int) -> None:
        if parts.init is None:
            self.stmt(parts.rest, indent)
            return
        self.emit(indent, "with T.init():")
        self.stmt(parts.init.then_case, indent + 1)
        if parts.after:
            self.stmt(parts.after[0] if len(parts.after) == 1 else SeqStmt(parts.after),
                      indent)

    def _axes(self, axes: tuple[BlockAxis, ...], parts: Layout, indent: int) -> None:
        """The axes, a run of loop counters over their whole loops as one remap."""
        run: list[tuple[BlockAxis, Var]] = []

        def flush():
            if run:
                values = ", ".join(self.namer.name(v) for _, v in run)
                names = ", ".join(self.namer.bind(a.var) for a, _ in run)
                kinds = "".join(a.kind for a, _ in run)
                self.emit(indent, f'{names} = T.axis.remap("{kinds}", [{values}])')
                run.clear()

        for axis, let in zip(axes, parts.lets, strict=True):
            if self._remaps(axis, let.value):
                run.append((axis, let.value))
                continue
            flush()
            value = self.expr(let.value)
            dom = self._domain(axis)
            name = self.namer.bind(axis.var)
            self.emit(indent, f"{name} = T.axis.{_KIND_NAMES[axis.kind]}({dom}, {value})")
        flush()

    def _remaps(self, axis: BlockAxis, value) -> bool:
        loop = self.loops.get(value) if isinstance(value, Var) else None
        return (loop is not None and axis.kind in ("S", "R") and value.dtype == axis.var.dtype
                and loop == (axis.min, axis.extent))

    def _domain(self, axis: BlockAxis) -> str:
        lo, extent = axis.min, axis.extent
        if isinstance(lo, IntImm) and lo.value == 0:
            return self.expr(extent)
        return f"({self._range_text(lo, extent, ', ')})"

    def _range_text(self, lo, extent, sep: str) -> str:
        """``lo<sep>hi`` that the parser reads back (span_extent) to ``lo`` and ``extent``."""
        if isinstance(lo, IntImm) and isinstance(extent, IntImm) and lo.dtype == extent.dtype:
            hi = self.expr(IntImm(lo.value + extent.value, lo.dtype))
        else:
            hi = self.expr(ops.add(lo, extent))
        return f"{self.expr(lo)}{sep}{hi}"

    def _region(self, r: BufferRegion) -> str:
        dims = []
        for lo, extent in r.region:
            if isinstance(extent, IntImm) and extent.value == 1:
                dims.append(self.expr(lo))
            else:
                dims.append(self._range_text(lo, extent, ":"))
        inner = ", ".join(dims) if dims else "()"
        return f"{self.namer.name(r.buffer)}[{inner}]"


def has_blocks(stmt: Stmt) -> bool:
    """Whether ``stmt`` holds a block (its function is TVM's ``s_tir`` kind)."""
    from ..ir.visitor import walk
    return any(isinstance(s, Block) for s in walk(stmt))


def root_allocations(body: Stmt) -> tuple[Allocate, ...]:
    """The allocations that open a function body: its root block's buffers in TVM."""
    out = []
    while isinstance(body, Allocate):
        out.append(body)
        body = body.body
    return tuple(out)

