"""A row reduction in vector lanes, emitted with its loads aligned to 64 bytes.

``rfactor`` of a row into ``L`` lanes and ``vectorize`` give ::

    for j_0 in range(E):
        for j_1 in range(L):                      # vectorized
            y_rf[j_1] = y_rf[j_1] + A[i, j_0 * L + j_1] * x[j_0 * L + j_1]

Lane ``l`` adds the elements ``l, l + L, l + 2L, ...`` of the row, in that
order.  Where the row does not start on a 64-byte boundary (numpy puts a
large array 16 bytes past a page), every 512-bit load of ``A`` straddles two
cache lines: the zoo's matrix-vector product ran 1.4x slower so.  Starting
the vector loop ``s`` elements later, at the boundary, would hand each lane
other elements, and the sums would change in their last bits -- unless the
lanes turn with it.  So the emitter writes, with ``s`` the elements from the
row's start to the next 64-byte boundary, computed at run time ::

    if s == 0:                                    # aligned already: as before
        <the plain loop pair>
    else:
        y_rf_lanes[p] = y_rf[p]  for p < L        # constant indices (below)
        for j in range(s):                        # 1. each is lane j's first element
            y_rf_lanes[j] = y_rf_lanes[j] + A[i, j] * x[j]
        y_rf_rot[p] = y_rf_lanes[(s + p) % L]     # 2. the lanes turned by s
        for j_0 in range(E - 1):
            for j_1 in range(L):                  #    aligned loads of A
                y_rf_rot[j_1] = y_rf_rot[j_1] + A[i, j_0 * L + (s + j_1)] * ...
        y_rf_lanes[(s + p) % L] = y_rf_rot[p]
        for j in range(s + L * (E - 1), E * L):   # 3. the rest, in order
            y_rf_lanes[j % L] = y_rf_lanes[j % L] + A[i, j] * x[j]
        y_rf[p] = y_rf_lanes[p]  for p < L

Element ``j`` goes to lane ``j % L`` in every part, and each lane meets its
elements in increasing order, so every lane computes the same operations in
the same order on the same values: the result is bitwise the plain loop's,
for any ``0 <= s < L`` -- the address decides speed only.  (Each part is
compiled with the kernel's flags; tests/codegen/test_lane_rotation.py checks
that scalar and vector code contract ``a * b + c`` alike, bit for bit, at every
offset.)  The parts index the lanes by run-time values; on ``y_rf`` itself
that would keep LLVM from holding it in registers in the plain branch, hence
the copy ``y_rf_lanes``, taken and given back written out at constant indices
(as loops, LLVM turned them into vector copies and still kept ``y_rf`` in
memory).

What the pair does not cover may round otherwise under ``"contract"``: the
schedule's partition tail after it (``y[i] = y[i] + A[i, j] * x[j]`` for the
last ``m % L`` elements) is fused into scalar FMAs in one kernel and, where
LLVM's SLP vectorizer packs its multiplies into a vector, not fused in the
other -- a choice LLVM makes from the whole function, which this change, like
any other, moves.  Strict IEEE (``fastmath=None``) has no such choice.

The pattern is strict; anything else is emitted as before:

- a serial loop from 0 of constant extent whose whole body is a vectorized
  loop from 0 of ``L`` lanes (constant), neither with a range check;
- inside, blocks and lets over one store ``buf[j_1] = value``, to an
  allocated one-dimensional buffer of ``L`` elements;
- each let is either the flat index ``j_0 * L + j_1`` or mentions neither
  counter; in ``value``, ``buf`` is read only at ``[j_1]``, every other load
  has the flat index (or a let of it) last and indices that mention neither
  counter and load nothing before it, and the counters appear nowhere else;
- a load of at least two dimensions has the flat index (the row streamed:
  ``A``, a parameter: an allocation starts on 64 bytes already), and ``L``
  is a multiple of the 64-byte vector's lanes of its dtype, at least
  :data:`MIN_VECTORS` vectors.  With one vector the lanes are one chain of
  dependent adds, which waits on the adder, not on the loads: the zoo's
  layer norm (two row sums of 16 lanes, rows 4 KB) ran 1.7x slower rotated,
  even on aligned rows, and softmax no faster.

``s`` is computed per execution of the loop (per row) from the address of
the row's first element, so rows of any length work.
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.ir import nodes as ir
from polypad.ir.dtypes import bits
from polypad.ir.nodes import Buffer, ForKind, Var
from polypad.ir.operators import add, as_expr, floormod, sub
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter, children, walk

from ..source_text import MUL
from .stack import stack_elements

#: Bytes of a vector and of a cache line: the boundary the loads start on.
VECTOR_BYTES = 64
#: Fewest vectors of lanes worth rotating (see the module docstring).
MIN_VECTORS = 2
#: Off by default: on rows 16 bytes past a boundary (numpy's placement of large arrays) the
#: rotated matvec ran 1.1x to 1.3x faster, but on aligned rows, where only its branch is added,
#: 9% slower, for a reason not yet found (the hot loop's instructions are the same).  Set it
#: before building a kernel; the kernel's source, and so its cache entry, differs.
ENABLED = False


@dataclass(frozen=True)
class LaneRotation:
    """A loop pair to emit rotated: ``outer`` (``j_0``) around ``lanes`` (``j_1``)
    updating ``buffer[j_1]``; ``row`` is the streamed load, its indices before the
    last with the invariant lets put in."""

    outer: ir.For
    lanes: ir.For
    buffer: Buffer
    row: ir.BufferLoad


def lane_rotation(loop: ir.For, checked: dict, params: tuple) -> LaneRotation | None:
    """The rotation of ``loop`` when the module docstring's pattern holds, else
    ``None``; ``checked``: the loops with a range check (by ``id``), ``params``:
    the function's parameters (a lane buffer is allocated, never one of them)."""
    if not ENABLED or loop.kind is not ForKind.SERIAL or not _zero(loop.min):
        return None
    lanes = loop.body
    if (not isinstance(loop.extent, ir.IntImm) or loop.extent.value < 1
            or not isinstance(lanes, ir.For) or lanes.kind is not ForKind.VECTORIZED
            or not _zero(lanes.min) or not isinstance(lanes.extent, ir.IntImm)
            or id(loop) in checked or id(lanes) in checked):
        return None
    count, outer_var, lane_var = lanes.extent.value, loop.var, lanes.var
    node, lets = lanes.body, []
    while isinstance(node, (ir.Block, ir.LetStmt)):
        if isinstance(node, ir.LetStmt):
            lets.append((node.var, node.value))
        node = node.body
    if not isinstance(node, ir.BufferStore) or len(node.indices) != 1:
        return None
    buf = node.buffer
    if (node.indices[0] is not lane_var or buf in params or buf.shape != (count,)
            or buf.data is not None or stack_elements(buf) is None):
        return None

    def flat(e: ir.Expr) -> bool:  # j_0 * L + j_1, or a let of it
        if isinstance(e, Var):
            return e in flat_vars
        return (isinstance(e, ir.Add) and e.b is lane_var and isinstance(e.a, ir.Mul)
                and e.a.a is outer_var and isinstance(e.a.b, ir.IntImm)
                and e.a.b.value == count)

    flat_vars: set[Var] = set()
    counters = {outer_var, lane_var}
    inline: dict[Var, ir.Expr] = {}
    for var, value in lets:
        if flat(value):
            flat_vars.add(var)
        elif _invariant(value, counters | flat_vars):
            inline[var] = substitute(value, inline)
        else:
            return None
    moving = counters | flat_vars
    rows: list[ir.BufferLoad] = []

    def fits(e: ir.Expr) -> bool:
        if "x" in e.dtype or isinstance(e, ir.Let):
            return False  # vector lanes or a binder: not the plain pattern
        if isinstance(e, ir.BufferLoad) and e.buffer is buf:
            return len(e.indices) == 1 and e.indices[0] is lane_var
        if isinstance(e, ir.BufferLoad):
            if not (e.indices and flat(e.indices[-1])
                    and all(_invariant(i, moving) for i in e.indices[:-1])):
                return False
            rows.append(e)
            return True
        if isinstance(e, Var):
            return e not in moving
        return all(fits(c) for c in children(e))

    if not fits(node.value) or not rows:
        return None
    row = max(rows, key=lambda e: len(e.indices))  # the first of the most dimensions
    front = tuple(substitute(i, inline) for i in row.indices[:-1])
    rotation = LaneRotation(loop, lanes, buf, ir.BufferLoad(row.buffer, (*front, row.indices[-1])))
    vector = lanes_per_vector(rotation)
    if (len(row.indices) < 2 or row.buffer not in params or count % vector
            or count < MIN_VECTORS * vector):
        return None
    return rotation


def skew_text(rotation: LaneRotation, printer, address: str) -> str:
    """Source text of ``s``: the elements from the streamed row's first element to
    the next 64-byte boundary (0 when it is on one), from ``address``, the name of
    the array's address (``np.intp(A.ctypes.data)``)."""
    row = rotation.row
    name = printer.names(row.buffer)
    terms = [address]
    terms += [f"{printer.operand(index, MUL)} * {name}.strides[{k}]"
              for k, index in enumerate(row.indices[:-1])]
    return f"(-({' + '.join(terms)})) % {VECTOR_BYTES} // {bits(row.buffer.dtype) // 8}"


def lanes_per_vector(rotation: LaneRotation) -> int:
    """The most ``s`` can be, plus one: the streamed buffer's lanes in a vector."""
    return max(1, VECTOR_BYTES * 8 // bits(rotation.row.buffer.dtype))


def rotated(rotation: LaneRotation, skew: Var) -> ir.Stmt:
    """The three parts of the module docstring, given the variable ``skew`` (``s``,
    here ``0 < s < L``: the first and the last block are split).

    The parts index the lanes by run-time values (``j``, ``(s + p) % L``), which
    would keep LLVM from holding ``buf`` in registers in the plain loop pair (the
    kernel's branch for an aligned row): they work on a copy, ``buf_lanes``,
    taken and given back at constant indices."""
    outer, lanes, buf = rotation.outer, rotation.lanes, rotation.buffer
    count, total = lanes.extent.value, outer.extent.value * lanes.extent.value
    zero = ir.IntImm(0, outer.var.dtype)
    staged = Buffer(buf.name + "_lanes", (count,), buf.dtype)
    turned = Buffer(buf.name + "_rot", (count,), buf.dtype)
    peel = Var(lanes.var.name + "_peel", lanes.var.dtype)
    lane = Var(lanes.var.name + "_turn", lanes.var.dtype)
    tail = Var(lanes.var.name + "_tail", lanes.var.dtype)
    blocks = outer.extent.value - 1
    start = add(skew, count * blocks)
    home = floormod(add(skew, lane), count)  # where rotated lane `lane` lives

    def body(index_of: dict, target: Buffer, lane_index: ir.Expr) -> ir.Stmt:
        return _Relane(buf, target, lane_index, index_of).visit(lanes.body)

    def serial(var, lo, extent, stmt):
        return ir.For(var, lo, as_expr(extent, var.dtype), ForKind.SERIAL, stmt)

    def copy(to: Buffer, to_index, source: Buffer, source_index,
             kind: ForKind = ForKind.SERIAL) -> ir.Stmt:
        return ir.For(lane, zero, as_expr(count, lane.dtype), kind, ir.BufferStore(
            to, ir.BufferLoad(source, (source_index,)), (to_index,)))

    parts = [
        copy(staged, lane, buf, lane, ForKind.UNROLL),  # constant indices of buf
        serial(peel, zero, skew, body({outer.var: zero, lanes.var: peel}, staged, peel)),
        copy(turned, lane, staged, home),
        serial(outer.var, zero, blocks, ir.For(
            lanes.var, zero, lanes.extent, ForKind.VECTORIZED,
            body({lanes.var: add(skew, lanes.var)}, turned, lanes.var))),
        copy(staged, home, turned, lane),
        serial(tail, start, sub(total, start),
               body({outer.var: zero, lanes.var: tail}, staged, floormod(tail, count))),
        copy(buf, lane, staged, lane, ForKind.UNROLL),
    ]
    return ir.Allocate(staged, ir.Allocate(turned, ir.SeqStmt(tuple(parts))))


class _Relane(Rewriter):
    """Counters replaced by ``mapping``; every access to ``old`` (``buf[j_1]``)
    made an access to ``new[lane]``."""

    def __init__(self, old: Buffer, new: Buffer, lane: ir.Expr, mapping: dict):
        self.old, self.new, self.lane, self.mapping = old, new, lane, mapping

    def visit_Var(self, var: Var):
        return self.mapping.get(var, var)

    def visit_BufferLoad(self, node: ir.BufferLoad):
        if node.buffer is self.old:
            return ir.BufferLoad(self.new, (self.lane,))
        return self.generic_visit(node)

    def visit_BufferStore(self, node: ir.BufferStore):
        if node.buffer is self.old:
            return ir.BufferStore(self.new, self.visit(node.value), (self.lane,))
        return self.generic_visit(node)


def _zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.IntImm) and e.value == 0


def _invariant(e: ir.Expr, moving: set) -> bool:
    """``e`` mentions none of ``moving`` and loads nothing."""
    return not any((isinstance(n, Var) and n in moving) or isinstance(n, ir.BufferLoad)
                   for n in walk(e))
