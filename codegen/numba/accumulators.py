"""Reduction targets held in a local variable across a loop (scalar promotion).

In ::

    for j in range(m):
        B[i] = B[i] + A[i, j]

every access to ``B`` inside the loop is to the one element ``B[i]``, whose
indices do not change in the loop, so the emitter writes ::

    B_acc = B[i]
    for j in range(m):
        B_acc = B_acc + A[i, j]
    B[i] = B_acc

The same operations run in the same order on the same values (each ``+``
still rounds to the buffer's dtype: the expression printer types every
operation as the IR does), so the result is bitwise the reference's.  What
goes is a load and a store of ``B[i]`` per iteration, which LLVM keeps
because it cannot prove that the arrays ``A`` and ``B`` do not overlap; the
add chain then runs in a register.

A buffer of the loop is promoted when:

- every access to it in the loop has the same indices, and neither a
  variable bound inside the loop (its counter included) nor a load occurs in
  them: it is one element all along;
- distinct buffers are distinct memory: a parameter array is checked at the
  call not to overlap another one the kernel writes (:mod:`codegen.calling`),
  and an allocation is fresh.  So nothing else in the loop touches the element;
- the element is surely accessed by this execution of the enclosing code,
  so the load before the loop and the store after it touch nothing the
  program would not (reading out of bounds, or racing with a parallel
  iteration that owns the element, would otherwise be possible): a statement
  before the loop in the same sequence stores to it unconditionally (the
  RFC's ``B[i] = 0.0``), or a store in the loop runs on every iteration (not
  under an ``if`` or a loop that may run no iteration).  In the second case
  a loop that may itself run no iteration gets an ``if extent > 0:`` around
  the three parts;
- nothing in the loop can raise (a checked assumption or loop range), so the
  element holds its final value whenever the kernel returns, and no
  parallel loop is inside it (``numba.prange`` would treat the local as a
  reduction variable of its own);
- the buffer is not allocated inside the loop, and no helper function is
  emitted inside the loop (a vectorized loop under ``fastmath="full"``, or a
  nest too deep for one function), since the local would not be visible there.
"""

from __future__ import annotations

from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, ForKind, Var
from polypad.ir.visitor import children, walk
from polypad.semantics.lowering import is_check


def _bound_inside(loop: ir.For) -> set[Var]:
    bound = {loop.var}
    for node in walk(loop.body):
        if isinstance(node, (ir.For, ir.LetStmt, ir.Let)):
            bound.add(node.var)
    return bound


def _unconditional_stores(stmt: ir.Stmt, positive) -> list[ir.BufferStore]:
    """The stores under ``stmt`` that run every time ``stmt`` runs.

    ``positive(loop)`` says whether ``loop`` surely runs at least once."""
    match stmt:
        case ir.BufferStore():
            return [stmt]
        case ir.SeqStmt():
            return [s for child in stmt.stmts for s in _unconditional_stores(child, positive)]
        case ir.Block() | ir.LetStmt() | ir.Allocate():
            return _unconditional_stores(stmt.body, positive)
        case ir.For() if positive(stmt):
            return _unconditional_stores(stmt.body, positive)
    return []


def touched(stmt: ir.Stmt, positive) -> list[tuple[Buffer, tuple]]:
    """The elements (buffer, indices) that ``stmt`` surely stores to, named by
    indices that mean the same after it (no variable bound inside)."""
    bound = {n.var for n in walk(stmt) if isinstance(n, (ir.For, ir.LetStmt, ir.Let))}
    return [(store.buffer, tuple(store.indices))
            for store in _unconditional_stores(stmt, positive)
            if not any(isinstance(node, Var) and node in bound
                       for index in store.indices for node in walk(index))]


def promotable(loop: ir.For, positive, excluded: set[Buffer], helpers: bool,
               before) -> list[tuple[Buffer, tuple, bool]]:
    """The buffers of ``loop`` to hold in a local, with the indices of their element
    and whether the loop needs a guard that it runs at least once.

    ``positive(loop)`` says whether a loop surely runs at least once;
    ``excluded`` are buffers already held in a local by an enclosing loop;
    ``helpers`` says whether the loop's body would emit a helper function;
    ``before(element)`` says whether a statement before the loop surely stored
    to ``element``, a (buffer, indices) pair (:func:`touched`).
    """
    if helpers:
        return []
    accesses: dict[Buffer, list[tuple]] = {}
    allocated: set[Buffer] = set()
    for node in walk(loop.body):
        # A prange would take the local for a reduction variable of its own.
        if (is_check(node) or isinstance(node, ir.Assert)
                or isinstance(node, ir.For) and node.kind is ForKind.PARALLEL):
            return []
        if isinstance(node, (ir.BufferLoad, ir.BufferStore)):
            accesses.setdefault(node.buffer, []).append(tuple(node.indices))
        elif isinstance(node, ir.Allocate):
            allocated.add(node.buffer)
    stored = {s.buffer for s in _unconditional_stores(loop.body, positive)}
    bound = _bound_inside(loop)
    found = []
    for buffer, indices in accesses.items():
        first = indices[0]
        earlier = before((buffer, first))
        if (buffer in excluded or buffer in allocated or not (earlier or buffer in stored)
                or not (dtypes.is_int(buffer.dtype) or dtypes.is_float(buffer.dtype))
                or any(other != first for other in indices[1:])
                or any(isinstance(node, Var) and node in bound
                       or isinstance(node, ir.BufferLoad)  # may change in the loop
                       for index in first for node in walk(index))):
            continue
        found.append((buffer, first, not earlier and not positive(loop)))
    return found


def holds_helper(loop: ir.For, vector_helpers: bool) -> bool:
    """Whether a vectorized loop inside ``loop`` becomes a helper function."""
    return vector_helpers and any(isinstance(node, ir.For) and node.kind is ForKind.VECTORIZED
                                  for node in walk(loop.body))


def nesting(stmt: ir.Stmt) -> tuple[int, int]:
    """How many loops, and how many compound statements (loops and ifs), deep
    ``stmt`` nests (without recursion)."""
    loops = compound = 0
    stack = [(stmt, 0, 0)]
    while stack:
        node, in_loops, in_compound = stack.pop()
        if isinstance(node, ir.For):
            in_loops, in_compound = in_loops + 1, in_compound + 1
        elif isinstance(node, ir.IfThenElse):
            in_compound += 1
        loops, compound = max(loops, in_loops), max(compound, in_compound)
        stack += [(c, in_loops, in_compound) for c in children(node) if isinstance(c, ir.Stmt)]
    return loops, compound
