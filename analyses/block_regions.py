"""What each block reads and writes, inferred from its body.

A block's regions are per *instance*: for each value of the loop counters
around it, the elements its body touches.  :func:`block_regions` cuts each
block out of its function with its context
(:func:`polypad.model.block_regions.block_contexts`: the loops around it
become conditions on free counters, its ``if`` conditions and lets stay)
and asks :func:`analyses.touched.domain_touched` per buffer (exact, or
marked over-approximated with the guards it dropped); a block whose indices
are not quasi-affine gets :class:`Undecided`, never a guess.  Whether the
regions a script declares cover these is checked as it is parsed
(:mod:`polypad.model.block_regions`).

``polypad.script.block_regions``, where this used to live, names the same
objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.arguments import expect
from polypad.errors import NotAffineError
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.model.block_regions import block_contexts, outside_buffers

from .touched import domain_touched

__all__ = ["BlockRegions", "Undecided", "block_regions"]


@dataclass(frozen=True)
class Undecided:
    """The region of ``buffer`` a block touches could not be decided; ``reason`` says why."""

    buffer: Buffer
    kind: str
    reason: str

    def __str__(self) -> str:
        return f"{self.buffer.name}: undecided ({self.reason})"


@dataclass(frozen=True, eq=False)
class BlockRegions:
    """The elements block ``block`` reads and writes, per buffer name.

    Values are :class:`analyses.Touched` (over the buffer's indices, with the
    loop counters around the block as parameters) or :class:`Undecided`.
    Buffers the block allocates itself are left out, as in TVM.
    """

    block: str
    reads: dict = field(default_factory=dict)
    writes: dict = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"block {self.block!r}:"]
        for kind, table in (("reads", self.reads), ("writes", self.writes)):
            lines += [f"  {kind} {t}" for t in table.values()]
        return "\n".join(lines)


def block_regions(func: PrimFunc) -> tuple[BlockRegions, ...]:
    """The regions every block of ``func`` reads and writes, in program order.

    >>> [r] = block_regions(matmul)
    >>> print(r.reads["A"])
    A[i, k] when k >= 0 and k < 4 and j >= 0 and j < 6 and i >= 0 and i < 8
    """
    expect(func, PrimFunc, "func", "block_regions")
    out = []
    for block, wrap, _ in block_contexts(func.body):
        stmt = wrap(block)
        tables: dict[str, dict] = {"read": {}, "write": {}}
        for buffer in outside_buffers(block):
            for kind, table in tables.items():
                try:
                    touched = domain_touched(stmt, buffer, kind)
                except NotAffineError as err:
                    table[buffer.name] = Undecided(buffer, kind, str(err))
                    continue
                if not touched.is_empty():
                    table[buffer.name] = touched
        out.append(BlockRegions(block.name, tables["read"], tables["write"]))
    return tuple(out)
