"""The plan of ``Schedule.sequential_buffer_access``: which primitives, with which arguments.

RFC 0077's utility rewrites the loops of a block so that they walk a
buffer's (transformed) layout in order.  It is not a primitive of its own:
:func:`next_step` looks at the function as it stands and names the next
recorded primitive to apply, until the loops are sequential:

1. In each item (top-level loop nest) of the block, the statements that
   access the buffer take its indices as their band: the access written
   (or else the first one read) ``S[i, f] -> A[(i + f) // 4, (i + f) % 4]``.
2. A statement that does not access the buffer but shares loops with one
   that does rides along where it can: when a prefix of the band is a
   function of the loops they share (``B[i // 4, i % 4] = 0`` under the band
   ``A[i // 4, i % 4, j // 8, j % 8]``), it runs at that prefix, before or
   after the deeper loops as in program order.  Otherwise it must leave the
   nest: ``distribute`` splits it into a new block, ``init_<block>`` before
   the block when something of the nest depends on it (conv1d's
   initialisation, RFC option 2), ``post_<block>`` after it when it depends
   on the nest (without a block, into a loop nest of its own just before or
   after the one it left).  The dependence check of ``distribute`` refuses
   the RFC's conv1d_cumsum, whose initialisation reads what the nest wrote.
3. Then ``reorder_by_map`` takes the bands; items already sequential (the
   band is the statements' own outer loop counters) are left alone.

The new loops are named after the buffer's indices: ``x // c`` gives
``xo``, ``x % c`` gives ``xi`` and a plain counter keeps its name (``x``
the first loop counter in the index), else ``<buffer>_<axis>``.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_buffer
from polypad.ir.naming import Names, fresh_block_name
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk
from polypad.model import Access, StatementModel
from polypad.model.affine import to_map, to_pw_aff
from polypad.model.isl_helpers import union_sets

from .reschedule_plan import place
from .reschedule_scope import Scope, scope_of


@dataclass(frozen=True)
class Step:
    """A primitive to apply next: its name and keyword arguments."""

    primitive: str
    args: dict


def traversed_access(s: StatementModel, buffer: n.Buffer) -> Access | None:
    """The access of ``s`` that ``buffer``'s order is read from: the write, else the first read."""
    found = [a for a in s.accesses if a.buffer is buffer]
    writes = [a for a in found if a.kind == "write"]
    return (writes or found or [None])[0]


def next_step(func: n.PrimFunc, block: str | None, buffer: str | n.Buffer) -> Step | None:
    """The next primitive that makes ``block`` walk ``buffer`` in order, or ``None``."""
    scope = scope_of(func, block)
    buf = find_buffer(func, buffer)
    bands: dict[str, list[n.Expr]] = {}  # statement name -> band index expressions
    leaving: list[StatementModel] = []
    if not any(traversed_access(s, buf) is not None for s in scope.statements):
        raise PolypadError(f"sequential_buffer_access: {scope.title} does not access "
                           f"{buf.name}")
    for index in range(len(scope.items)):
        members = scope.item_statements(index)
        using = [s for s in members if traversed_access(s, buf) is not None]
        if not using:
            continue
        item_bands = _inside_block(scope, {
            s.name: list(traversed_access(s, buf).indices) for s in using})
        if item_bands is None:
            continue  # the buffer's order is the enclosing loops' alone
        stuck = []
        for s in members:
            if s.name in item_bands:
                continue
            prefix = _shared_prefix(s, using, item_bands)
            if prefix is None:
                stuck.append(s)
            else:
                item_bands[s.name] = prefix
        leaving += stuck
        if not stuck and not _already_sequential(members, item_bands, scope.fixed):
            bands.update(item_bands)
    if leaving:
        return _split(scope, leaving, buf)
    if not bands:
        return None
    return _reorder(scope, bands, buf)


def _inside_block(scope: Scope, bands: dict[str, list[n.Expr]]) -> dict | None:
    """``bands`` without their leading members that only the loops around the block
    decide (``A[i, j // 4, j % 4]`` in a block inside ``for i`` walks ``[j // 4, j %
    4]``): those loops stay as they are.  ``None`` when nothing inside is left."""
    if not scope.fixed:
        return bands
    inner = {v for s in scope.statements for v in (*s.loop_vars[scope.fixed:], *s.lets)
             if v not in scope.outer_lets}
    skip = min(next((k for k, e in enumerate(exprs) if set(free_vars(e)) & inner),
                    len(exprs))
               for exprs in bands.values())
    out = {name: exprs[skip:] for name, exprs in bands.items()}
    return out if all(out.values()) else None


def _shared_prefix(u: StatementModel, using: list[StatementModel], bands: dict) -> list | None:
    """The longest band prefix every statement in ``using`` computes from loops it
    shares with ``u`` alone, when they all agree on it."""
    for m in range(len(next(iter(bands.values()))), 0, -1):
        found = None
        for s in using:
            shared = _common_loops(u, s)
            exprs = bands[s.name][:m]
            loops_used = {v for e in exprs for v in free_vars(e) if v in s.loop_vars}
            if not loops_used <= shared or any(v in s.lets for e in exprs for v in free_vars(e)):
                found = None
                break
            try:
                candidate = to_map(u.space, [to_pw_aff(e, u.space) for e in exprs], None)
            except NotAffineError:
                found = None
                break
            candidate = candidate.intersect_domain(u.domain)
            if found is not None and not found[1].is_equal(candidate):
                found = None
                break
            found = (exprs, candidate)
        if found is not None:
            return found[0]
    return None


def _common_loops(a: StatementModel, b: StatementModel) -> set[n.Var]:
    out = set()
    for x, y in zip(a.loops, b.loops, strict=False):
        if x is not y:
            break
        out.add(x.var)
    return out


def _already_sequential(members, bands: dict, fixed: int = 0) -> bool:
    """Every statement's band is its own outermost loop counters (inside the block,
    past the ``fixed`` loops around it): nothing to reorder."""
    for s in members:
        exprs = bands[s.name]
        own = s.loop_vars[fixed:fixed + len(exprs)]
        if len(exprs) > len(own):
            return False
        own = to_map(s.space, [s.space.var(v) for v in own], None)
        band = to_map(s.space, [to_pw_aff(e, s.space) for e in exprs], None)
        if not own.intersect_domain(s.domain).is_equal(band.intersect_domain(s.domain)):
            return False
    return True


def _split(scope: Scope, leaving: list[StatementModel], buf: n.Buffer) -> Step:
    """A ``distribute`` step for the statements that must leave their nests."""
    import analyses

    deps = analyses.dependences(scope.func).all()
    before, after = [], []
    for u in leaving:
        others = [s for s in scope.item_statements(scope.item_of[u.name]) if s not in leaving]
        nest = _domains(others)
        mine = isl.UnionSet.from_set(u.domain)
        needed = not deps.intersect_domain(mine).intersect_range(nest).is_empty()
        needs = not deps.intersect_domain(nest).intersect_range(mine).is_empty()
        (after if needs and not needed else before).append(u)
    group, position, hint = (before, "before", "init_") if before else (after, "after", "post_")
    block = None if scope.block is None else scope.block.name
    return Step("distribute", {
        "block": block,
        "statements": tuple(scope.label(s) for s in group),
        "new_block": None if block is None else fresh_block_name(scope.func, hint + block),
        "position": position,
    })


def _domains(statements) -> isl.UnionSet:
    return union_sets(s.domain for s in statements)


def _reorder(scope: Scope, bands: dict[str, list[n.Expr]], buf: n.Buffer) -> Step:
    """A ``reorder_by_map`` step giving every statement its band."""
    maps: list[isl.Map] = []
    kept: set[str] = set()
    for s in scope.statements:
        if s.name not in bands:
            continue
        pws = [to_pw_aff(e, s.space) for e in bands[s.name]]
        placement = place(s, tuple(pws), fixed=scope.fixed)
        kept |= {v.name for v, k in zip(s.loop_vars, placement.kept, strict=True) if k}
        maps.append(to_map(s.space, pws, None).set_tuple_name(isl.dim_type.in_, scope.label(s)))
    longest = max(bands.values(), key=len)
    return Step("reorder_by_map", {
        "block": None if scope.block is None else scope.block.name,
        "band": band_text(maps),
        "names": loop_names(buf, longest, avoid=kept),
    })


def band_text(maps: list[isl.Map]) -> str:
    """ISL text of the functions ``maps``, one statement after another in the given order."""
    space = maps[0].get_space().params()
    for m in maps[1:]:
        space = space.align_params(m.get_space().params())
    prefix, bodies = "", []
    for m in maps:
        text = str(isl.PwMultiAff.from_map(m.align_params(space)))
        head, _, body = text.partition("{")
        prefix = head
        bodies.append(body.rsplit("}", 1)[0].strip())
    return prefix + "{ " + "; ".join(bodies) + " }"


def loop_names(buffer: n.Buffer, indices, avoid=()) -> tuple[str, ...]:
    """Names for loops walking ``buffer`` along ``indices`` (see the module docstring)."""
    names = Names(reserved=avoid)
    out = []
    for axis, index in enumerate(indices):
        hint = _hint(index)
        out.append(names.fresh(hint if hint is not None else f"{buffer.name}_{axis}"))
    return tuple(out)


def _hint(index: n.Expr) -> str | None:
    if isinstance(index, n.Var):
        return index.name
    suffix = {n.FloorDiv: "o", n.FloorMod: "i"}.get(type(index))
    if suffix is None:
        return None
    first = next((x for x in walk(index.a) if isinstance(x, n.Var)), None)
    return None if first is None else first.name + suffix
