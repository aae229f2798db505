"""Stored constants that later writes keep: TVM's "partially proven buffer values".

``B[i] = 0`` followed by ``B[i] = B[i] + A[i - f] * F[f]`` leaves 0
wherever ``A[i - f]`` is 0: the update stores back the 0 it reads there.
:func:`kept_constant_facts` finds such constants at a load, for the prover
(:func:`analyses.prover.prove` passes it to the facts as ``kept``), once
:func:`preserving_writes` has proven each write in between keeps the
constant -- a proof of its own, in the writer's context, that uses no kept
constant itself.  :func:`prove_kept_constants_last` tries a question without
them first, as most are settled without.
"""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.visitor import Rewriter, walk
from polypad.model import set_to_condition

from . import z3_question
from .budgeted import decider
from .context import Context, context_of
from .evidence import Decision, Proved, Unknown
from .facts import FactInstance, Instantiator, ValueFact, has_undef, reads_of
from .program import Program, Site
from .proof_options import DEFAULT, ProofOptions


def prove_kept_constants_last(ctx: Context, options: ProofOptions,
                              decide: Callable[[ProofOptions], Decision]) -> Decision:
    """``decide(options)`` (a proof at ``ctx``), tried first without kept constants.

    Kept constants (:func:`preserving_writes`) cost a proof per write, and
    most questions are settled without them.  A proof from fewer facts is
    still a proof, so a first ``Proved`` stands; anything else is asked
    again exactly as before, with every fact, so refutations and their
    counterexamples are unchanged.  Without a stored integer constant in
    reach there are no kept constants, and one attempt does.
    """
    if not options.kept_constants or not _may_keep_constants(ctx):
        return decide(options)
    first = decide(options.without_kept_constants())
    return first if isinstance(first, Proved) else decide(options)


def _may_keep_constants(ctx: Context) -> bool:
    """Whether some fact at ``ctx`` is a stored constant that :func:`preserving_writes` takes."""
    instantiator = ctx.instantiator
    if instantiator is None:
        return False
    return any(fact.kind == "stored" and not fact.guards
               and isinstance(fact.value, (n.IntImm, n.BoolImm))
               for fact in instantiator.facts())


def kept_constant_facts(facts: Instantiator, load: n.BufferLoad, graph: isl.Map | None,
                        domain: isl.Set | None) -> list[FactInstance]:
    """Stored constants that still hold at ``load`` because the writes since kept them.

    ``B[i] = 0`` followed by ``B[i] = B[i] + A[i - f] * F[f]`` leaves 0
    wherever ``A[i - f]`` is 0 (:func:`preserving_writes`).  Only the
    elements ``load`` reads in ``domain`` (the question's context, at the
    target of ``facts``) are considered.
    """
    if graph is None or domain is None:
        return []
    prog, target = facts.program, facts.target
    reads, exact = prog.access(target, load.buffer, load.indices)
    if not exact:
        return []
    elements = reads.intersect_domain(domain).range()
    out = []
    for fact in facts.facts():
        if (fact.kind != "stored" or fact.guards or fact.loads[0].buffer is not load.buffer
                or not isinstance(fact.value, (n.IntImm, n.BoolImm))):
            continue
        skip = preserving_writes(prog, fact, target, elements)
        if not skip:
            continue
        pairs = prog.before(fact.site, target).intersect_domain(fact.domain)
        inv = prog.invalidated(fact.site, reads_of(prog, fact.site, fact.loads), target,
                               skip=skip)
        for t in facts.make_templates(fact, 0, pairs.subtract(inv).coalesce()):
            out += facts.instantiate(fact, 0, t, load, graph, domain)
    return out


def preserving_writes(program: Program, fact: ValueFact, target: Site,
                      elements: isl.Set) -> dict[int, isl.Set] | None:
    """The writes after ``fact`` and before ``target`` that keep its constant in ``elements``.

    ``fact`` is a stored integer or boolean constant (``B[w] = c``).  Considered are the
    instances of every writer of ``B`` that write an element of
    ``elements`` after some instance of ``fact`` and before some instance of
    ``target``.  Each must be a store that writes ``c`` back whenever its
    element holds ``c``: proven with the element's load replaced by ``c``,
    in the writer's own context.  By induction over those writes in program
    order, an element that held ``c`` still holds it at ``target``.

    Returns the instances to disregard, by writer site index, or ``None``
    when a write might change the constant or when no write needed a proof
    (the stored values already say all there is).
    """
    if dtypes.is_float(fact.value.dtype):
        # Floats: over the reals `0.0 + A[k] * F[f]` keeps 0.0 where A[k] is 0, but
        # not bit for bit (F[f] may be inf), and strict IEEE questions use these
        # facts too; proving them in IEEE arithmetic costs seconds per write.
        return None
    value = fact.value
    skip: dict[int, isl.Set] = {}
    proved = False
    for w_site, _, w_rel in program.writers(fact.loads[0].buffer):
        written = w_rel.intersect_range(elements).domain()
        written = written.intersect(program.before(fact.site, w_site)
                                    .intersect_domain(fact.domain).range())
        written = written.intersect(program.before(w_site, target).domain()).coalesce()
        if written.is_empty():
            continue
        store = w_site.stmt
        if not isinstance(store, n.BufferStore):
            return None  # an allocation: the element may hold anything
        if w_site is not fact.site and store.value != value:
            if not _keeps(program, w_site, written, value):
                return None
            proved = True
        skip[w_site.index] = written
    # Without a write proven to keep the constant, the stored facts already say it all.
    return skip if proved else None


def _keeps(program: Program, site: Site, where: isl.Set, value: n.Expr) -> bool:
    """Whether store ``site`` writes ``value`` back at ``where`` when its element holds it."""
    key = ("keeps", site.index, str(where), value)

    def keeps() -> Decision:
        store = site.stmt
        if has_undef(store.value):
            return Unknown("the store writes T.undef()")
        if any(isinstance(x, n.Expr) and dtypes.is_float(x.dtype) for x in walk(store.value)):
            # Proved over the reals, the fact would serve strict IEEE questions too.
            return Unknown("the store computes with floats, whose meaning strict_ieee changes")
        current = n.BufferLoad(store.buffer, store.indices)
        stored = _Replace(current, value).visit(store.value)
        try:
            ctx = context_of(program, site).with_condition(
                set_to_condition(where, site.loop_vars, program.names, exact=True))
        except PolypadError as err:
            return Unknown(str(err))
        return _lemma(stored, value, ctx)  # only a proof counts here

    # The question is about integers, whose meaning strict_ieee does not change, so
    # one answer serves both modes (one a time limit shaped is not kept: Program.memo).
    return isinstance(program.memo(key, keeps), Proved)


@decider
def _lemma(value: n.Expr, load: n.Expr, context: Context) -> Decision:
    """Whether ``value`` is the same as ``load`` at ``context``, over the reals: a proof
    that uses no kept constant and seeks no counterexample."""
    return z3_question.decide(z3_question.Goal.same_value(value, load), context, _LEMMA,
                              timeout_ms=z3_question.DEFAULT_TIMEOUT_MS)


#: How a write is proven to keep a constant: that proof does not itself use kept
#: constants, which bounds the work (it would be sound, each proof relying only on
#: writes strictly before the one it is about), and only a proof counts.
_LEMMA = DEFAULT.without_kept_constants()


class _Replace(Rewriter):
    """Replaces one load (exactly) by a value."""

    def __init__(self, load: n.BufferLoad, value: n.Expr) -> None:
        self.load, self.value = load, value

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.Expr:
        return self.value if node == self.load else self.generic_visit(node)
