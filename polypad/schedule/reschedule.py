"""The loop rewrites behind ``Schedule.distribute`` and ``Schedule.reorder_by_map``.

Both are pure functions ``PrimFunc -> PrimFunc`` that check legality first:
the new order of every statement instance (:mod:`.reschedule_plan`) is held
against the function's dependences (:func:`analyses.dependences`), and a
broken one is refused with an :class:`IllegalTransformError` whose
``evidence`` names the two instances and the element.

``distribute`` (loop fission) moves some statements of a block, with copies
of the loops and ``if`` s around them, into a new block just before (or
after) it; ``reorder_by_map`` regenerates loop nests of a block so that its
statements run in the order of a band of new outer loops
(:mod:`.reschedule_ast`).  A block inside loops keeps them: both rewrite
only the block's body, and the new order keeps every instance in its
iteration of the enclosing loops (:mod:`.reschedule_scope`).
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, find_block, replace
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model.isl_helpers import empty_union_map, time_map
from polypad.model.nest import is_leaf

from .counter_ranges import check_counters_fit, counter_dtype, widened
from .exact_bounds import assumed
from .legality import check_order
from .reschedule_ast import regenerate
from .reschedule_blocks import (
    block_units,
    check_whole,
    is_block_program,
    member_placements,
    whole_blocks,
)
from .reschedule_plan import (
    entries,
    function_schedule,
    item_label,
    parse_band,
    place,
    set_sides,
)
from .reschedule_scope import Scope, map_items, scope_of

POSITIONS = ("before", "after")


# ---------------------------------------------------------------- reorder_by_map


def reorder_by_map(func: n.PrimFunc, block: str | None, band: str,
                   names: tuple[str, ...] | None = None, *,
                   reassociate: bool = False) -> n.PrimFunc:
    """``func`` with the loop nests of ``block`` regenerated under ``band``.

    ``band`` is an ISL map from statements, named by their labels
    (:func:`analyses.instances.labels`) with their loop counters, to the new
    outer loops: ``{ compute[i] -> [floor(i/4), i mod 4] }``.  Each item of
    the block holding a mapped statement is rebuilt; every statement of such
    an item must be mapped.  ``names`` names the new loops (default ``b0, b1,
    ...``).  With ``reassociate``, the instances of a reduction
    ``X[e] = X[e] op v`` may combine their terms in another order
    (:mod:`analyses.reductions`); everything else keeps its order.
    """
    primitive = "reorder_by_map"
    scope = scope_of(func, block)
    # A block of TVM's kind moves whole, as one unit of the new nest (reschedule_blocks).
    scope, in_units = block_units(scope)
    bands = parse_band(scope, band, primitive)
    r = max(len(b) for b in bands.values())
    names = _check_names(tuple(names) if names else tuple(f"b{k}" for k in range(r)), r)
    placements, todo, wrappers = {}, {}, {}
    for index in range(len(scope.items)):
        members = scope.item_statements(index)
        mapped = [s for s in members if s.name in bands]
        if not mapped:
            continue
        missing = [scope.label(s) for s in members if s.name not in bands]
        if missing:
            raise PolypadError(
                f"{primitive}: {', '.join(missing)} share {item_label(scope, index)} with "
                "mapped statements but have no band; distribute them out first")
        for s in mapped:
            if not s.domain.is_bounded():
                dropped = ", ".join(show(g) for g in s.dropped_guards) or "a loop bound"
                raise PolypadError(f"{primitive}: the loops of {scope.label(s)} depend on data "
                                   f"({dropped}); they cannot be rebuilt")
        wrappers.update(_check_regenerable(scope, scope.items[index], primitive))
        item = [place(s, bands[s.name], fixed=scope.fixed) for s in mapped]
        set_sides(item, r)
        for p in item:
            clash = {v.name for v, kept in zip(p.statement.loop_vars, p.kept, strict=True)
                     if kept} & set(names)
            if clash:
                raise PolypadError(f"{primitive}: the new loop {sorted(clash)[0]!r} has the "
                                   f"name of a loop {scope.label(p.statement)} keeps")
            placements[p.statement.name] = p
        todo[id(scope.items[index])] = item
    dtype = counter_dtype(placements.values())
    # A T.assume before an item bounds its parameters: a counter that leaves its dtype
    # only where an assumption fails runs nowhere that counts.
    facts = {index: assumed(scope.func, scope.items[index], scope.model.names)
             for index in {scope.item_of[name] for name in placements}}
    known = {name: facts[scope.item_of[name]] for name in placements}
    # Narrow counters whose new values leave their dtype count wider, cast back.
    dtype = widened(scope.model, placements.values(), dtype, known)
    check_counters_fit(scope.model, placements.values(), names, primitive, dtype, known)
    # The statements of a unit are checked where each runs inside its block.
    by_statement = member_placements(placements, in_units)
    # One loop nest rebuilt: every other instance, and every run of it, keeps its order.
    rebuilt = [item for item in scope.items if id(item) in todo]
    inside = rebuilt[0] if len(rebuilt) == 1 and isinstance(rebuilt[0], n.For) else None
    check_order(func, function_schedule(scope.model, by_statement, r, scope.fixed),
                primitive, reassociate=reassociate, inside=inside)

    def rebuild(item: n.Stmt) -> n.Stmt:
        found = todo.get(id(item))
        if found is None:
            return item
        # A nest whose statements never run is left as written.
        return regenerate(scope, found, names, wrappers, dtype) or item

    return _with_body(scope, map_items(scope.body, rebuild))


def _check_names(names: tuple[str, ...], r: int) -> tuple[str, ...]:
    if len(names) != r:
        raise PolypadError(f"reorder_by_map: the band has {r} members but {len(names)} "
                           "names were given")
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise PolypadError(f"reorder_by_map: {name!r} cannot name a loop")
    if len(set(names)) != r:
        raise PolypadError(f"reorder_by_map: the loop names {names} repeat")
    return names


def _check_regenerable(scope: Scope, item: n.Stmt, primitive: str) -> dict[int, n.Block]:
    """Only loops, ifs, lets and leaf statements can be rebuilt from the model, blocks
    moved whole (:mod:`.reschedule_blocks`), and a block around a single statement
    (``cache_read`` wraps each copy in one): the rebuilt statement gets a copy of it.
    Returns those blocks by statement id."""
    rebuilt = (n.For, n.IfThenElse, n.LetStmt, n.SeqStmt)
    wrappers: dict[int, n.Block] = {}
    whole = {id(b): b for b in whole_blocks(scope)}
    inside_whole = {id(x) for b in whole.values() for x in walk(b.body)}
    for node in walk(item):
        if id(node) in inside_whole:
            continue
        if id(node) in whole:
            check_whole(node, primitive)
            continue
        if isinstance(node, n.Block):
            inside = list(walk(node.body))
            leaves = [x for x in inside if isinstance(x, n.Stmt) and is_leaf(x)]
            nested = next((x for x in inside if isinstance(x, (n.For, n.Block))), None)
            if len(leaves) == 1 and nested is None:
                wrappers[id(leaves[0])] = node
                continue
            if nested is not None:
                # A block is a unit of work: the rebuild would cut it apart.
                what = (f"loop {nested.var.name!r}" if isinstance(nested, n.For)
                        else f"block {nested.name!r}")
                hint = ("a block with axes is moved whole, and reorder_by_map does not move "
                        "loops inside one" if is_block_program(node) else
                        f"a block moves whole: reorder them with block={node.name!r}")
                raise PolypadError(f"{primitive}: block {node.name!r} holds {what}; {hint}")
        if isinstance(node, n.Stmt) and not (isinstance(node, rebuilt) or is_leaf(node)):
            raise PolypadError(f"{primitive}: cannot rebuild a {type(node).__name__} inside "
                               f"{scope.title}; only loops, ifs, lets, stores and blocks of "
                               "one store are rebuilt")
    return wrappers


def _with_body(scope: Scope, body: n.Stmt | None) -> n.PrimFunc:
    func = scope.func
    if body is None:
        raise PolypadError(f"nothing is left of {scope.title}")  # pragma: no cover
    if scope.block is None:
        return n.PrimFunc(func.name, func.params, body, func.attrs)
    for let in reversed(scope.axes):  # the block's axes stay bound at its head
        body = dataclasses.replace(let, body=body)
    new = dataclasses.replace(scope.block, body=body)  # keeps what of its header fits
    return replace(func, scope.block, new)


# ---------------------------------------------------------------- distribute


def distribute(func: n.PrimFunc, block: str | None, statements, new_block: str | None = None,
               position: str = "before") -> n.PrimFunc:
    """``func`` with ``statements`` of ``block`` moved out of their loop nests.

    With a block, they go into ``new_block``, a block placed ``position``
    ("before" or "after") ``block``; with ``block=None`` each loop nest of the
    function body is split in place, the moved part just before (after) the
    rest, and ``new_block`` must be None.  The moved statements keep copies of
    the loops and ifs around them.  ``statements`` are labels (``compute_0``,
    as evidence names them) or indices within the block.
    """
    primitive = "distribute"
    if position not in POSITIONS:
        raise PolypadError(f"{primitive}: position must be 'before' or 'after', not "
                           f"{position!r}")
    scope = scope_of(func, block)
    if isinstance(statements, (str, int)):
        statements = (statements,)
    chosen = {scope.lookup(ref).name for ref in statements}
    if not chosen or len(chosen) == len(scope.statements):
        raise PolypadError(f"{primitive}: choose some, but not all, statements of "
                           f"{scope.title}")
    if block is None and new_block is not None:
        raise PolypadError(f"{primitive}: new_block names the block split out of a block; "
                           "with block=None the loop nests are split in place")
    if block is not None:
        _check_new_block(func, new_block, primitive)
    moved = [s for s in scope.statements if s.name in chosen]
    keep = {id(s.stmt) for s in moved}
    for s in moved:
        # The moved copy leaves the allocations of the block (or of its own nest).
        inner = scope.block if block is not None else scope.items[scope.item_of[s.name]]
        if any(isinstance(a, n.Allocate) for a in ancestors(inner, s.stmt)):
            raise PolypadError(f"{primitive}: {scope.label(s)} sits inside an allocation "
                               f"of {scope.title} and cannot leave it")
    check_order(func, _distributed_schedule(scope, chosen, position), primitive)

    def parts(stmt: n.Stmt) -> tuple[n.Stmt | None, n.Stmt | None]:
        """(the moved statements, the rest) of ``stmt``."""
        return (_prune(stmt, lambda leaf: id(leaf) in keep, untracked=False),
                _prune(stmt, lambda leaf: id(leaf) not in keep, untracked=True))

    def ordered(moved_part, rest) -> tuple:
        pair = (moved_part, rest) if position == "before" else (rest, moved_part)
        return tuple(x for x in pair if x is not None)

    if block is None:
        def in_place(item: n.Stmt) -> n.Stmt:
            found = ordered(*parts(item))
            return found[0] if len(found) == 1 else n.SeqStmt(found)

        return _with_body(scope, map_items(scope.body, in_place))
    moved_part, rest = parts(scope.block.body)
    pair = ordered(n.Block(new_block, moved_part),
                   dataclasses.replace(scope.block, body=rest))
    return _splice(func, scope.block, pair)


def _check_new_block(func: n.PrimFunc, name: str, primitive: str) -> None:
    if not isinstance(name, str) or not name:
        raise PolypadError(f"{primitive}: the new block needs a name")
    try:
        find_block(func, name)
    except NotFoundError:
        return
    raise PolypadError(f"{primitive}: there is already a block {name!r}")


def _distributed_schedule(scope: Scope, chosen: set[str], position: str) -> isl.UnionMap:
    """Times with the moved statements first (or last) among the block's, at each
    iteration of the loops around the block."""
    from analyses.instances import depth_of

    model = scope.model
    depth = depth_of(model)
    inside = {s.name for s in scope.statements}
    cut = 2 * scope.fixed  # the program order up to the block's loop level
    start = min(s.position[scope.fixed] for s in scope.statements)
    out = empty_union_map()
    for s in model.statements:
        program = entries(s, None, 0, depth)  # the 2d+1 program order
        if s.name in inside:
            moved = s.name in chosen
            group = int(moved) if position == "after" else int(not moved)
            # A block moves as a whole; without one, each nest is split where it
            # is.  The item, not the first program position: the statements of
            # one top-level ``if`` have different first positions.
            head = [start if scope.block is not None else scope.item_of[s.name], group]
        else:
            head = [program[cut], 0]
        items = program[:cut] + head + program[cut:]
        out = out.union(isl.UnionMap.from_map(time_map(s.space, items, s.domain)))
    return out


def _prune(stmt: n.Stmt, take, *, untracked: bool) -> n.Stmt | None:
    """``stmt`` with only the leaves ``take`` accepts, and what encloses them;
    statements the model does not track stay where ``untracked`` says."""
    match stmt:
        case n.SeqStmt(stmts=stmts):
            pruned = (_prune(s, take, untracked=untracked) for s in stmts)
            parts = [p for p in pruned if p is not None]
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else n.SeqStmt(tuple(parts), span=stmt.span)
        case n.For(body=body):
            inner = _prune(body, take, untracked=untracked)
            return None if inner is None else _rebuilt(stmt, body=inner)
        case n.IfThenElse(then_case=then, else_case=other):
            a = _prune(then, take, untracked=untracked)
            b = None if other is None else _prune(other, take, untracked=untracked)
            if a is None and b is None:
                return None
            if a is None:
                return n.IfThenElse(n.Not(stmt.condition), b, span=stmt.span)
            return _rebuilt(stmt, then_case=a, else_case=b)
        case (n.LetStmt(body=body) | n.Block(body=body) | n.Allocate(body=body)
              | n.DeclBuffer(body=body)):
            inner = _prune(body, take, untracked=untracked)
            return None if inner is None else _rebuilt(stmt, body=inner)
        case _ if is_leaf(stmt):
            return stmt if take(stmt) else None
        case _:
            return stmt if untracked else None


def _rebuilt(stmt: n.Stmt, **changes) -> n.Stmt:
    if all(getattr(stmt, k) is v for k, v in changes.items()):
        return stmt
    return dataclasses.replace(stmt, **changes)


def _splice(func: n.PrimFunc, block: n.Block, pair: tuple[n.Stmt, n.Stmt]) -> n.PrimFunc:
    """``func`` with ``block`` replaced by the two statements of ``pair``."""
    path = ancestors(func, block)
    parent = path[-2] if len(path) > 1 else None
    if isinstance(parent, n.SeqStmt):
        stmts = []
        for s in parent.stmts:
            stmts.extend(pair if s is block else (s,))
        return replace(func, parent, n.SeqStmt(tuple(stmts), span=parent.span))
    return replace(func, block, n.SeqStmt(pair))
