"""Dependences that let reductions reassociate: which new orders keep a function's
results, up to the order in which each reduction combines its terms.

A *reduction update* is a statement ``X[e] = combine(X[e], v)`` with a
combiner of :mod:`analyses.combiners` (``+ * min max``, and ``& | ^`` on
integers, written as TVM writes them: ``X[e] + v``, ``T.max(X[e], v)``, the
``T.if_then_else`` form of ``max``...), where the statement reads ``X`` only
as that accumulator -- the element it writes -- so that ``v``, its guards,
loop bounds and lets do not read ``X``, and the value has the buffer's
dtype.  Two instances of one update on one element may then run in either
order: ``(x op a) op b == (x op b) op a``.  That holds exactly for integers
(``+`` and ``*`` wrap modulo ``2**n``, which is a commutative ring; the
bitwise combiners are exact by nature) and for ``min``/``max`` of non-NaN
values; a float ``+`` or ``*`` rounds, so a reordered float sum may differ
in its last bits, and a NaN makes ``min``/``max`` depend on the order
(``min(nan, 1)`` is ``nan``, ``min(1, nan)`` is 1).  Schedules reorder a
float sum or product only when the user asks (``reassociate=True``,
``rfactor``); an exact one may be reordered where the dependences allow
(``reduction_dependences(f, exact_only=True)``: ``vectorize`` asks it).
This module says which orders are then legal.

:func:`reduction_dependences` gives the dependences a new order must keep:

    (the value-based dependences of :func:`analyses.dependences`
     minus the pairs of two instances of one update on its element)
    ∪ (every pair, in program order, of an instance of an update and an
       access of the same element by any *other* statement)

**Why it is exact.**  Call a pair of instances *conflicting* when they touch
one element and one of them writes it, and *free* when both are instances
of one update on its element.  A new order keeps the function's results, up
to reassociating each reduction, iff it keeps every conflicting pair that is
not free in program order:

* *enough*: the accesses of an element ``x`` other than the updates keep
  their order, and every update instance stays between the same two of them
  (it is ordered with each), so between two consecutive other accesses the
  same updates are applied to the same value, only in another order; the
  values ``v`` they combine are read in order too (those accesses are not
  free);
* *needed*: breaking a pair that is not free reads or leaves another
  value in general (an update moved before the initialisation is wiped by
  it, a consumer moved before the last update misses its term).

The set above is exactly as strong as "keep every non-free conflicting
pair".  It holds no free pair, and every pair in it is conflicting and in
program order, so an order keeping all non-free conflicting pairs keeps it.
Conversely take a non-free conflicting pair ``a`` before ``b`` on ``x`` and
argue on the number of writes of ``x`` between them.  If one of ``a``,
``b`` is an update instance (and the other is not an instance of that same
update, as the pair is not free), the pair is in the second part.  If
neither is and no write of ``x`` lies between them, ISL's dataflow relates
them (flow, anti or output: only a write kills) and the pair is in the
first part.  Otherwise a write ``w`` of ``x`` lies between them: ``(a, w)``
and ``(w, b)`` are conflicting, have fewer writes between them, and are not
free (``a`` and ``b`` are not update instances; if ``w`` is one, both pairs
are in the second part), so by induction the order keeps ``a`` before ``w``
before ``b``.

Value-based dataflow alone is not enough: it relates the initialisation
only to the *first* update of a chain, and the last update only to the
consumer, so removing the update-to-update pairs from it would let an
update move before the initialisation (and be wiped by it).  The second
part relates every update instance to each of them.

A ``T.assume`` that reads the element is one of the other accesses (its
fact is about the value at its point).  Pairs across the lifetimes of an ``Allocate``
inside a loop are kept in the second part although they never meet: that
refuses more, never less.

>>> d = reduction_dependences(f)
>>> d.reductions        # (Reduction(S1: B +), ...)
>>> reduction_dependences(f, exact_only=True)   # float + and * keep their order
>>> d.violations(new_schedule)   # a Counterexample, or None
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry
from polypad.model import Access, Model, StatementModel
from polypad.model.isl_helpers import empty_union_map, empty_union_set, union_all

from . import instances as inst
from .budgeted import bounded
from .combiners import Update, update_of
from .dataflow import Dependences, Violation, dependences
from .evidence import Counterexample

_KINDS = ("flow", "output", "anti")


@dataclass(frozen=True, eq=False)
class Reduction:
    """An update ``X[e] = combine(X[e], v)`` (see the module docstring) of the model."""

    statement: StatementModel
    update: Update
    write: Access  # the access of X[e], written and read

    @property
    def op(self) -> str:
        """The combiner's name: ``+``, ``*``, ``min``, ``max``, ``&``, ``|`` or ``^``."""
        return self.update.combiner.name

    @property
    def buffer(self) -> n.Buffer:
        return self.write.buffer

    @property
    def exact(self) -> bool:
        """Whether reordering its terms changes no bit: integers, with any combiner
        (:meth:`analyses.combiners.Combiner.exact`)."""
        return self.update.combiner.exact(self.buffer.dtype)

    def __repr__(self) -> str:
        return f"Reduction({self.statement.name}: {self.buffer.name} {self.op})"


def find_reductions(model: Model) -> tuple[Reduction, ...]:
    """The reduction updates of ``model``, in program order."""
    return tuple(r for r in map(_reduction, model.statements) if r is not None)


def _reduction(s: StatementModel) -> Reduction | None:
    if s.is_assume:
        return None
    update = update_of(s.stmt)
    if update is None:
        return None
    buffer = update.buffer
    write = next(a for a in s.accesses if a.kind == "write")
    own = [a for a in s.accesses if a.kind == "read" and a.buffer is write.buffer]
    # X is read only as the accumulator: nothing else of the statement (v, guards,
    # bounds, lets) reads it.  Its element must be the one written, at every
    # instance (a load under the T.if_then_else form's branch may be restricted).
    if not own or buffer is not write.buffer or any(
            not any(a.node is acc for acc in update.accumulators)
            or not a.relation.is_subset(write.relation) for a in own):
        return None
    if not any(a.relation.is_equal(write.relation) for a in own):
        return None
    return Reduction(s, update, write)


class ReductionDependences:
    """The dependences a reassociating order must keep (see the module docstring).

    ``tagged(kind)`` has the form of :meth:`Dependences.tagged`,
    ``[S -> X[e]] -> [S' -> X[e]]``; :meth:`violation` and
    :meth:`violations` answer as :class:`Dependences` does.
    """

    def __init__(self, deps: Dependences, reductions: tuple[Reduction, ...]) -> None:
        self.decode = deps.decode
        self.pair_text = deps.pair_text
        self.deps = deps
        self.model = deps.model
        self.reductions = reductions
        model = self.model
        free = {(r.statement.name, model.buffer_name(r.buffer)) for r in reductions}
        times = inst.program_times(model)
        # Kept apart for the evidence: a value-based flow pair is certain where ISL
        # says so, a memory-based one where both accesses certainly happen.
        self._around = {kind: empty_union_map() for kind in _KINDS}
        for r in reductions:
            for kind, pairs in _around(model, r, times).items():
                self._around[kind] = self._around[kind].union(pairs)
        self._tagged = {kind: _without_free(deps.tagged(kind), free).union(self._around[kind])
                        for kind in _KINDS}
        accesses = [a for s in model.statements for a in s.accesses]
        self._must = empty_union_set()
        for a in accesses:
            if not a.may:
                self._must = self._must.union(isl.UnionSet.from_set(a.relation.wrap()))

    def tagged(self, kind: str) -> isl.UnionMap:
        """The pairs of ``kind`` (flow, output, anti, or all; flow_must, the flow pairs
        that surely exist)."""
        if kind == "flow_must":
            return self.deps.tagged("flow_must").union(self._around["flow"])
        if kind == "all":
            return union_all(self._tagged[k] for k in _KINDS)
        if kind not in self._tagged:
            raise PolypadError(f"no dependence kind {kind!r}; kinds: {', '.join(_KINDS)}, all")
        return self._tagged[kind]

    def all(self) -> isl.UnionMap:
        """Every pair, ``S -> S'`` (untagged)."""
        return self.tagged("all").domain_factor_domain().range_factor_domain()

    def violations(self, new_schedule: isl.UnionMap) -> Counterexample | None:
        """A pair that ``new_schedule`` does not keep in order, or ``None``."""
        found = self.violation(new_schedule)
        return None if found is None else found.counterexample

    def violation(self, new_schedule: isl.UnionMap) -> Violation | None:
        """Like :meth:`violations`, with the kind and certainty of the broken pair;
        certain ones (no data-dependent guard involved) are reported first."""
        if isinstance(new_schedule, isl.Map):
            new_schedule = isl.UnionMap.from_map(new_schedule)
        every = self.all()
        missing = every.domain().union(every.range()).subtract(new_schedule.domain())
        if not missing.is_empty():
            raise PolypadError(f"the new schedule does not place the instances {missing}")
        order = new_schedule.lex_ge_union_map(new_schedule)  # src -> dst not strictly after
        fallback = None
        for kind in _KINDS:
            broken = self._tagged[kind].zip().intersect_domain(order.wrap()).zip()
            if broken.is_empty():
                continue
            sure = broken.intersect_domain(self._must).intersect_range(self._must)
            if kind == "flow":
                sure = sure.intersect(self.deps.tagged("flow_must").union(self._around[kind]))
            if not sure.is_empty():
                return Violation(kind, True, self._explain(kind, sure, True))
            if fallback is None:
                fallback = Violation(kind, False, self._explain(kind, broken, False))
        return fallback

    def _explain(self, kind: str, pairs: isl.UnionMap, certain: bool) -> Counterexample:
        point = inst.first_point(pairs)
        src, dst, element, params = self.deps.decode(point)
        what = self.pair_text(kind, point, src, dst, element)
        text = (f"{kind} dependence: {what}; the new order runs {dst} before {src} or with "
                "it (reassociating, only updates of one element by one reduction may swap)")
        if not certain:
            text += " (a may-dependence: a data-dependent guard decides whether it exists)"
        return Counterexample(text, instances=(src, dst), element=element, params=params)


def _without_free(tagged: isl.UnionMap, free: set[tuple[str, str]]) -> isl.UnionMap:
    """``tagged`` without its maps from an update to itself on its buffer."""
    kept = []

    def keep(m: isl.Map) -> None:
        space = m.get_space()
        src, dst = space.domain().unwrap(), space.range().unwrap()
        name = src.get_tuple_name(isl.dim_type.in_)
        buffer = src.get_tuple_name(isl.dim_type.out)
        if not (name == dst.get_tuple_name(isl.dim_type.in_) and (name, buffer) in free):
            kept.append(m)

    tagged.foreach_map(keep)
    return union_all(kept)


def _around(model: Model, r: Reduction, times: dict[str, isl.Map]) -> dict[str, isl.UnionMap]:
    """Every pair, in program order, of an instance of ``r`` and an access of the same
    element by another statement, tagged and sorted by kind.  The update reads the
    element it writes, so a write before it is a flow pair, one after it an output
    pair; a read before it is an anti pair, one after it a flow pair."""
    name = r.statement.name
    mine = r.write.relation.range_map()  # [S -> X] -> X
    my_time = r.write.relation.domain_map().apply_range(times[name])
    out = {kind: empty_union_map() for kind in _KINDS}
    for s in model.statements:
        if s.name == name:
            continue
        for a in s.accesses:
            if a.buffer is not r.buffer:
                continue
            theirs = a.relation.range_map()
            meet = theirs.apply_range(mine.reverse())  # [T -> X] -> [S -> X], one element
            if meet.is_empty():
                continue
            their_time = a.relation.domain_map().apply_range(times[s.name])
            before = meet.intersect(their_time.lex_lt_map(my_time))
            after = meet.reverse().intersect(my_time.lex_lt_map(their_time))
            first, then = ("flow", "output") if a.kind == "write" else ("anti", "flow")
            out[first] = out[first].union(isl.UnionMap.from_map(before))
            out[then] = out[then].union(isl.UnionMap.from_map(after))
    return out


@deep_entry
@bounded
def reduction_dependences(f: n.PrimFunc, *, exact_only: bool = False,
                          inside: n.For | None = None) -> ReductionDependences:
    """The :class:`ReductionDependences` of ``f``: what an order that reassociates
    ``f``'s reductions must keep (see the module docstring).  With ``exact_only``,
    only the reductions that reordering leaves bitwise equal (:attr:`Reduction.exact`)
    may reassociate; a float sum or product keeps its order.

    Raises :class:`polypad.errors.NotAffineError` when a buffer index is not
    quasi-affine.  ``inside`` (a loop of ``f``) asks about the pairs within one run of
    it only, as :class:`analyses.dataflow.Dependences` does.
    """
    if not isinstance(f, n.PrimFunc):
        raise TypeError(f"reduction_dependences takes a PrimFunc, not {type(f).__name__}")
    deps = dependences(f, inside=inside)
    found = find_reductions(deps.model)
    if exact_only:
        found = tuple(r for r in found if r.exact)
    return ReductionDependences(deps, found)
