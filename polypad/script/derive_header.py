"""A header for a block that has none: what TVM needs to read the block back.

A block written in polypad's lowered form (``vi = i`` where TVM writes
``vi = T.axis.spatial(16, i)``), or made by one of polypad's own schedule
primitives, has no :class:`~polypad.ir.nodes.BlockHeader`.  TVM reads a
block whose leading lets bind loop counters only when they are declared
as block axes, so this module derives the axes from the body:

- the axes are the leading lets whose value is an integer expression of
  the loop counters around the block (at least one), with no load, call or
  earlier axis in it;
- an axis is spatial (``S``) when a store's index or a later let uses it,
  or nothing does; otherwise only loads and conditions read it, and it is
  a reduce axis (``R``);
- its domain is the range of its value over the loops' ranges: exact for a
  loop counter (``T.axis.remap``), by interval arithmetic otherwise (sums,
  constant multiples, ``//`` and ``%`` by constants, symbolic where the
  loops are; anything over loops of constant bounds); a let whose range
  this cannot say ends the axes;
- an ``if`` first in the rest, on exactly the reduce axes at their starts,
  is the block's ``T.init()``.

The parser attaches the derived header to a block that declares nothing,
and :class:`~polypad.schedule.Schedule` to a block a primitive made, so
that the header is always what the printer prints and ``parse`` reads
back; ``T.where`` and the regions are never derived (TVM infers regions).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..ir import dtypes
from ..ir import nodes as n
from ..ir.block_header import init_condition
from ..ir.ranges import dtype_range, value_range
from ..ir.visitor import Rewriter, walk

Bound = tuple[n.Expr, n.Expr]  # inclusive (lo, hi)


def derive_header(body: n.Stmt, loops: Mapping[n.Var, tuple[n.Expr, n.Expr]]
                  ) -> n.BlockHeader | None:
    """The header of a block with ``body`` under loops ``{counter: (min, extent)}``.

    None where there is nothing to declare (no leading let binds loop counters).
    """
    lets: list[n.LetStmt] = []
    node = body
    while isinstance(node, n.LetStmt) and _binds_counters(node, loops, lets):
        lets.append(node)
        node = node.body
    domains = []
    for let in lets:
        domain = _domain(let.value, loops)
        if domain is None:
            break
        domains.append(domain)
    lets = lets[:len(domains)]
    if not lets:
        return None
    stored, others = _uses(lets[-1].body)
    axes = []
    for let, (lo, extent) in zip(lets, domains, strict=True):
        used = let.var in stored or let.var in others
        kind = "R" if used and let.var not in stored else "S"
        axes.append(n.BlockAxis(let.var, kind, lo, extent))
    axes = tuple(axes)
    cond = init_condition(axes)
    node = lets[-1].body
    first = node.stmts[0] if isinstance(node, n.SeqStmt) and node.stmts else node
    init = (cond is not None and isinstance(first, n.IfThenElse)
            and first.else_case is None and first.condition == cond)
    return n.BlockHeader(axes, init=init)


def attach_headers(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with a derived header on every block that has none and needs one."""
    return _Attach().visit(func)


class _Attach(Rewriter):
    def __init__(self):
        self.loops: dict = {}

    def visit_Expr(self, node: n.Expr):
        return node  # blocks stand among statements only

    def visit_For(self, node: n.For):
        self.loops[node.var] = (node.min, node.extent)
        return self.generic_visit(node)

    def visit_Block(self, node: n.Block):
        new = self.generic_visit(node)
        if new.header is None:
            header = derive_header(new.body, self.loops)
            if header is not None:
                return n.Block(new.name, new.body, header, span=new.span)
        return new


def _binds_counters(let: n.LetStmt, loops: Mapping, earlier: list[n.LetStmt]) -> bool:
    if not dtypes.is_int(let.var.dtype):
        return False
    found = False
    taken = {e.var for e in earlier}
    for e in walk(let.value):
        if isinstance(e, (n.BufferLoad, n.Call, n.Let, n.Select)) or e in taken:
            return False
        if isinstance(e, n.Var) and e in loops:
            found = True
    return found


def _uses(body: n.Stmt) -> tuple[set, set]:
    """Variables in store indices (and let values), and those used anywhere else."""
    stored: set = set()
    others: set = set()
    for s in walk(body):
        if isinstance(s, n.BufferStore):
            for index in s.indices:
                stored |= {v for v in walk(index) if isinstance(v, n.Var)}
        elif isinstance(s, n.LetStmt):
            stored |= {v for v in walk(s.value) if isinstance(v, n.Var)}
        elif isinstance(s, n.Var):
            others.add(s)
    return stored, others


def binding_domain(value: n.Expr, loops: Mapping[n.Var, tuple[n.Expr, n.Expr]]
                   ) -> tuple[n.Expr, n.Expr] | None:
    """``(min, extent)``: a domain holding every value ``value`` takes over the loops
    ``{counter: (min, extent)}``, as a derived header's axis has it (None: not derived).

    >>> binding_domain(i_0 * 4 + i_1, {i_0: (0, 4), i_1: (0, 4)})   # (0, 16)
    """
    return _domain(value, loops)


def widened_axis(axis: n.BlockAxis, value: n.Expr, loops: Mapping) -> n.BlockAxis:
    """``axis`` with a domain that also holds every value of ``value`` over ``loops``:
    the union where both are constants; the derived one where it starts where the
    axis does (a symbolic split loop's padded range); else ``axis`` as it is.

    A block that runs at more instances than before (a split padded, a
    ``T.where`` overcomputed away) needs such a domain, as padding a block
    widens its iteration domain in TVM.
    """
    derived = _domain(value, loops)
    if derived is None:
        return axis
    lo, extent = derived
    if all(isinstance(e, n.IntImm) for e in (axis.min, axis.extent, lo, extent)):
        start = min(axis.min.value, lo.value)
        stop = max(axis.min.value + axis.extent.value, lo.value + extent.value)
        if (start, stop) == (axis.min.value, axis.min.value + axis.extent.value):
            return axis
        dtype = axis.min.dtype
        return n.BlockAxis(axis.var, axis.kind, n.IntImm(start, dtype),
                           n.IntImm(stop - start, dtype))
    if lo == axis.min and extent != axis.extent:
        return n.BlockAxis(axis.var, axis.kind, axis.min, extent)
    return axis


def _domain(value: n.Expr, loops: Mapping) -> tuple[n.Expr, n.Expr] | None:
    """``(min, extent)`` of ``value`` over the loops: a counter's is its loop's range."""
    if isinstance(value, n.Var) and value in loops:
        lo, extent = loops[value]
        if lo.dtype == extent.dtype == value.dtype:
            return lo, extent
    bound = _bound(value, loops) or _interval(value, loops)
    if bound is None or bound[0].dtype != value.dtype or bound[1].dtype != value.dtype:
        return None
    lo, hi = bound
    return lo, _fold(n.Add(_fold(n.Sub(hi, lo)), n.IntImm(1, hi.dtype)))


def _bound(e: n.Expr, loops: Mapping) -> Bound | None:
    """Inclusive bounds of ``e`` over the loops, as expressions (None: not derived)."""
    match e:
        case n.IntImm():
            return e, e
        case n.Var() if e in loops:
            lo, extent = loops[e]
            return lo, _fold(n.Sub(_fold(n.Add(lo, extent)), n.IntImm(1, e.dtype)))
        case n.Var():
            return e, e
        case n.Add(a=a, b=b) | n.Sub(a=a, b=b):
            ra, rb = _bound(a, loops), _bound(b, loops)
            if ra is None or rb is None:
                return None
            if isinstance(e, n.Add):
                return _fold(n.Add(ra[0], rb[0])), _fold(n.Add(ra[1], rb[1]))
            return _fold(n.Sub(ra[0], rb[1])), _fold(n.Sub(ra[1], rb[0]))
        case n.Mul(a=a, b=n.IntImm(value=c)) | n.Mul(a=n.IntImm(value=c), b=a):
            ra = _bound(a, loops)
            if ra is None:
                return None
            k = n.IntImm(c, a.dtype)
            lo, hi = _fold(n.Mul(ra[0], k)), _fold(n.Mul(ra[1], k))
            return (lo, hi) if c >= 0 else (hi, lo)
        case n.FloorDiv(a=a, b=n.IntImm(value=c)) if c > 0:
            ra = _bound(a, loops)
            if ra is None:
                return None
            k = n.IntImm(c, a.dtype)
            return _fold(n.FloorDiv(ra[0], k)), _fold(n.FloorDiv(ra[1], k))
        case n.FloorMod(b=n.IntImm(value=c)) if c > 0:
            return n.IntImm(0, e.dtype), n.IntImm(c - 1, e.dtype)
    return None


def _interval(e: n.Expr, loops: Mapping) -> Bound | None:
    """Constant bounds by interval arithmetic, where every loop ``e`` uses has constant
    bounds (``i * i``, ``T.min(i, 3)``); None where its range is the whole dtype."""
    bounds = {}
    for v in walk(e):
        if isinstance(v, n.Var):
            lo, extent = loops.get(v, (None, None))
            if not (isinstance(lo, n.IntImm) and isinstance(extent, n.IntImm)):
                return None
            bounds[v] = (lo.value, lo.value + extent.value - 1)
    found = value_range(e, bounds)
    if found is None or found == dtype_range(e.dtype):
        return None
    return n.IntImm(found[0], e.dtype), n.IntImm(found[1], e.dtype)


_FOLD = {n.Add: lambda x, y: x + y, n.Sub: lambda x, y: x - y, n.Mul: lambda x, y: x * y,
         n.FloorDiv: lambda x, y: x // y}


def _fold(e: n.BinaryOp) -> n.Expr:
    """``e`` with constant operands folded, and ``x + 0``, ``x - 0``, ``x * 1`` simplified."""
    a, b = e.a, e.b
    if isinstance(a, n.IntImm) and isinstance(b, n.IntImm):
        return n.IntImm(_FOLD[type(e)](a.value, b.value), a.dtype)
    if isinstance(b, n.IntImm) and (b.value == 0 and isinstance(e, (n.Add, n.Sub))
                                    or b.value == 1 and isinstance(e, (n.Mul, n.FloorDiv))):
        return a
    if isinstance(a, n.IntImm) and a.value == 0 and isinstance(e, n.Add):
        return b
    # (x + c) - 1 and (x + c) + 1 (a loop's last counter): fold into the constant.
    if (isinstance(e, (n.Add, n.Sub)) and isinstance(b, n.IntImm) and isinstance(a, n.Add)
            and isinstance(a.b, n.IntImm)):
        c = a.b.value + (b.value if isinstance(e, n.Add) else -b.value)
        return a.a if c == 0 else n.Add(a.a, n.IntImm(c, b.dtype))
    if (isinstance(e, n.Add) and isinstance(b, n.IntImm) and isinstance(a, n.Sub)
            and isinstance(a.b, n.IntImm) and a.b.value == b.value):
        return a.a
    return e
