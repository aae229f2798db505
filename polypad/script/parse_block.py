"""The block dialect's basics, lowered to the IR as they are read.

TVM's block dialect names a block's iteration variables and states facts
about the block::

    with T.block("C"):
        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        T.reads(A[vi, vk], B[vk, vj])
        T.writes(C[vi, vj])
        with T.init():
            C[vi, vj] = 0.0
        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

polypad's IR has no block iteration variables, so each is lowered to a
``LetStmt`` that keeps its source name (``vi = i``); the analyses substitute
let-bound values, so the model sees the loop variables.  ``T.init()``'s body
runs where every reduce variable of the block is at the start of its domain
(TVM's meaning): an ``if vk == lo:`` before the rest.  ``T.where(c)`` guards
the rest of the block with ``if c:``.  ``T.reads`` and ``T.writes`` are read
as regions (:mod:`.parse_region`) and checked against the body once the
function is read (:mod:`polypad.model.block_regions`, through
:mod:`.checks`); the analyses find what a block reads and writes from its
body.

The axis domains are checked too: TVM requires a binding to lie in its
domain for every instance of the loops around the block where its
``T.where`` holds, and once the function is read
:mod:`polypad.model.block_axes` proves it with the polyhedral model, or
refuses the binding with an instance that leaves the domain.

What the dialect states beside the lowered body (the axes with their kinds
and domains, ``T.where``, ``T.init()``, the regions, ``T.block_attr``) is
kept in the block's :class:`~polypad.ir.nodes.BlockHeader`, so that the
printer writes the block as TVM has it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..errors import DTypeError
from ..ir import operators as ops
from ..ir.block_header import init_condition as header_init_condition
from ..ir.nodes import BlockAxis, BlockHeader, BufferRegion, Expr, IfThenElse, IntImm, LetStmt, Var
from ..ir.ranges import dtype_range
from .checks import AxisDomain, Declared
from .parse_attrs import attr_value
from .parse_region import parse_regions, span_extent
from .source import Source, bind_args, call_name, string_arg

_KINDS = {"spatial": "S", "S": "S", "reduce": "R", "R": "R", "scan": "scan", "opaque": "O"}


@dataclass
class BlockScope:
    """What a block has declared so far.

    Its axes (for ``T.init()`` and the header), the lets at its top level in
    order (the scope of its ``T.reads``), its ``T.reads``/``T.writes``
    (:class:`~.checks.Declared`), its axis domains with its ``T.where``
    predicate (checked by :mod:`polypad.model.block_axes`), its attributes
    and whether it has a ``T.init()``.  ``loops`` gives the range of each loop
    around it (the domain of a ``T.axis.remap``).
    """

    name: str
    top: frozenset[int] = frozenset()  # ids of the statements directly in the block
    loops: dict = field(default_factory=dict)  # loop Var -> (min, extent)
    header_axes: list[BlockAxis] = field(default_factory=list)
    bindings: list[tuple[Var, Expr]] = field(default_factory=list)
    reads: Declared | None = None
    writes: Declared | None = None
    axes: list[AxisDomain] = field(default_factory=list)
    where: Expr | None = None  # the last T.where predicate
    guarded: int = 0  # how many of the axes come before that T.where
    where_after: int = 0  # how many axes of the header come before that T.where
    annotations: tuple[tuple[str, object], ...] | None = None
    init: bool = False
    header_regions: dict = field(default_factory=dict)  # "reads"/"writes" -> regions

    def header(self) -> BlockHeader | None:
        """What the block declared, for the printer (None: nothing)."""
        where = self.where is not None and self.where_after == len(self.header_axes)
        regions = [None if kind not in self.header_regions else tuple(
            BufferRegion(r.buffer, tuple(zip(r.starts, r.extents, strict=True)))
            for r in self.header_regions[kind]) for kind in ("reads", "writes")]
        header = BlockHeader(tuple(self.header_axes), where, self.init, *regions,
                             self.annotations or ())
        return None if header == BlockHeader() else header

    def predicate(self, cond: Expr) -> None:
        """Record ``T.where(cond)``: the axes declared so far are checked under it."""
        self.where = cond
        self.guarded = len(self.axes)
        self.where_after = len(self.header_axes)

    def declare(self, src: Source, node: ast.Expr, fn: str, exprs, env: dict) -> None:
        """Read ``T.reads(...)`` or ``T.writes(...)``, a statement of this block's body."""
        if id(node) not in self.top:
            raise src.error(node, f"{fn} must stand directly in the body of a "
                                  "with T.block(...) statement")
        kind = "reads" if fn == "T.reads" else "writes"
        if kind in self.header_regions:
            raise src.error(node, f"block {self.name!r} has a second {fn}")
        regions = tuple(parse_regions(src, node.value, fn, exprs, env))
        self.header_regions[kind] = regions  # as written, for the header
        if not regions:
            # TVM prints T.reads()/T.writes([]) on the root block and on an extern
            # op's block: regions it does not track, so nothing is declared.
            return
        setattr(self, kind, Declared(regions, tuple(self.bindings), node))


def axis_bindings(src: Source, node: ast.Assign, exprs, env: dict,
                  block: BlockScope | None) -> list[tuple[Var, Expr]]:
    """``vi = T.axis.spatial(dom, value)`` or ``vi, vj = T.axis.remap("SS", [i, j])``.

    Returns ``(variable, value)`` pairs in order; reduce variables are
    recorded on ``block`` for ``T.init()``.
    """
    fn = call_name(node.value)
    if block is None:
        raise src.error(node.value, f"{fn} must stand inside a with T.block(...) statement")
    target = node.targets[0]
    if fn == "T.axis.remap":
        return _remap(src, node.value, target, exprs, env, block)
    kind = _KINDS.get(fn.split(".")[-1])
    if kind is None:
        raise src.error(node.value, f"{fn} is not supported; the block axes polypad reads are "
                                    "T.axis.spatial, reduce, scan, opaque and remap")
    if not isinstance(target, ast.Name):
        raise src.error(target, f"{fn} binds one name; use T.axis.remap for several")
    dom, value, dtype = bind_args(src, node.value, fn, ("dom", "binding", "dtype"), 2)
    if dtype is not None:
        raise src.error(dtype, f"{fn}(..., dtype=...) is not supported")
    lo, hi = _domain(src, dom, exprs, env)
    start = IntImm(0, hi.dtype) if lo is None else lo
    bound_value = exprs.index(value, env)
    try:
        var, bound = _bind(target.id, bound_value, start, span_extent(start, hi), kind, block)
    except DTypeError:
        # T.axis.spatial(128, i) with an int8 i: the domain is cast to the binding's dtype.
        lo_t, hi_t = dtype_range(bound_value.dtype)
        raise src.error(dom, f"the domain {ast.unparse(dom)} of {fn} for {target.id} does not "
                             f"fit [{lo_t}, {hi_t}] of {bound_value.dtype}, the dtype of its "
                             f"binding {ast.unparse(value)}") from None
    # Checked once the function is read (polypad.model.block_axes, through .checks).
    if lo is None:
        text = f"[0, {ast.unparse(dom)})"
    else:
        text = f"[{ast.unparse(dom.elts[0])}, {ast.unparse(dom.elts[1])})"
    block.axes.append(AxisDomain(var, start, hi, node.value, text))
    return [(var, bound)]


def _remap(src: Source, call: ast.Call, target: ast.expr, exprs, env: dict,
           block: BlockScope) -> list[tuple[Var, Expr]]:
    kinds_node, values_node = bind_args(src, call, "T.axis.remap", ("kinds", "bindings"), 2)
    kinds = string_arg(src, kinds_node, "the axis kinds of T.axis.remap")
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    if not all(isinstance(t, ast.Name) for t in names):
        raise src.error(target, "T.axis.remap binds plain names")
    if not isinstance(values_node, (ast.List, ast.Tuple)):
        raise src.error(values_node, "the bindings of T.axis.remap must be a list")
    values = values_node.elts
    if not len(kinds) == len(values) == len(names):
        raise src.error(call, f"T.axis.remap has {len(kinds)} kinds and {len(values)} "
                              f"bindings for {len(names)} names; the three must agree")
    out = []
    for name, kind, value in zip(names, kinds, values, strict=True):
        if kind not in "SR":
            raise src.error(kinds_node, f"axis kind {kind!r} of T.axis.remap must be S or R")
        bound = exprs.index(value, env)
        # The domain is the loop's range (TVM's meaning of remap).
        if not (isinstance(bound, Var) and bound in block.loops):
            raise src.error(value, "T.axis.remap binds loop variables of the loops around "
                                   "the block; use T.axis.spatial(dom, value) for others")
        lo, extent = block.loops[bound]
        out.append(_bind(name.id, bound, lo, extent, kind, block))
    return out


def _bind(name: str, value: Expr, lo: Expr, extent: Expr, kind: str,
          block: BlockScope) -> tuple[Var, Expr]:
    var = Var(name, value.dtype)
    lo, extent = ops.cast(value.dtype, lo), ops.cast(value.dtype, extent)
    block.header_axes.append(BlockAxis(var, kind, lo, extent))
    return var, value


def _domain(src: Source, dom: ast.expr, exprs, env: dict) -> tuple[Expr | None, Expr]:
    """``(lo, hi)`` of ``dom``: lo is None for an extent (start 0), as ``T.init()`` reads it."""
    if isinstance(dom, ast.Tuple):
        if len(dom.elts) != 2:
            raise src.error(dom, "an axis domain is an extent or a (start, stop) pair")
        lo = exprs.index(dom.elts[0], env)
        return lo, exprs.index(dom.elts[1], env)
    return None, exprs.index(dom, env)


def block_attr(src: Source, call: ast.Call, block: BlockScope) -> None:
    """``T.block_attr({"key": value, ...})``: the block's annotations (attribute values)."""
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Dict):
        raise src.error(call, f"{call_name(call)} takes one dict literal")
    if block.annotations is not None:
        raise src.error(call, f"block {block.name!r} has a second {call_name(call)}")
    out = []
    for k, v in zip(call.args[0].keys, call.args[0].values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise src.error(k or call, "a block attribute name must be a string")
        out.append((k.value, attr_value(src, v)))
    block.annotations = tuple(out)


def lets(bindings: list[tuple[Var, Expr]], span):
    """``make(rest)`` that wraps ``rest`` in the bindings' LetStmts, outermost first."""
    def make(rest):
        for var, value in reversed(bindings):
            rest = LetStmt(var, value, rest, span=span)
        return rest
    return make


def init_condition(src: Source, node: ast.AST, block: BlockScope | None,
                   top: bool) -> Expr:
    """When ``T.init()`` runs: every reduce variable of the block at its start.

    ``top``: the ``with T.init()`` stands directly in the block's body (the
    header records it; elsewhere it stays the ``if`` it is lowered to).
    """
    if block is None:
        raise src.error(node, "with T.init() must stand inside a with T.block(...) statement")
    cond = header_init_condition(tuple(block.header_axes))
    if cond is None:
        raise src.error(node, f"with T.init() in block {block.name!r}, which declares no "
                              "reduce axis before it")
    if top:
        if block.init:
            raise src.error(node, f"block {block.name!r} has a second with T.init()")
        block.init = True
    return cond


def where(cond: Expr, span):
    """``make(rest)`` for ``T.where(cond)``: the rest of the block runs where it holds."""
    return lambda rest: IfThenElse(cond, rest, span=span)
