"""Which store instances compute a value that a later pad-value store overwrites unread?

RFC 0077, "New Primitive - Remove Overcompute Through Branching", step 1:
"insert a conditional based on the final value of the buffer's padding".
After overcompute, a block writes the padding of ``B`` too, and a later
block (``B_pad_value``) overwrites it with a known value::

    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0

:func:`pad_value_overwrites` finds, for each store of the target (the
function, or one block), the instances that may store the pad value instead
of what they compute -- here ``io == 3 and ii >= 2`` for both stores.

A *pad-value store* is a store whose value is known without reading memory:
constants and scalar parameters only (no load, no ``T.undef()``).  The
candidates ``W`` are the instances of the target's stores whose element a
pad-value store of another statement writes later (ISL: same element,
earlier in the program's schedule).  A candidate is kept only if every
value it writes is read by nothing but the *stored value* of another kept
instance -- never by an index, a guard, a let, a ``T.assume``, a statement
outside ``W``, nor the caller (the ``END`` read of
:mod:`.dataflow`).  Candidates are dropped, with everything whose values
flow into them, until that holds (ISL's transitive closure of the flow
between candidates; a loop checks the result, so an inexact closure only
costs iterations).

Why replacing the stored value by the pad value at the kept instances is
correct: the schedule and the elements touched do not change, so the flow
of values does not either.  A value written at a kept instance reaches only
the stored values of kept instances, which are discarded; every other read
sees what it saw before, and what the caller sees (``END``) never came from
a kept instance.  Which known value is stored therefore does not matter
for correctness; the one of the last pad-value store is taken, the final
value of the padding as the RFC says, so that step 3 (remove no-ops) can
drop the stores.  The dependences are the exact dataflow of
:mod:`.dataflow` (with kills); nothing is enumerated.

>>> pad_value_overwrites(f, "compute").stores[0].cases[0].condition   # io == 3 and ii >= 2
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.arguments import expect
from polypad.errors import NotAffineError, NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk
from polypad.model import Model, StatementModel, extract, set_to_condition
from polypad.model.isl_helpers import empty_union_map, empty_union_set, union_sets

from . import instances as inst
from .budgeted import bounded
from .dataflow import Dependences
from .evidence import Counterexample, Decision, Element, Proved, Refuted, Unknown

#: Rounds of "drop what escapes" before giving up (each normally converges in one).
_MAX_ROUNDS = 16


@dataclass(frozen=True, eq=False)
class PadCase:
    """Instances of one store that may store ``value``, the value a later store leaves."""

    condition: n.Expr  # over the store's loop variables; True: every instance
    value: n.Expr
    instances: isl.Set  # in the statement's model space
    pad_store: str  # label of the pad-value store that overwrites them


@dataclass(frozen=True, eq=False)
class PadStore:
    """A store of the target and the cases (first match wins) where it may store a pad
    value instead of what it computes."""

    store: n.BufferStore
    label: str
    cases: tuple[PadCase, ...]


@dataclass(frozen=True, eq=False)
class PadOverwrites:
    """The answer of :func:`pad_value_overwrites`.

    ``stores`` lists the target's stores with at least one such instance.
    ``decision`` is ``Proved`` when there is one, ``Refuted`` with a
    counterexample when there is none (a store instance whose value is read,
    or that nothing of a known value overwrites), ``Unknown`` when the
    function cannot be modelled.  ``left_out`` is the counterexample for the
    candidates that were dropped, when some were (``None`` otherwise).
    """

    stores: tuple[PadStore, ...]
    decision: Decision
    left_out: Counterexample | None = None

    def __bool__(self) -> bool:
        return bool(self.stores)


@bounded
def pad_value_overwrites(f: n.PrimFunc, block: str | None = None) -> PadOverwrites:
    """The instances of the stores of ``f`` (or of block ``block``) that may store the
    pad value a later store leaves in their element; see the module docstring."""
    expect(block, (str, None), "block", "pad_value_overwrites", what="a block name (str) or None")
    scope = find_block(f, block) if block is not None else f.body
    where = f"block {block!r}" if block is not None else f"function {f.name}"
    try:
        model = extract(f)
        deps = Dependences(model)
    except NotAffineError as err:
        return PadOverwrites((), Unknown(f"the function cannot be modelled exactly: {err}"))
    try:
        span = inst.leaf_range(f.body, scope) if block is not None else (0, len(model.statements))
    except ValueError as err:
        raise NotFoundError(f"{where}: {err}") from None
    if span is None:
        raise NotFoundError(f"{where} is not in function {f.name}")
    targets = _targets(model, model.statements[span[0]:span[1]])
    if not targets:
        return PadOverwrites((), Refuted(Counterexample(f"{where} stores nothing")))
    pieces = _candidates(model, targets, f)
    if not pieces:
        return PadOverwrites((), _nothing_overwrites(model, targets, where))
    kept, escape = _drop_escaping(model, deps, targets, union_sets(p for _, _, p in pieces))
    left_out = None if escape is None else _explain(f, deps, escape)
    if kept is None:
        return PadOverwrites((), Unknown(f"which values escape did not settle in {_MAX_ROUNDS} "
                                         f"rounds; the first: {left_out}"), left_out)
    stores = _cases(model, targets, pieces, kept)
    if not stores:
        return PadOverwrites((), Refuted(left_out), left_out)
    pads = sorted({c.pad_store for s in stores for c in s.cases})
    detail = (f"{', '.join(s.label for s in stores)} write values that {', '.join(pads)} "
              "overwrites with a known value before anything reads them")
    return PadOverwrites(stores, Proved("isl", detail), left_out)


# ---------------------------------------------------------------- candidates


def _targets(model: Model, statements) -> list[StatementModel]:
    """The stores among ``statements`` whose node occurs once (so it can be rewritten)."""
    stores = [s for s in statements if isinstance(s.stmt, n.BufferStore)]
    seen: dict[int, int] = {}
    for s in model.statements:
        seen[id(s.stmt)] = seen.get(id(s.stmt), 0) + 1
    return [s for s in stores if seen[id(s.stmt)] == 1]


def known_value(value: n.Expr, f: n.PrimFunc) -> bool:
    """Whether ``value`` is known without reading memory: constants and scalar parameters
    of ``f`` only, no load and no intrinsic call (``T.undef()`` is not a known value)."""
    if any(isinstance(x, (n.BufferLoad, n.Call)) for x in walk(value)):
        return False
    scalars = {id(p) for p in f.params if isinstance(p, n.Var)}
    return all(id(v) in scalars for v in free_vars(value))


def _write(s: StatementModel) -> isl.Map:
    return next(a.relation for a in s.accesses if a.kind == "write")


def _candidates(model: Model, targets, f: n.PrimFunc):
    """``(target, pad store, instances)``: target instances whose element the pad store
    writes later.  Later pad stores are tried first; an instance goes to the first."""
    times = inst.program_times(model)
    pads = [s for s in model.statements
            if isinstance(s.stmt, n.BufferStore) and known_value(s.stmt.value, f)]
    taken = {x.name: isl.Set.empty(x.space.space) for x in targets}
    out = []
    for y in reversed(pads):
        for x in targets:
            if x.name == y.name or x.stmt.buffer is not y.stmt.buffer:
                continue
            same = _write(x).apply_range(_write(y).reverse())
            later = same.intersect(times[x.name].lex_lt_map(times[y.name]))
            where = later.domain().subtract(taken[x.name]).coalesce()
            if not where.is_empty():
                taken[x.name] = taken[x.name].union(where)
                out.append((x, y, where))
    return out


def _nothing_overwrites(model: Model, targets, where: str) -> Refuted:
    running = [s for s in targets if not _write(s).is_empty()]
    if not running:
        return Refuted(Counterexample(f"no store of {where} ever runs"))
    first = running[0]
    point = inst.safe_lexmin(_write(first).wrap()).sample_point()
    coords, params = inst.point_coordinates(point)
    k = len(first.loop_vars)
    instance = inst.instance(model, first, coords[:k])
    element = Element(first.stmt.buffer.name, tuple(int(c) for c in coords[k:]))
    return Refuted(Counterexample(
        f"no later store of a known value overwrites what {where} writes: {instance} "
        f"writes {element} and no pad-value store writes it afterwards",
        instances=(instance,), element=element, params=params))


# ---------------------------------------------------------------- escaping values


def _value_reads(model: Model, targets) -> isl.UnionSet:
    """Tagged reads ``[S -> A[e]]`` that only feed a target's stored value."""
    ids = {id(s.stmt) for s in targets}
    harmless, harmful = empty_union_set(), empty_union_set()
    for s in model.statements:
        in_value: set[int] = set()
        if id(s.stmt) in ids:
            elsewhere = {id(x) for i in s.stmt.indices for x in walk(i)}
            in_value = {id(x) for x in walk(s.stmt.value)} - elsewhere
        for a in s.accesses:
            if a.kind != "read":
                continue
            tagged = isl.UnionSet.from_set(a.relation.wrap())
            if id(a.node) in in_value:
                harmless = harmless.union(tagged)
            else:
                harmful = harmful.union(tagged)
    return harmless.subtract(harmful)


def _drop_escaping(model: Model, deps: Dependences, targets, candidates: isl.UnionSet):
    """The candidates whose values reach only kept candidates' stored values (``None``
    when that did not settle), and the first escaping flow (tagged) found, if any."""
    harmless = _value_reads(model, targets)
    flows = deps.tagged("flow").union(deps.tagged("live_out"))
    writes = empty_union_map()
    for x in targets:
        writes = writes.union(isl.UnionMap.from_map(_write(x)))
    kept, first_escape = candidates, None
    for _ in range(_MAX_ROUNDS):
        ours = writes.intersect_domain(kept).wrap()
        fine = harmless.unwrap().intersect_domain(kept).wrap()
        out_of = flows.intersect_domain(ours)
        escaping = out_of.subtract_range(fine)
        if escaping.is_empty():
            return kept, first_escape
        if first_escape is None:
            first_escape = escaping
        bad = escaping.domain().unwrap().domain()
        inside = out_of.intersect_range(fine).domain_factor_domain().range_factor_domain()
        closure, _exact = inside.transitive_closure()
        bad = bad.union(closure.intersect_range(bad).domain())
        kept = kept.subtract(bad).coalesce()
        if kept.is_empty():
            return kept, first_escape
    return None, first_escape


def _explain(f: n.PrimFunc, deps: Dependences, escaping: isl.UnionMap) -> Counterexample:
    src, dst, element, params = deps.decode(inst.first_point(escaping))
    if dst.statement == "END":
        text = (f"{src} writes {element}, and that value may still be there when {f.name} "
                "returns: no store of a known value overwrites it on every path")
    else:
        text = (f"{src} writes {element} and {dst} reads it before a store of a known value "
                "overwrites it")
    return Counterexample(text, instances=(src, dst), element=element, params=params)


# ---------------------------------------------------------------- conditions


def _cases(model: Model, targets, pieces, kept: isl.UnionSet) -> tuple[PadStore, ...]:
    labels = inst.labels(model)
    out = []
    for x in targets:
        cases = []
        for target, pad, where in pieces:
            if target is not x:
                continue
            mine = where.intersect(_part(kept, x)).coalesce()
            if mine.is_empty():
                continue
            cond = set_to_condition(mine, x.loop_vars, model.names, context=x.domain)
            cases.append(PadCase(cond, pad.stmt.value, mine, labels[pad.name]))
        if cases:
            out.append(PadStore(x.stmt, labels[x.name], tuple(cases)))
    return tuple(out)


def _part(s: isl.UnionSet, x: StatementModel) -> isl.Set:
    return s.extract_set(x.space.space)


def describe(result: PadOverwrites) -> str:
    """One line per store: its label and the conditions under which it stores a pad value."""
    lines = []
    for s in result.stores:
        for case in s.cases:
            lines.append(f"{s.label}: where {show(case.condition)}, store {show(case.value)} "
                         f"(left by {case.pad_store})")
    return "\n".join(lines) or str(result.decision)
