"""Data dependences between statement instances, from ISL's dataflow analysis.

``dependences(f)`` computes ISL's value-based dataflow
(:func:`analyses.value_flow.value_flow`, which stands in for
``isl.UnionAccessInfo.compute_flow``: that one loses dependences in the ISL
islpy bundles) on the model of ``f`` (:func:`polypad.model.extract`), with
every access tagged by the element it touches (``[S0[i] -> A[i]] -> A[i]``),
so each dependence knows its element:

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
  buffer the function does not allocate itself -- or when an assert fails:
  each assert instance reads those buffers too (:mod:`.assert_order`).

A ``T.assume`` reads what its condition loads: a fact about those values
at its point, which a write of one of them before it (flow) or after it
(anti) would make false if the two swapped.  So its loads are sinks and
anti sources like any other read; it writes nothing.  (The value prover
uses an assumption as a fact source instead, valid until such a write:
:mod:`.facts`.)

A plain ``assert`` reads what its condition loads (through a let) too, and
writes the pseudo-location ``assert_order[]`` that every store reads
(:mod:`.assert_order`): no store moves across an assert.  Those pairs are in
the whole question only, not in one limited by ``buffers`` or ``about``.

A question about a few statements -- where do the values they write go,
what overwrites them -- is answered from the forward flows
(:meth:`Dependences.tagged_flow_out_of`), or for those statements only, with
time reversed (:meth:`Dependences.tagged_output_from`).  The inputs the
dataflow is given are built by :mod:`.flow_inputs`.

>>> d = dependences(f)
>>> d.flow            # { S0[i] -> S1[i + 1] : 0 <= i <= 14 }
>>> d.violations(new_schedule)   # a Counterexample, or None
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry
from polypad.isl_failure import raises_isl_failures
from polypad.model import Model, extract

from . import assert_order as order
from . import flow_inputs as fi
from . import instances as inst
from .budgeted import bounded
from .dataflow_cache import flows_of
from .dataflow_window import under, window
from .evidence import Counterexample, Element, Instance
from .value_flow import Flow, value_flow

_KINDS = ("flow", "flow_must", "anti", "output", "live_out")


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

    The ISL work is shared by every ``Dependences`` of one function (a
    decider asked about each statement of a function in turn pays once), and
    the anti and output dependences are computed on first use.

    ``buffers``, when given, limits everything to the accesses of those
    buffers: the dependences are exactly the unrestricted ones whose element
    is in one of them (ISL's dataflow is element by element, and every
    access, kill and ``END`` read is tagged with its buffer), at a fraction
    of the cost when the question is about one buffer.  ``live_in`` and
    ``live_out`` are restricted the same way.

    ``about`` (a union set of elements, named as in the model) is for a
    question about a few elements, such as what one statement's writes may
    reach: the statements that access none of them are left out, which
    changes no dependence whose element is in ``about`` (dataflow is element
    by element) but may change the others -- only those are to be read.

    ``inside`` (a loop of the function) leaves out the statements not under
    it: the pairs of two instances in one run of it (one iteration of every
    loop around it) are exact, the others not to be read (:mod:`.dataflow_window`).
    """

    def __init__(self, model: Model, *, buffers: Iterable[n.Buffer] | None = None,
                 about: isl.UnionSet | None = None, inside: n.For | None = None) -> None:
        self.model = model
        self.func = model.func
        self._flows = flows_of(model, buffers, about, window(model.func, inside), _Flows)
        self._scopes = self._flows.scopes
        self._must_reads, self._must_writes = self._flows.must_reads, self._flows.must_writes

    @property
    def flow(self) -> isl.UnionMap:
        """Read after write (value based, may), ``S -> S'``."""
        return self._flows.forward()["flow"]

    flow_may = flow

    @property
    def flow_must(self) -> isl.UnionMap:
        """The flow dependences whose source certainly wrote the value read."""
        return self._flows.forward()["flow_must_untagged"]

    @property
    def live_out(self) -> isl.UnionMap:
        """``S[i] -> Buf[e]``: writes whose value may still be there when the function returns
        (or an assert fails and the call ends there)."""
        return self._flows.forward()["live_out_untagged"]

    @property
    def live_in(self) -> isl.UnionMap:
        """``S[i] -> Buf[e]``: reads that may see a value from before the function."""
        return self._flows.forward()["live_in"]

    @property
    def unwritten_reads(self) -> isl.UnionMap:
        """``S[i] -> Buf[e]``: reads of a buffer the function allocates that may see no
        write of it, so whatever the memory held.  An allocation inside a loop whose
        end is not modelled exactly gets no kill, so a read there may seem to see the
        previous iteration's write: exact for allocations outside every loop."""
        return self._flows.forward()["unwritten"]

    @property
    def anti(self) -> isl.UnionMap:
        """Write after read, ``S -> S'``."""
        return fi.untag(self._flows.tagged("anti"))

    @property
    def output(self) -> isl.UnionMap:
        """Write after write, ``S -> S'``."""
        return fi.untag(self._flows.tagged("output"))

    # ------------------------------------------------------------ public views

    def tagged(self, kind: str) -> isl.UnionMap:
        """``[S -> Buf[e]] -> [S' -> Buf[e]]`` for ``kind`` in flow, flow_must, anti,
        output, live_out (whose sink is ``END[]``, or an assert instance) or all."""
        if kind == "all":
            return self.tagged("flow").union(self.tagged("anti")).union(self.tagged("output"))
        if kind not in _KINDS:
            raise PolypadError(f"no dependence kind {kind!r}; kinds: {', '.join(_KINDS)}, all")
        return self._flows.tagged(kind)

    def tagged_flow_out_of(self, statements: Iterable[str]) -> isl.UnionMap:
        """Where the values the named statements write may be read outside them:
        ``tagged("flow")`` and ``tagged("live_out")`` with a source among those
        statements and a sink that is not (``END`` included).

        Read off the forward flows (see :meth:`_Flows.flow_out_of`).
        """
        return self._flows.flow_out_of(frozenset(statements))

    def tagged_output_from(self, statements: Iterable[str]) -> isl.UnionMap:
        """``tagged("output")`` restricted to the sources of the named statements.

        Which later write overwrites each of a few statements' writes: computed
        for those writes only when the full relation is not at hand (see
        :meth:`_Flows.output_from`).
        """
        return self._flows.output_from(frozenset(statements))

    def all(self) -> isl.UnionMap:
        """Flow, anti and output dependences together, ``S -> S'``."""
        return self.flow.union(self.anti).union(self.output)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the relations and a picture.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import dependences_html

        return dependences_html(self)

    def __repr__(self) -> str:
        def short(relation: isl.UnionMap) -> str:
            text = str(relation)
            return text if len(text) <= 100 else text[:97] + "..."

        return (f"Dependences({self.func.name}: flow {short(self.flow)}; "
                f"anti {short(self.anti)}; output {short(self.output)})")

    def violations(self, new_schedule: isl.UnionMap) -> Counterexample | None:
        """A dependence ``src -> dst`` with ``new_schedule(dst)`` not after
        ``new_schedule(src)``, or ``None`` when the new schedule keeps them all.

        Certain dependences are reported before may-dependences.
        """
        found = self.violation(new_schedule)
        return None if found is None else found.counterexample

    def violation(self, new_schedule: isl.UnionMap) -> Violation | None:
        """Like :meth:`violations`, with the kind and certainty of the broken dependence."""
        new_schedule = fi.as_union(new_schedule)
        missing = self.all().domain().union(self.all().range()).subtract(new_schedule.domain())
        if not missing.is_empty():
            raise PolypadError(f"the new schedule does not place the instances {missing}")
        # A dimension with one value everywhere orders nothing; in a deep nest most
        # are (sequence positions, loops of extent 1), and each one more is a case
        # of the lexicographic order below.
        new_schedule = fi.drop_constant_dims(new_schedule)
        order = new_schedule.lex_ge_union_map(new_schedule)  # src -> dst not strictly after
        fallback = None
        for kind in ("flow", "output", "anti"):
            tagged = self.tagged(kind)
            broken = tagged.zip().intersect_domain(order.wrap()).zip()
            if broken.is_empty():
                continue
            sure = broken.intersect_domain(self._source_must(kind)).intersect_range(
                self._must_reads if kind == "flow" else self._must_writes)
            if kind == "flow":
                sure = sure.intersect(self.tagged("flow_must"))
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
        what = self.pair_text(kind, point, src, dst, element)
        text = f"{kind} dependence: {what}; the new order runs {dst} before {src} or with it"
        if not certain:
            text += " (a may-dependence: a data-dependent guard decides whether it exists)"
        return Counterexample(text, instances=(src, dst), element=element, params=params)

    def pair_text(self, kind: str, point: isl.Point, src: Instance, dst: Instance,
                  element: Element) -> str:
        """What the pair at ``point`` (decoded as ``src``, ``dst``, ``element``) is, in
        words: an element one writes and the other accesses, or an assert and a store
        in their order (:mod:`.assert_order`)."""
        if order.is_order(element.buffer):
            space = point.get_space().unwrap()
            names = [x.unwrap().get_tuple_name(isl.dim_type.in_)
                     for x in (space.domain(), space.range())]
            return order.order_text(self.model, kind, src, dst, *names)
        return {
            "flow": f"{dst} reads {element}, which {src} writes before it",
            "anti": f"{src} reads {element} before {dst} overwrites it",
            "output": f"{src} writes {element} and {dst} overwrites it later",
        }[kind]

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
        if order.is_order(buf):
            return src, dst, order.order_element(), params
        buffer = self.model.buffer(buf)
        return src, dst, Element(buffer.name, tuple(element_at)), params

    def _instance(self, name: str, values) -> Instance:
        if name == "END":
            return Instance("END", {})
        return inst.instance(self.model, self.model.statement(name), values)


class _Flows:
    """The ISL inputs and answers of one function's dataflow, computed once.

    Every answer is computed on first use: the forward flow dependences
    (with ``live_in`` and ``live_out``) by :meth:`forward`, which also answer
    :meth:`flow_out_of`, the output and anti ones by :meth:`tagged`, and
    :meth:`output_from` with time reversed unless the full answer is at hand;
ISL failing in one (maybe long after the call that made them) raises ``IslFailure``.
    Time dimensions that hold one value for every event are dropped first
    (see :func:`analyses.flow_inputs.drop_constant_dims`).
    """

    def __init__(self, model: Model, buffers: frozenset[int] | None = None,
                 about: isl.UnionSet | None = None, inside: n.For | None = None) -> None:
        def kept(buffer: n.Buffer) -> bool:
            return buffers is None or id(buffer) in buffers

        def touches(s) -> bool:
            # Whole statements are left out, never parts of an access relation.
            return about is None or any(
                kept(a.buffer) and not about.intersect(
                    isl.UnionSet.from_set(a.relation.range())).is_empty()
                for a in s.accesses)

        self.model = model
        self.scopes = inst.allocation_scopes(model.func.body)
        # One run of ``inside`` holds its statements' instances and no other (nor END).
        region = model.statements if inside is None else under(model, inside)
        names = {s.name for s in region}
        local = {id(scope.buffer) for scope in self.scopes if all(
            s.name in names for s in model.statements[scope.first:scope.stop])}
        # The kills of allocations around (or beside) ``inside`` fall outside its runs.
        kills, kill_times = fi.allocation_kills(model, self.scopes, kept if inside is None
                                                else lambda b: kept(b) and id(b) in local)
        end_reads, end_time = (fi.end_reads(model, self.scopes, kept) if inside is None
                               else (fi.empty(), fi.empty()))
        # Where an assert fails the caller sees its buffers: a read like END's.
        end_reads = end_reads.union(fi.of_statements(
            fi.assert_reads(model, self.scopes, kept), names))
        statements = [s for s in region if touches(s)]
        # A T.assume's loads are reads (see the module docstring); it has no write.
        writes = [a for s in statements for a in s.accesses
                  if a.kind == "write" and kept(a.buffer)]
        reads = [a for s in statements for a in s.accesses
                 if a.kind == "read" and kept(a.buffer)]
        # The times of the statements with an access here: a time dimension
        # constant over these events orders none of them.
        depth = inst.depth_of(model)
        times = [inst.statement_time(s, depth) for s in statements
                 if any(kept(a.buffer) for a in s.accesses)]
        # No store moves across an assert: the asserts write a pseudo-location every
        # store reads (.assert_order), in the whole question only.
        whole = buffers is None and about is None
        o_must_w, o_may_w, o_reads, o_must_r = (
            (fi.of_statements(o, names) for o in order.order_accesses(model)) if whole
            else (fi.empty(),) * 4)
        # An assert reads the caller's buffers (and writes the pseudo-location) even
        # where its own accesses are none of these.
        times += [inst.statement_time(s, depth) for s in region if s.is_assert]
        self.must_w = fi.tag(fi.union(a.relation for a in writes if not a.may).union(o_must_w))
        self.may_w = fi.tag(fi.union(a.relation for a in writes if a.may).union(o_may_w))
        self.real_r = fi.tag(fi.union(a.relation for a in reads).union(o_reads))
        self.must_reads = fi.tag(fi.union(a.relation for a in reads if not a.may)
                                 .union(o_must_r)).domain()
        self.must_writes = self.must_w.domain()
        self.kill_t, self.end_t = fi.tag(kills), fi.tag(end_reads)
        every = fi.union(a.relation for s in statements for a in s.accesses if kept(a.buffer))
        every = every.union(kills).union(end_reads).union(o_reads).union(o_must_w)
        every = every.union(o_may_w)
        time = fi.drop_constant_dims(fi.union(times).union(kill_times).union(end_time))
        self.tagged_time = every.domain_map().apply_range(time)
        self._tagged: dict[str, isl.UnionMap] = {}
        self._forward: dict[str, isl.UnionMap] | None = None
        self._out_of: dict[frozenset[str], isl.UnionMap] = {}

    @raises_isl_failures("dependences")
    def forward(self) -> dict[str, isl.UnionMap]:
        """The flow dependences, tagged and not, with ``live_in`` and ``live_out``."""
        if self._forward is not None:
            return self._forward
        flow = self.compute(self.real_r.union(self.end_t), self.must_w, self.may_w,
                            self.kill_t)
        may_dep, must_dep = flow.may_dependence, flow.must_dependence
        end_tags = self.end_t.domain()
        self._tagged.update({
            "flow": may_dep.subtract_range(end_tags),
            "flow_must": must_dep.subtract_range(end_tags).intersect_range(self.must_reads),
            "live_out": may_dep.intersect_range(end_tags),
        })
        # Reads of a local buffer before any write see garbage, not an input; a store
        # before the first assert reads no buffer through the pseudo-location.
        no_source = fi.untag_domain(flow.may_no_source.subtract_domain(end_tags))
        no_source = fi.keep_maps(no_source, lambda m: not order.is_order(
            m.get_space().range().get_tuple_name(isl.dim_type.set)))
        live_in, unwritten = no_source, fi.empty()
        for scope in self.scopes:
            if scope.buffer in self.model.buffer_names:
                box = inst.buffer_box(self.model, scope.buffer)
                local = isl.UnionSet.from_set(isl.Set.universe(box.get_space()))
                live_in = live_in.subtract_range(local)
                unwritten = unwritten.union(no_source.intersect_range(local))
        self._forward = {
            "flow": fi.untag(self._tagged["flow"]),
            "flow_must_untagged": fi.untag(self._tagged["flow_must"]),
            "live_out_untagged":
                self._tagged["live_out"].domain_factor_domain().range_factor_range(),
            "live_in": live_in,
            "unwritten": unwritten,
        }
        return self._forward

    def compute(self, sink, must, may, kill) -> Flow:
        """The dataflow from ``must``/``may`` sources to ``sink``, through ``kill``."""
        return value_flow(sink, must, may, kill, self.tagged_time)

    @raises_isl_failures("dependences")
    def tagged(self, kind: str) -> isl.UnionMap:
        """The tagged dependences of ``kind`` (one of :data:`_KINDS`)."""
        if kind in ("flow", "flow_must", "live_out"):
            self.forward()
        if kind not in self._tagged:
            all_w = self.must_w.union(self.may_w)
            if kind == "output":
                flow = self.compute(all_w, self.must_w, self.may_w, self.kill_t)
            else:  # anti: every certain write kills the reads before it
                flow = self.compute(all_w, fi.empty(), self.real_r, self.kill_t.union(self.must_w))
            self._tagged[kind] = flow.may_dependence
        return self._tagged[kind]

    @raises_isl_failures("dependences")
    def flow_out_of(self, names: frozenset[str]) -> isl.UnionMap:
        """The tagged flow and live-out dependences from a statement in ``names`` to a read
        outside them (or ``END``).

        Exactly ``tagged("flow")`` and ``tagged("live_out")`` restricted to
        those pairs, from the forward answer (computed once, it serves the
        next question too).  With ISL's ``compute_flow`` these were computed
        with time reversed, the reads as may-sources of the few writes; with
        :func:`.value_flow` that costs more than the whole forward answer
        (``remove_no_op`` over 150 fuzz cases: 35 s against 18 s).
        """
        if names in self._out_of:
            return self._out_of[names]
        self.forward()
        flows = self._tagged["flow"].union(self._tagged["live_out"])
        out = fi.keep_maps(flows, lambda m: fi.statement_of(m.get_space().domain()) in names
                           and fi.statement_of(m.get_space().range()) not in names)
        self._out_of[names] = out
        return out

    @raises_isl_failures("dependences")
    def output_from(self, names: frozenset[str]) -> isl.UnionMap:
        """The tagged output dependences whose source is a statement in ``names``.

        Exactly ``tagged("output")`` restricted to those sources, computed
        with time reversed: the write that overwrites ``y`` first is the
        *last* write before ``y`` when time runs backwards, and a write (or
        kill) between the two cuts the pair off in either direction.  So the
        writes of ``names`` become the sinks, all writes the sources, and
        ISL looks at a handful of sinks instead of every write.
        """
        if "output" in self._tagged:
            return fi.from_statements(self._tagged["output"], names)
        ours = fi.from_statements(self.must_w.union(self.may_w), names)
        flipped = fi.negate_time(self.tagged_time)
        flow = value_flow(ours, self.must_w, self.may_w, self.kill_t, flipped)
        return flow.may_dependence.reverse()


@deep_entry
@bounded
def dependences(f: n.PrimFunc, *, inside: n.For | None = None) -> Dependences:
    """The :class:`Dependences` of ``f`` (see the module docstring); with ``inside``, of
    the statements under that loop of ``f`` (exact within one run of it only).

    Raises :class:`polypad.errors.NotAffineError` when a buffer index is not
    quasi-affine (the model cannot name the element).
    """
    if not isinstance(f, n.PrimFunc):
        raise TypeError(f"dependences takes a PrimFunc, not {type(f).__name__}")
    return Dependences(extract(f), inside=inside)
