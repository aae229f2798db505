"""The grammar of a block's header: how TVM's block dialect declares a block.

A :class:`~polypad.ir.nodes.Block`'s lowered body carries its meaning; its
:class:`BlockHeader` records what TVM's script states beside it (the axes
with kinds and domains, ``T.where``, ``T.init()``, the regions, the
attributes), so that the printer writes the block as TVM has it.
:mod:`.block_header` says where each part stands in the body.

Named, with every other node, by :mod:`.nodes`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nodes_expr import Buffer, Expr, Var


@dataclass(frozen=True, slots=True)
class BlockAxis:
    """A block iteration variable as TVM declares it (``T.axis.spatial(dom, value)``).

    ``var`` is bound, to its value, by one of the block's leading ``LetStmt``s;
    ``kind`` is ``"S"`` (spatial), ``"R"`` (reduce), ``"scan"`` or ``"O"``
    (opaque); the domain is ``[min, min + extent)``.
    """

    var: Var
    kind: str
    min: Expr
    extent: Expr


@dataclass(frozen=True, slots=True)
class BufferRegion:
    """``A[vi, 0:16]`` in ``T.reads``/``T.writes``: per axis a ``(min, extent)`` pair."""

    buffer: Buffer
    region: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, slots=True)
class BlockHeader:
    """What TVM's block states beside its body; the lowered body keeps the meaning.

    ``axes`` are bound by the block's leading lets, in order; ``where`` says
    the statement under them is the ``if`` of ``T.where``; ``init`` that the
    first statement after that (and the block's allocations) is the ``if``
    of ``T.init()``; ``reads``/``writes`` are the declared regions (None:
    not declared, TVM infers them).  :mod:`polypad.ir.block_header` keeps
    only what still fits the body (see ``Block``).
    """

    axes: tuple[BlockAxis, ...] = ()
    where: bool = False
    init: bool = False
    reads: tuple[BufferRegion, ...] | None = None
    writes: tuple[BufferRegion, ...] | None = None
    annotations: tuple[tuple[str, object], ...] = ()
