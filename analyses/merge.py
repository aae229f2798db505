"""May two adjacent loops be merged into one?  (RFC 0077, Merge Adjacent Loops.)

Merging ``for i: A(i)`` followed by ``for j: B(j)`` (same extent) into
``for i: A(i); B(i)`` runs iteration ``j`` of the second body before
iterations ``i > j`` of the first.  The RFC's two conditions say exactly
that no dependence may point that way:

1. for ``i > j``, what the first loop writes in iteration ``i`` is not
   accessed by the second loop in iteration ``j`` (flow and output
   dependences);
2. for ``i > j``, what the first loop reads in iteration ``i`` is not
   written by the second loop in iteration ``j`` (anti dependences).

:func:`can_merge_loops` decides them with :mod:`.dataflow`: it builds the
merged schedule and asks for a dependence it reverses.  None: ``Proved``.
A certain one: ``Refuted`` with the two iterations and the element.  Only a
may-dependence (a data-dependent guard): ``Unknown``.

>>> can_merge_loops(f, loop_a, loop_b)   # Refuted: S0(i=2), S1(i=1), A[2]
"""

from __future__ import annotations

import islpy as isl

from polypad.arguments import expect
from polypad.errors import IllegalTransformError, NotAffineError, NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import enclosing_loops
from polypad.ir.loop_names import LoopRef, find_named_loop, loop_names
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, StatementModel, extract, to_pw_aff
from polypad.model.affine import to_map
from polypad.model.conditions import condition_set
from polypad.model.domains import loop_bounds
from polypad.model.isl_helpers import empty_union_map

from . import instances as inst
from .budgeted import decider
from .dataflow import Dependences
from .evidence import Counterexample, Proved, Refuted, Unknown


def adjacent_loops(f: n.PrimFunc, loop_a, loop_b) -> tuple[n.SeqStmt, int]:
    """The sequence holding loops ``loop_a`` and ``loop_b`` back to back, and a's index.

    Each loop is a ``For`` of ``f`` or its variable's name.  When a name is
    shared by several loops (the RFC's examples call both loops ``i``), the
    one pair of such loops that sit next to each other is meant.
    """
    loops = [node for node in walk(f.body) if isinstance(node, n.For)]
    first, second = _candidates(f, loops, loop_a), _candidates(f, loops, loop_b)
    pairs = []
    for node in walk(f.body):
        if isinstance(node, n.SeqStmt):
            for k in range(len(node.stmts) - 1):
                a, b = node.stmts[k], node.stmts[k + 1]
                if _among(a, first) and _among(b, second):
                    pairs.append((node, k))
    if len(pairs) == 1:
        return pairs[0]
    a_name, b_name = _name(loop_a), _name(loop_b)
    if not pairs:
        raise IllegalTransformError(
            f"the loops over {a_name} and {b_name} in {f.name} are not adjacent: the second "
            "must directly follow the first in the same sequence")
    raise NotFoundError(
        f"{len(pairs)} adjacent pairs of loops over {a_name} and {b_name} in {f.name}; "
        "pass the For nodes themselves")


@decider
def can_merge_loops(f: n.PrimFunc, loop_a, loop_b) -> Proved | Refuted | Unknown:
    """Whether merging adjacent loops ``loop_a`` and ``loop_b`` keeps ``f``'s meaning.

    The loops are ``For`` nodes of ``f`` or loop variable names; they must be
    serial, adjacent in one sequence, ``loop_a`` first.  Raises
    :class:`IllegalTransformError` when they are not.  The extents must be
    equal wherever the loops run (else ``Refuted``, with the outer loop
    values where they differ).
    """
    what = "a loop variable name (str) or a For node"
    expect(loop_a, (str, n.For), "loop_a", "can_merge_loops", what=what)
    expect(loop_b, (str, n.For), "loop_b", "can_merge_loops", what=what)
    seq, k = adjacent_loops(f, loop_a, loop_b)
    a, b = seq.stmts[k], seq.stmts[k + 1]
    for loop in (a, b):
        if loop.kind is not n.ForKind.SERIAL:
            raise IllegalTransformError(
                f"the loop over {loop.var.name} is {loop.kind.value}; only serial loops merge")
    try:
        model = extract(f)
        extents = _extents_differ(model, a, b)
        if extents is not None:
            return Refuted(extents)
        deps = Dependences(model)
        schedule = merged_schedule(model, a, b)
    except NotAffineError as err:
        return Unknown(f"the loops cannot be modelled exactly: {err}")
    found = deps.violation(schedule)
    if found is None:
        count = sum(1 for s in model.statements if _inside(s, a) or _inside(s, b))
        return Proved("isl", f"merging the loops over {a.var.name} and {b.var.name} reverses "
                      f"no flow, anti or output dependence of their {count} statements")
    cex = found.counterexample
    if found.kind == "anti":
        condition = ("RFC condition 2 (what the first loop reads, the second loop overwrites "
                     "in an earlier iteration)")
    else:
        condition = ("RFC condition 1 (what the first loop writes, the second loop accesses "
                     "in an earlier iteration)")
    text = (f"merging runs {cex.instances[1]} before {cex.instances[0]}, breaking "
            f"{condition}: {cex.description}")
    cex = Counterexample(text, cex.instances, cex.element, cex.params, cex.values)
    if found.certain:
        return Refuted(cex)
    return Unknown(f"only a may-dependence forbids the merge: {cex}")


def merged_schedule(model, a: n.For, b: n.For) -> isl.UnionMap:
    """The schedule of ``model`` with loop ``b``'s body run inside loop ``a``, after a's body.

    Times are :func:`instances.statement_time`'s (doubled positions); a
    statement of ``b`` takes ``a``'s position at the loops' level, runs at
    counter ``j - b.min + a.min`` and follows every item of ``a``'s body.
    """
    depth = inst.depth_of(model)
    in_a = [s for s in model.statements if _inside(s, a)]
    out = empty_union_map()
    for s in model.statements:
        if not _inside(s, b):
            out = out.union(isl.UnionMap.from_map(inst.statement_time(s, depth)))
            continue
        level = _level(s, b)
        position = list(s.position)
        if in_a:
            position[level] = in_a[0].position[level]
            position[level + 1] += max(t.position[level + 1] for t in in_a) + 1
        pws = [s.space.const(2 * position[0])]
        for k, var in enumerate(s.loop_vars):
            counter = s.space.var(var)
            if k == level:
                counter = counter.sub(to_pw_aff(b.min, s.space)).add(to_pw_aff(a.min, s.space))
            pws += [counter, s.space.const(2 * position[k + 1])]
        pws += [s.space.const(0)] * (2 * depth + 1 - len(pws))
        time = to_map(s.space, pws, None).intersect_domain(s.domain)
        out = out.union(isl.UnionMap.from_map(time))
    return out


def _extents_differ(model, a: n.For, b: n.For) -> Counterexample | None:
    """Outer loop values (and parameters) where ``a`` and ``b`` run different counts."""
    outer = enclosing_loops(model.func, a)
    space = AffineSpace(tuple(loop.var for loop in outer), tuple_name="outer",
                        names=model.names)
    context = space.universe
    for loop in outer:
        for bound in loop_bounds(loop):
            try:
                context = context.intersect(condition_set(bound, space))
            except NotAffineError:
                pass  # a wider context only makes the check stricter
    ea, eb = to_pw_aff(a.extent, space), to_pw_aff(b.extent, space)
    differ = ea.ne_set(eb).intersect(context)
    if differ.is_empty():
        return None
    point = inst.safe_lexmin(differ).sample_point()
    coords, params = inst.point_coordinates(point)
    where = dict(zip(inst.dim_names(space.space), coords, strict=True))
    ca = ea.intersect_domain(isl.Set.from_point(point))
    cb = eb.intersect_domain(isl.Set.from_point(point))
    counts = [max(0, _value(ca)), max(0, _value(cb))]
    return Counterexample(
        f"the loops over {a.var.name} and {b.var.name} run {counts[0]} and {counts[1]} "
        "iterations; only loops with equal extents merge",
        params={**params, **where})


def _value(pa: isl.PwAff) -> int | None:
    for _, aff in pa.get_pieces():
        return aff.get_constant_val().to_python()
    return None


def _inside(s: StatementModel, loop: n.For) -> bool:
    return any(x is loop for x in s.loops)


def _level(s: StatementModel, loop: n.For) -> int:
    return next(k for k, x in enumerate(s.loops) if x is loop)


def _candidates(f: n.PrimFunc, loops: list[n.For], ref) -> list[n.For]:
    if isinstance(ref, n.For):
        if not _among(ref, loops):
            raise NotFoundError(f"the loop over {ref.var.name} is not in function {f.name}")
        return [ref]
    if not isinstance(ref, str):
        raise TypeError(f"a loop is a For node or a loop variable name, not {type(ref).__name__}")
    if isinstance(ref, LoopRef):  # a handle from Schedule.get_loops
        return _candidates(f, loops, find_named_loop(f, ref))
    found = [loop for loop in loops if loop.var.name == ref]
    if not found:  # a name get_loops hands out where the variable's is not: 'i#0', 'blk/i'
        named = loop_names(f).get(ref)
        found = [loop for loop in loops if loop is named]
    if not found:
        names = ", ".join(loop.var.name for loop in loops) or "none"
        raise NotFoundError(f"no loop over {ref!r} in function {f.name}; loops over: {names}")
    return found


def _among(node, nodes) -> bool:
    return any(node is x for x in nodes)


def _name(ref) -> str:
    return ref.var.name if isinstance(ref, n.For) else str(ref)
