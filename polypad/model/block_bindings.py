"""Block bindings in IR: every block axis stays in its domain wherever the block runs.

The parser checks a script's ``T.axis`` bindings as it reads them
(:mod:`.block_axes`).  A schedule primitive rewrites bindings with no text
to read: ``split`` turns ``vj = j`` into ``vj = j_0 * 8 + j_1``, a
partition's tail binds ``vj = j_1_tail + n // 8 * 8``, ``compute_at`` puts a
block under new loops.  A binding that leaves its axis domain at some
instance is wrong IR: TVM, and every analysis that trusts axis domains, reads
the block wrongly, and the printed script does not parse back.

:func:`binding_problems` asks the parser's question of a ``PrimFunc``, from
its block headers (:class:`~polypad.ir.nodes.BlockHeader`): an axis's binding
is the value of its let, its domain is ``[min, min + extent)``, and its
instances are the let's (the enclosing loops, conditions, lets and
allocations) or, in a block with ``T.where``, those where the predicate
holds.  The model decides with the parser's own :func:`.block_axes.decide`,
a parameter buffer's symbolic sizes never negative, so the two agree: what
passes here, the parser reads back.

Cheap things first, since the test suite runs this after every primitive: a
binding that is a loop counter over its axis's very domain, or whose
interval over constant loop ranges lies inside a constant domain, is in its
domain without isl; every other answer is remembered by the binding's
context (the statements around the let), which a primitive leaves as it was
for the blocks it does not touch.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass

from polypad.concurrency import Recent
from polypad.errors import BindingError
from polypad.ir import operators as ops
from polypad.ir.block_header import layout
from polypad.ir.locate import ancestors, replace
from polypad.ir.nodes import (
    Block,
    BlockAxis,
    Buffer,
    BufferStore,
    Expr,
    For,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimFunc,
    Stmt,
    Var,
)
from polypad.ir.ranges import Ranges
from polypad.ir.show import show
from polypad.ir.visitor import children
from polypad.script.derive_header import widened_axis

from .block_axes import Undecided, Violation, decide
from .block_regions import stmt_contexts


@dataclass(frozen=True)
class BindingProblem:
    """A block axis whose binding ``value`` leaves its domain at some instance
    (``found`` a :class:`~.block_axes.Violation`), or that the model cannot decide
    (``found`` an :class:`~.block_axes.Undecided`).

    A violation's ``instance`` names the loop counters around the block, outer
    first (the first ``counters`` pairs), then the symbolic parameters.
    """

    block: Block
    axis: BlockAxis
    value: Expr | None
    found: Violation | Undecided
    counters: int = 0

    @property
    def domain(self) -> str:
        """``[min, min + extent)`` as the script writes it."""
        hi = show(_end(self.axis))
        return f"[{show(self.axis.min)}, {hi})"

    def __str__(self) -> str:
        var = self.axis.var.name
        if isinstance(self.found, Undecided):
            return f"block {self.block.name!r}, axis {var}: cannot decide ({self.found})"
        return (f"block {self.block.name!r} binds {var} = {show(self.value)} to "
                f"{self.found}, outside its domain {self.domain}")


@dataclass(frozen=True)
class _Domain:
    """What :func:`.block_axes.decide` reads of an axis: its variable and ``[lo, hi)``."""

    var: Var
    lo: Expr
    hi: Expr


# The one statement the model is asked about: where the binding stands.
_PROBE_BUFFER = Buffer("probe", (1,), "int32")
_PROBE = BufferStore(_PROBE_BUFFER, IntImm(0, "int32"), (IntImm(0, "int32"),))
# decide()'s answers by question: (the probe in its context, the axis, the sizes).
_ANSWERS = Recent(1024)


def binding_problems(func: PrimFunc) -> Iterator[BindingProblem]:
    """Each block axis of ``func`` whose binding leaves its domain at an instance where
    the block runs, or for which the model cannot say, in program order.

    >>> next(binding_problems(f)).found    # vi = T.axis.spatial(16, i + 1), i in range(16)
    Violation(value=16, instance=(('i', 15),))
    """
    sizes = tuple(dict.fromkeys(x for b in func.params if isinstance(b, Buffer)
                                for x in b.shape if isinstance(x, Var)))
    found = stmt_contexts(func.body, lambda s: isinstance(s, (Block, For)), free_loops=False,
                          assumed=True)
    loops = {id(s.var): s for s, _, _ in found if isinstance(s, For)}
    reached = set()
    for block, wrap, counters in found:
        if not isinstance(block, Block) or block.header is None or not block.header.axes:
            continue
        reached.add(id(block))
        yield from _block_problems(block, wrap, [loops[id(v)] for v in counters], sizes)
    for block in _statements(func.body):
        if (isinstance(block, Block) and block.header is not None and block.header.axes
                and id(block) not in reached):
            # stmt_contexts follows every statement that holds others; kept so that a
            # new kind of one is an honest Unknown, never a block left unchecked.
            reason = Undecided("the block stands under a statement the model does not "
                               "follow")
            yield BindingProblem(block, block.header.axes[0], None, reason)


def _statements(body: Stmt) -> Iterator[Stmt]:
    """Every statement under ``body``, without walking into expressions (a long sum
    is thousands of nodes, and holds no block)."""
    stack = [body]
    while stack:
        s = stack.pop()
        yield s
        stack.extend(c for c in reversed(list(children(s))) if isinstance(c, Stmt))


def _block_problems(block: Block, wrap, loops: list[For],
                    sizes: tuple[Var, ...]) -> Iterator[BindingProblem]:
    header = block.header
    parts = layout(block.body, header)
    ranges = _constant_ranges(loops)
    for k, (axis, let) in enumerate(zip(header.axes, parts.lets, strict=True)):
        if _plainly_inside(let.value, axis, loops, ranges):
            continue
        if parts.where is not None:
            # Checked where the predicate holds, under every axis's let (the predicate
            # may read any of them): the instances where the block runs.
            inner: Stmt = IfThenElse(parts.where.condition, _PROBE)
            lets = parts.lets
        else:
            inner, lets = _PROBE, parts.lets[:k + 1]
        for outer in reversed(lets):
            inner = LetStmt(outer.var, outer.value, inner)
        stmt = wrap(inner)
        domain = _Domain(axis.var, axis.min, _end(axis))
        key = (stmt, domain, sizes)
        answer = _ANSWERS.get((), key)
        if answer is None:
            answer = _ANSWERS.put((), (decide(domain, let.value, stmt, _PROBE, sizes),), key)
        if answer[0] is not None:
            yield BindingProblem(block, axis, let.value, answer[0], len(loops))


def _end(axis: BlockAxis) -> Expr:
    """``min + extent``, folded where both are constants."""
    if isinstance(axis.min, IntImm) and axis.min.value == 0:
        return axis.extent
    if isinstance(axis.min, IntImm) and isinstance(axis.extent, IntImm):
        return IntImm(axis.min.value + axis.extent.value, axis.min.dtype)
    return ops.add(axis.min, axis.extent)


def _constant_ranges(loops: list[For]) -> Ranges:
    """Interval arithmetic with each loop counter of constant bounds in its range."""
    bounds = {}
    for loop in loops:
        if (isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)
                and loop.extent.value > 0):
            bounds[loop.var] = (loop.min.value, loop.min.value + loop.extent.value - 1)
    return Ranges(bounds)


def _plainly_inside(value: Expr, axis: BlockAxis, loops: list[For], ranges: Ranges) -> bool:
    """Whether ``value`` is in ``axis``'s domain at every instance, without asking isl:
    a loop counter over exactly the domain, or an interval inside a constant domain."""
    if isinstance(value, Var):
        loop = next((x for x in loops if x.var is value), None)
        if loop is not None and loop.min == axis.min and loop.extent == axis.extent:
            return True
    if not (isinstance(axis.min, IntImm) and isinstance(axis.extent, IntImm)):
        return False
    interval = ranges.of(value)
    return (interval is not None and axis.min.value <= interval[0]
            and interval[1] < axis.min.value + axis.extent.value)


def checked_bindings(out: PrimFunc, before: PrimFunc, where: str) -> PrimFunc:
    """``out``, what primitive ``where`` made of ``before``, with its block bindings
    checked when the environment variable ``POLYPAD_VERIFY_PASSES`` is set (as
    :func:`polypad.ir.verify.checked_result` verifies it): a
    :class:`~polypad.errors.BindingError` names the primitive, the block, the axis,
    the value and the instance.  A binding ``before`` had wrong already is not
    the primitive's doing and is let be; one the model cannot decide too."""
    if out is before or not os.environ.get("POLYPAD_VERIFY_PASSES"):
        return out
    for problem in binding_problems(out):
        if not isinstance(problem.found, Violation):
            continue
        if any(p.axis.var is problem.axis.var and isinstance(p.found, Violation)
               for p in binding_problems(before)):
            continue
        raise BindingError(f"{where} built a binding outside its axis domain from "
                           f"{before.name}: {problem}", where, problem.block.name,
                           problem.axis.var.name, problem.found)
    return out


def widened_to_bindings(out: PrimFunc, before: PrimFunc) -> PrimFunc:
    """``out`` with each block axis that it binds outside its domain, where ``before``
    did not, given a domain holding every value of its binding over the loops around
    the block (:func:`~polypad.script.derive_header.widened_axis`): what a rewrite that
    runs a block at more instances (a ``T.where`` or a guard overcomputed away) owes
    the block's header.  An axis whose binding's range is not derived stays as it is,
    for :func:`checked_bindings` to refuse."""
    old = None
    tried: set[int] = set()
    while True:
        problem = next((p for p in binding_problems(out) if isinstance(p.found, Violation)
                        and id(p.axis.var) not in tried), None)
        if problem is None:
            return out
        tried.add(id(problem.axis.var))
        if old is None:
            old = {id(p.axis.var) for p in binding_problems(before)
                   if isinstance(p.found, Violation)}
        if id(problem.axis.var) in old:
            continue
        block = problem.block
        loops = {x.var: (x.min, x.extent) for x in ancestors(out, block) if isinstance(x, For)}
        lets = layout(block.body, block.header).lets
        axes = tuple(widened_axis(axis, let.value, loops) if axis is problem.axis else axis
                     for axis, let in zip(block.header.axes, lets, strict=True))
        header = dataclasses.replace(block.header, axes=axes)
        out = replace(out, block, dataclasses.replace(block, header=header))
