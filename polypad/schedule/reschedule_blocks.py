"""Blocks that ``reorder_by_map`` moves whole: TVM's block programs.

A block program puts each computation in a block under its loops::

    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

The block is TVM's unit of work: one instance per value of the loops around
it, running its ``T.init()`` (where the reduce axes start), its ``T.where``
predicate and its update together, the body written over its axes.  A
reorder keeps it so: the block is one *unit* of the rebuilt nest (``C``
above, named after the block), whose instances are the iterations of the
loops and ``if`` s around it (:func:`block_units`), and each regenerated
instance is the block itself with its loop counters replaced by the new
loops (:meth:`.reschedule_ast._Emitter.user`).  Its axes are bound to those
expressions, and its ``T.init()``, ``T.where``, ``T.reads``/``T.writes``
(over the axes) stay as they are, which keeps them true: the block runs at
the same instances with the same axis values, only in another order.

Legality is still decided statement by statement: each statement of the
block gets the block's band and kept loops and its own place inside the
block (:func:`member_placements`), so the dependence check
(:func:`.legality.check_order`) sees the init, the update and the predicate
exactly where they run.

A block named as the scope itself keeps its axes at its head, bound to the
enclosing counters that a reorder holds fixed (:func:`.reschedule_scope.scope_of`);
only what is under them is rebuilt.

Not supported, each refused by name: a block with loops or blocks inside it
(the rebuild would cut it apart: reorder inside it with ``block=`` its
name), a statement the model does not track inside such a block, and a band
given for one statement of a block of several (name the block).
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors
from polypad.ir.naming import Names
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, StatementModel
from polypad.model.domains import statement_domain
from polypad.model.nest import Guard, Leaf, is_leaf

from .reschedule_plan import Placement
from .reschedule_scope import Scope

#: What a block moved whole may hold besides the statements the model tracks.
_CARRIED = (n.LetStmt, n.IfThenElse, n.SeqStmt, n.Allocate)


def is_block_program(block: n.Block) -> bool:
    """Whether ``block`` states TVM's block structure: axes, ``T.where`` or ``T.init()``."""
    h = block.header
    return h is not None and bool(h.axes or h.where or h.init)


def whole_blocks(scope: Scope) -> list[n.Block]:
    """The blocks inside ``scope`` that a reorder moves whole: those without loops or
    blocks inside, with TVM's structure (:func:`is_block_program`) or several
    statements.  A block of one statement without it is rebuilt around its statement
    instead (``cache_read``'s copies: :func:`.reschedule._check_regenerable`)."""
    out = []
    for node in walk(scope.body):
        if not isinstance(node, n.Block) or node is scope.block:
            continue
        inside = list(walk(node.body))
        if any(isinstance(x, (n.For, n.Block)) for x in inside):
            continue
        leaves = sum(1 for x in inside if isinstance(x, n.Stmt) and is_leaf(x))
        if leaves and (is_block_program(node) or leaves > 1):
            out.append(node)
    return out


def check_whole(block: n.Block, primitive: str) -> None:
    """Refuse a block moved whole that holds a statement the model does not track (its
    order against the rest would go unchecked)."""
    for x in walk(block.body):
        if isinstance(x, n.Stmt) and not (isinstance(x, _CARRIED) or is_leaf(x)):
            raise PolypadError(f"{primitive}: block {block.name!r} holds a "
                               f"{type(x).__name__}, which a reorder cannot move with it")


def block_units(scope: Scope) -> tuple[Scope, dict[str, tuple[StatementModel, ...]]]:
    """``scope`` with the statements of each block moved whole (:func:`whole_blocks`)
    replaced by one *unit*, and the statements of each unit by its name.

    A unit is a :class:`StatementModel` whose statement is the block: it takes the
    model name and space of the block's first statement, the block's name as its
    label, and as domain the iterations of the loops and guards around the block
    (where it runs at all); its lets are those around the block (its axes stay in
    it) and it has no accesses of its own (its body keeps its indices)."""
    named = {id(s.stmt): s for s in scope.statements}
    statements = list(scope.statements)
    labels = dict(scope.labels)
    members: dict[str, tuple[StatementModel, ...]] = {}
    moved: dict[str, str] = {}
    for block in whole_blocks(scope):
        inner = tuple(named[id(x)] for x in walk(block.body) if id(x) in named)
        inner = tuple(sorted(inner, key=statements.index))
        unit = _unit(scope, block, inner[0])
        label = _label(scope, block, inner)
        for s in inner:
            labels.pop(scope.label(s))
            if len(inner) > 1:
                moved[scope.label(s)] = label
        labels[label] = unit
        at = statements.index(inner[0])
        statements = [x for x in statements if x not in inner]
        statements.insert(at, unit)
        members[unit.name] = inner
    if not members:
        return scope, {}
    return dataclasses.replace(scope, statements=statements, labels=labels,
                               moved_whole=moved), members


def _label(scope: Scope, block: n.Block, inner: tuple[StatementModel, ...]) -> str:
    """A single statement's label already names its block; several take the block's
    name (as :func:`analyses.instances.labels` would spell it), unless that is taken."""
    if len(inner) == 1:
        return scope.label(inner[0])
    base = Names().sanitize(block.name)
    return base if base not in scope.labels else inner[0].name


def _unit(scope: Scope, block: n.Block, first: StatementModel) -> StatementModel:
    path = ancestors(scope.func, block)
    guards, lets = [], {}
    for here, below in zip(path, path[1:], strict=False):
        if isinstance(here, n.IfThenElse):
            guards.append(Guard(here.condition, below is here.then_case))
        elif isinstance(here, n.LetStmt):
            lets[here.var] = here.value
    space = AffineSpace(first.loop_vars, tuple_name=first.name, lets=lets,
                        names=scope.model.names)
    leaf = Leaf(None, first.loops, tuple(guards), lets, block.name, first.position)
    domain, dropped = statement_domain(leaf, space)
    return dataclasses.replace(first, stmt=block, domain=domain, may=bool(dropped),
                               dropped_guards=dropped, guards=tuple(g.holds for g in guards),
                               accesses=(), lets=lets, space=space)


def member_placements(placements: dict[str, Placement],
                      members: dict[str, tuple[StatementModel, ...]]) -> dict[str, Placement]:
    """The placements by statement: each statement of a unit at its unit's band and
    kept loops, keeping its own place inside the block (for the dependence check)."""
    out = {}
    for name, p in placements.items():
        for s in members.get(name, (p.statement,)):
            band = tuple(_renamed(pa, s.name) for pa in p.band)
            out[s.name] = Placement(s, band, p.side, p.kept)
    return out


def _renamed(pa: isl.PwAff, name: str) -> isl.PwAff:
    """``pa`` over the statement ``name`` (same loop counters, another tuple)."""
    as_map = isl.Map.from_pw_aff(pa).set_tuple_name(isl.dim_type.in_, name)
    return isl.PwMultiAff.from_map(as_map).get_at(0)


__all__ = ["block_units", "check_whole", "is_block_program",
           "member_placements", "whole_blocks"]
