"""TVM's cross-thread reductions: a block whose reduction axis is bound to a thread axis.

``sch.bind(k, "threadIdx.x")`` on the reduction loop of a ``T.init()`` block
(and the last step of dlight's ``Reduction`` and ``GEMV`` rules) makes every
thread of a block update one element; TVM's ``LowerCrossThreadReduction``
turns it into ``tvm_thread_allreduce`` (warp shuffles and a tree in shared
memory).  polypad builds that intrinsic as TVM prints it (lowered), and the
block form as TVM lowers it where it has TVM's shape
(:mod:`polypad.transform.lower_cross_thread_reduction`), else as atomic updates
where numba.cuda has the atomic; otherwise to the ``cuda`` target the updates
race, and the refusal should say what the construct is.
:func:`cross_thread_reductions` finds such blocks, so that the target can name
the one behind a race.
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.ir import nodes as n
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk

from .gpu_threads import THREAD_AXES, children


@dataclass(frozen=True)
class CrossThreadReduction:
    """A block, its reduction axis, the thread loop that axis reads and what it writes."""

    block: str
    axis: str
    loop: n.For
    written: frozenset[n.Buffer]

    def __str__(self) -> str:
        return (f"block {self.block!r} is a cross-thread reduction: its reduction axis "
                f"{self.axis!r} is bound to loop {self.loop.var.name!r} on "
                f"{self.loop.kind.value}, which TVM lowers to tvm_thread_allreduce; the "
                f"cuda target does not lower this block to tvm_thread_allreduce (rfactor "
                f"the reduction and tree_reduce its partial sums, make the update atomic "
                f"with sch.atomic, or build TVM's lowered text, whose tvm_thread_allreduce "
                f"it builds: docs/cuda.md, Block-level reductions)")


def cross_thread_reductions(func: n.PrimFunc) -> list[CrossThreadReduction]:
    """Every block of ``func`` with a reduction axis whose value reads the counter of an
    enclosing loop bound to a thread axis of more than one thread."""
    out: list[CrossThreadReduction] = []

    def visit(stmt: n.Stmt, threads: tuple[n.For, ...]) -> None:
        if isinstance(stmt, n.For) and stmt.kind in THREAD_AXES and not (
                isinstance(stmt.extent, n.IntImm) and stmt.extent.value == 1):
            threads = threads + (stmt,)
        if isinstance(stmt, n.Block) and stmt.header is not None:
            found = _reduction_over(stmt, threads)
            if found is not None:
                out.append(found)
        for child in children(stmt):
            visit(child, threads)

    visit(func.body, ())
    return out


def _reduction_over(block: n.Block, threads: tuple[n.For, ...]) -> CrossThreadReduction | None:
    values = {}
    body = block.body
    while isinstance(body, n.LetStmt):
        values[body.var] = body.value
        body = body.body
    for axis in block.header.axes:
        if axis.kind != "R" or axis.var not in values:
            continue
        used = set(free_vars(n.Evaluate(values[axis.var])))
        loop = next((t for t in threads if t.var in used), None)
        if loop is not None:
            written = frozenset(m.buffer for m in walk(block.body)
                                if isinstance(m, n.BufferStore))
            return CrossThreadReduction(block.name, axis.var.name, loop, written)
    return None


def init_at_first_thread(func: n.PrimFunc, loop: n.For, init: n.BufferStore) -> bool:
    """Whether every instance of the store ``init`` runs at the first iteration of
    ``loop`` (decided with isl on the model's domain of ``init``)."""
    import islpy as isl

    from polypad.model import extract_gathers

    if not isinstance(loop.min, n.IntImm):
        return False
    found = [s for s in extract_gathers(func).statements if s.stmt is init]
    for s in found:
        k = next((j for j, x in enumerate(s.loops) if x is loop), None)
        if s.may or k is None:
            return False
        later = s.domain.lower_bound_val(isl.dim_type.set, k, isl.Val(loop.min.value + 1))
        if not later.is_empty():
            return False
    return bool(found)


__all__ = ["CrossThreadReduction", "cross_thread_reductions", "init_at_first_thread"]
