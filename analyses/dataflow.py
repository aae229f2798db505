"""Data dependences between statement instances, from ISL's dataflow analysis.

``dependences(f)`` runs ``isl.UnionAccessInfo.compute_flow`` on the model
of ``f`` (:func:`polypad.model.extract`), with every access tagged by the
element it touches (``[S0[i] -> A[i]] -> A[i]``), so each dependence knows
its element:

* **flow** (read after write, value based): sinks are the reads; sources
  are the writes, *must* where the write certainly happens, *may* under a
  data-dependent guard; the end of an ``Allocate`` kills its buffer.
* **anti** (write after read) and **output** (write after write): sinks are
  the writes; sources the reads (resp. writes); every certain write kills
  what came before it.  Killed pairs are implied by a chain of kept ones
  (read -> killing write -> later write), so a schedule that keeps every
  pair here in order keeps every memory-based dependence in order.
* **live_in**: reads that may see a value from before the function (inputs,
  padding); **live_out**: writes whose value may still be there when the
  function returns, seen by an extra instance ``END[]`` that reads every
  buffer the function does not allocate itself.

``T.assume`` statements are facts, not accesses: they order nothing and
are left out, unless ``assumes=True`` asks for their reads as sinks (a
no-op decider must not remove a store an assumption looks at).

>>> d = dependences(f)
>>> d.flow            # { S0[i] -> S1[i + 1] : 0 <= i <= 14 }
>>> d.violations(new_schedule)   # a Counterexample, or None
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.model import AffineSpace, Model, extract

from . import instances as inst
from .budgeted import bounded
from .evidence import Counterexample, Element, Instance

_KINDS = ("flow", "flow_must", "anti", "output", "live_out")


def _empty() -> isl.UnionMap:
    return isl.UnionMap.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))


def _union(maps) -> isl.UnionMap:
    out = _empty()
    for m in maps:
        out = out.union(isl.UnionMap.from_map(m) if isinstance(m, isl.Map) else m)
    return out


def _tag(relation: isl.UnionMap) -> isl.UnionMap:
    """``S[i] -> A[e]`` as ``[S[i] -> A[e]] -> A[e]``: the instance tagged by its element."""
    return relation.range_map()


def _untag(tagged: isl.UnionMap) -> isl.UnionMap:
    """``[S -> A] -> [S' -> A]`` as ``S -> S'``."""
    return tagged.domain_factor_domain().range_factor_domain()


@dataclass(frozen=True)
class Violation:
    """A dependence a new schedule breaks: its kind, certainty and evidence."""

    kind: str  # "flow", "anti" or "output"
    certain: bool  # both accesses certainly happen (no data-dependent guard involved)
    counterexample: Counterexample


class Dependences:
    """The dependences of one function; see the module docstring.

    ``flow``/``anti``/``output``/``live_out`` relate instances
    (``S0[i] -> S1[j]``; ``live_out`` is ``S[i] -> Buf[e]``);
    :meth:`tagged` gives the same with the element
    (``[S0[i] -> A[e]] -> [S1[j] -> A[e]]``).
    """

    def __init__(self, model: Model, *, assumes: bool = False) -> None:
        self.model = model
        self.func = model.func
        times = inst.program_times(model)
        self._scopes = inst.allocation_scopes(model.func.body)
        kills, kill_times = self._allocation_kills()
        end_reads, end_time = self._end_reads()
        writes = [a for s in model.statements if not s.is_assume
                  for a in s.accesses if a.kind == "write"]
        reads = [a for s in model.statements if assumes or not s.is_assume
                 for a in s.accesses if a.kind == "read"]
        must_w = _tag(_union(a.relation for a in writes if not a.may))
        may_w = _tag(_union(a.relation for a in writes if a.may))
        real_r = _tag(_union(a.relation for a in reads))
        self._must_reads = _tag(_union(a.relation for a in reads if not a.may)).domain()
        self._must_writes = must_w.domain()
        all_w, kill_t, end_t = must_w.union(may_w), _tag(kills), _tag(end_reads)
        every = _union(a.relation for s in model.statements for a in s.accesses)
        every = every.union(kills).union(end_reads)
        time = _union(times.values()).union(kill_times).union(end_time)
        tagged_time = every.domain_map().apply_range(time)

        def flow_of(sink, must, may, kill):
            info = isl.UnionAccessInfo.from_sink(sink).set_must_source(must)
            info = info.set_may_source(may).set_kill(kill).set_schedule_map(tagged_time)
            return info.compute_flow()

        flow = flow_of(real_r.union(end_t), must_w, may_w, kill_t)
        may_dep, must_dep = flow.get_may_dependence(), flow.get_must_dependence()
        end_tags = end_t.domain()
        self._tagged = {
            "flow": may_dep.subtract_range(end_tags),
            "flow_must": must_dep.subtract_range(end_tags).intersect_range(self._must_reads),
            "live_out": may_dep.intersect_range(end_tags),
        }
        # Reads of a local buffer before any write see garbage, not an input.
        self.live_in = _untag_domain(flow.get_may_no_source().subtract_domain(end_tags))
        for scope in self._scopes:
            if scope.buffer in model.buffer_names:
                local = isl.Set.universe(inst.buffer_box(model, scope.buffer).get_space())
                self.live_in = self.live_in.subtract_range(isl.UnionSet.from_set(local))
        empty = _empty()
        self._tagged["output"] = flow_of(all_w, must_w, may_w, kill_t).get_may_dependence()
        anti = flow_of(all_w, empty, real_r, kill_t.union(must_w)).get_may_dependence()
        self._tagged["anti"] = anti
        self.flow = _untag(self._tagged["flow"])
        self.flow_must = _untag(self._tagged["flow_must"])
        self.flow_may = self.flow
        self.anti = _untag(anti)
        self.output = _untag(self._tagged["output"])
        self.live_out = self._tagged["live_out"].domain_factor_domain().range_factor_range()

    # ------------------------------------------------------------ public views

    def tagged(self, kind: str) -> isl.UnionMap:
        """``[S -> Buf[e]] -> [S' -> Buf[e]]`` for ``kind`` in flow, flow_must, anti,
        output, live_out (whose sink is ``END[]``) or all."""
        if kind == "all":
            return self._tagged["flow"].union(self._tagged["anti"]).union(
                self._tagged["output"])
        if kind not in self._tagged:
            raise PolypadError(f"no dependence kind {kind!r}; kinds: {', '.join(_KINDS)}, all")
        return self._tagged[kind]

    def all(self) -> isl.UnionMap:
        """Flow, anti and output dependences together, ``S -> S'``."""
        return self.flow.union(self.anti).union(self.output)

    def violations(self, new_schedule: isl.UnionMap) -> Counterexample | None:
        """A dependence ``src -> dst`` with ``new_schedule(dst)`` not after
        ``new_schedule(src)``, or ``None`` when the new schedule keeps them all.

        Certain dependences are reported before may-dependences.
        """
        found = self.violation(new_schedule)
        return None if found is None else found.counterexample

    def violation(self, new_schedule: isl.UnionMap) -> Violation | None:
        """Like :meth:`violations`, with the kind and certainty of the broken dependence."""
        new_schedule = _as_union(new_schedule)
        missing = self.all().domain().union(self.all().range()).subtract(new_schedule.domain())
        if not missing.is_empty():
            raise PolypadError(f"the new schedule does not place the instances {missing}")
        order = new_schedule.lex_ge_union_map(new_schedule)  # src -> dst not strictly after
        fallback = None
        for kind in ("flow", "output", "anti"):
            tagged = self._tagged[kind]
            broken = tagged.zip().intersect_domain(order.wrap()).zip()
            if broken.is_empty():
                continue
            sure = broken.intersect_domain(self._source_must(kind)).intersect_range(
                self._must_reads if kind == "flow" else self._must_writes)
            if kind == "flow":
                sure = sure.intersect(self._tagged["flow_must"])
            if not sure.is_empty():
                return Violation(kind, True, self._explain(kind, sure, True))
            if fallback is None:
                fallback = Violation(kind, False, self._explain(kind, broken, False))
        return fallback

    # ------------------------------------------------------------ evidence

    def _source_must(self, kind: str) -> isl.UnionSet:
        return self._must_reads if kind == "anti" else self._must_writes

    def _explain(self, kind: str, pairs: isl.UnionMap, certain: bool) -> Counterexample:
        point = inst.first_point(pairs)
        src, dst, element, params = self.decode(point)
        what = {
            "flow": f"{dst} reads {element}, which {src} writes before it",
            "anti": f"{src} reads {element} before {dst} overwrites it",
            "output": f"{src} writes {element} and {dst} overwrites it later",
        }[kind]
        text = f"{kind} dependence: {what}; the new order runs {dst} before {src} or with it"
        if not certain:
            text += " (a may-dependence: a data-dependent guard decides whether it exists)"
        return Counterexample(text, instances=(src, dst), element=element, params=params)

    def decode(self, point: isl.Point):
        """A point of ``[[S -> A] -> [S' -> A]]`` as (Instance, Instance, Element, params)."""
        coords, params = inst.point_coordinates(point)
        space = point.get_space().unwrap()
        src_space = space.domain().unwrap()
        dst_space = space.range().unwrap()
        src_name = src_space.get_tuple_name(isl.dim_type.in_)
        dst_name = dst_space.get_tuple_name(isl.dim_type.in_)
        buf = src_space.get_tuple_name(isl.dim_type.out)
        n_src = src_space.dim(isl.dim_type.in_)
        n_buf = src_space.dim(isl.dim_type.out)
        n_dst = dst_space.dim(isl.dim_type.in_)
        src = self._instance(src_name, coords[:n_src])
        element_at = coords[n_src:n_src + n_buf]
        dst_at = coords[n_src + n_buf:n_src + n_buf + n_dst]
        dst = self._instance(dst_name, dst_at)
        buffer = self.model.buffer(buf)
        return src, dst, Element(buffer.name, tuple(element_at)), params

    def _instance(self, name: str, values) -> Instance:
        if name == "END":
            return Instance("END", {})
        return inst.instance(self.model, self.model.statement(name), values)

    # ------------------------------------------------------------ extra events

    def _allocation_kills(self):
        """``K<k>[outer loops] -> Buf[every element]`` at the end of each ``Allocate``."""
        model = self.model
        depth = inst.depth_of(model)
        kills, kill_times = _empty(), _empty()
        for k, scope in enumerate(self._scopes):
            inside = model.statements[scope.first:scope.stop]
            exact = [s for s in inside if not s.may]
            if not exact or scope.buffer not in model.buffer_names:
                continue  # no kill is the conservative choice
            d = scope.depth
            first = exact[0]
            domain = None
            for s in exact:
                part = s.domain.project_out(isl.dim_type.set, d, s.domain.dim(isl.dim_type.set) - d)
                part = part.set_tuple_name(f"K{k}")
                domain = part if domain is None else domain.union(part)
            space = AffineSpace(first.loop_vars[:d], tuple_name=f"K{k}", names=model.names)
            domain = domain.intersect(space.universe).coalesce()
            box = inst.buffer_box(model, scope.buffer)
            kills = kills.union(isl.UnionMap.from_map(
                isl.Map.from_domain_and_range(domain, box)))
            last = max(s.position[d] for s in inside)
            prefix: list = [2 * first.position[0]]
            for level in range(d):
                prefix += [first.loop_vars[level], 2 * first.position[level + 1]]
            prefix[-1] = 2 * last + 1
            kill_times = kill_times.union(isl.UnionMap.from_map(
                inst.time_map(space, prefix, depth, domain)))
        return kills, kill_times

    def _end_reads(self):
        """``END[] -> Buf[every element]`` for every buffer not allocated inside the function."""
        model = self.model
        local = {id(scope.buffer) for scope in self._scopes}
        space = AffineSpace((), tuple_name="END", names=model.names)
        last = max((s.position[0] for s in model.statements), default=0)
        reads = _empty()
        for buffer in model.buffer_names.objects():
            if id(buffer) in local:
                continue
            box = inst.buffer_box(model, buffer)
            reads = reads.union(isl.UnionMap.from_map(
                isl.Map.from_domain_and_range(space.universe, box)))
        time = inst.time_map(space, [2 * last + 2], inst.depth_of(model), space.universe)
        return reads, isl.UnionMap.from_map(time)


def _untag_domain(tagged_access: isl.UnionMap) -> isl.UnionMap:
    """``[S -> A] -> A`` as ``S -> A``."""
    return tagged_access.domain_factor_domain()


def _as_union(m) -> isl.UnionMap:
    return isl.UnionMap.from_map(m) if isinstance(m, isl.Map) else m


@bounded
def dependences(f: n.PrimFunc, *, assumes: bool = False) -> Dependences:
    """The :class:`Dependences` of ``f`` (see the module docstring).

    Raises :class:`polypad.errors.NotAffineError` when a buffer index is not
    quasi-affine (the model cannot name the element).
    """
    if not isinstance(f, n.PrimFunc):
        raise TypeError(f"dependences takes a PrimFunc, not {type(f).__name__}")
    return Dependences(extract(f), assumes=assumes)
