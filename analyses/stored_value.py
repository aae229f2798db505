"""No-op rule 3: a store that writes the value already there.

``stores_existing_value(f, store)`` decides whether, at every instance of
``store``, the value it writes equals the content of the element it writes
to, just before it runs.  Two ways to know the content:

* the value *is* that element, read back unchanged (``A[i] = A[i]``, the
  read-then-write-back that RFC 0077 lists among RemoveNoOp's rules);
* the context at the store knows it: an assumption (``T.assume(B[0] == 0.0)``
  before ``B[0] = 0.0``), a value stored earlier and not overwritten since,
  or a condition on data, all through :func:`analyses.prove`.  An update
  ``B[i] = B[i] + d`` is first asked whether ``d`` is 0 there, a question
  that needs no fact about ``B[i]`` (the RFC's sums over padding).

A store of ``T.undef()`` writes an arbitrary value, not the one already
there; that such a store may be dropped is a separate rule (lowering
removes it, see docs/semantics.md), decided by the no-op analysis itself.

The same question, asked of a store while an element holds a known
constant, tells which writes *keep* a stored constant
(:func:`preserving_writes`): ``B[i] = B[i] + A[i - f] * F[f]`` stores back
the 0 it reads wherever ``A[i - f]`` is 0, so a ``B[i] = 0`` stored before
still holds after it there -- TVM's "partially proven buffer values".

>>> stores_existing_value(f, store)    # Proved('z3') for the RFC's sum example
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.visitor import Rewriter, walk
from polypad.model import set_to_condition

from .context import Context, context_at, context_of
from .evidence import Decision, Proved, Unknown
from .facts import FactInstance, Instantiator, ValueFact, _reads, has_undef
from .program import Program, Site
from .prover import DEFAULT_TIMEOUT_MS, proofs_only, prove_same_value


def stores_existing_value(f: n.PrimFunc, store: n.BufferStore, *, strict_ieee: bool = False,
                          timeout_ms: int = DEFAULT_TIMEOUT_MS,
                          zero_change_tried: bool = False) -> Decision:
    """Whether every instance of ``store`` writes the value its element already holds.

    Returns ``Proved``, ``Refuted`` with the instance, element, the value
    there and the value stored, or ``Unknown``.  With ``strict_ieee`` floats
    are IEEE values and "the same" is bit-level: storing ``B[0] + 0.0`` over
    ``-0.0`` changes memory.  ``zero_change_tried`` skips the first attempt for
    an update (:func:`adds_zero`) when the caller has made it already.

    >>> stores_existing_value(f, f.body.stmts[1])   # B[0] = 0.0 after T.assume(B[0] == 0.0)
    """
    if not isinstance(store, n.BufferStore):
        raise PolypadError(
            f"stores_existing_value needs a BufferStore, not {type(store).__name__} "
            f"({show(store).strip().splitlines()[0] if show(store).strip() else ''})")
    current = n.BufferLoad(store.buffer, store.indices)
    if store.value == current:
        return Proved("read-back", f"{show(store).strip()} writes back what it reads")
    ctx = context_at(f, store)

    def decide() -> Decision:
        return prove_same_value(store.value, current, ctx, strict_ieee=strict_ieee,
                                timeout_ms=timeout_ms)

    if strict_ieee or _change(store.value, current) is None:
        return prove_kept_constants_last(ctx, decide)
    # An update B[i] = B[i] + d: adds_zero is the attempt without kept constants (d == 0
    # is B[i] + d == B[i]), made here unless the caller made it.
    first = None if zero_change_tried else adds_zero(f, store, timeout_ms=timeout_ms)
    return first if first is not None else decide()


def adds_zero(f: n.PrimFunc, store: n.BufferStore, *,
              timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Proved | None:
    """``Proved`` when ``store`` is an update ``B[i] = B[i] + d`` (or ``d + B[i]``,
    ``B[i] - d``) whose ``d`` is 0 wherever it runs; ``None`` when it is no such
    update or that is not proved (which refutes nothing).

    ``B[i] + d`` is ``B[i]`` exactly where ``d`` is 0 (reals, and integers that
    wrap: x + 0 is x; not bit for bit in IEEE, where -0.0 + 0.0 is 0.0, so
    callers under ``strict_ieee`` do not ask).  The question reads no ``B[i]``,
    whose facts are often the dearest, so it is asked first, without kept
    constants (see ``prove_kept_constants_last``).
    """
    current = n.BufferLoad(store.buffer, store.indices)
    change = _change(store.value, current)
    if change is None:
        return None
    zero = n.FloatImm(0.0, change.dtype) if dtypes.is_float(change.dtype) else \
        n.IntImm(0, change.dtype)
    ctx = context_at(f, store)
    token = _PROVING.set(True)
    try:
        with proofs_only():
            first = prove_same_value(change, zero, ctx, timeout_ms=timeout_ms)
    finally:
        _PROVING.reset(token)
    return first if isinstance(first, Proved) else None


def _change(value: n.Expr, current: n.BufferLoad) -> n.Expr | None:
    """``d`` when ``value`` is ``current + d``, ``d + current`` or ``current - d``
    (integers or floats); else ``None``."""
    if not (dtypes.is_int(value.dtype) or dtypes.is_float(value.dtype)):
        return None
    match value:
        case n.Add(a=a, b=b) if a == current and b.dtype == value.dtype:
            return b
        case n.Add(a=a, b=b) if b == current and a.dtype == value.dtype:
            return a
        case n.Sub(a=a, b=b) if a == current and b.dtype == value.dtype:
            return b
    return None


# Set while a write is being proven to keep a constant: that proof does not itself
# use kept constants, which bounds the work (it would be sound, each proof relying
# only on writes strictly before the one it is about).
_PROVING = contextvars.ContextVar("polypad_proving_kept_constant", default=False)


def proving_kept_constant() -> bool:
    """Whether a proof that a write keeps a constant is under way (see above)."""
    return _PROVING.get()


def prove_kept_constants_last(ctx: Context, decide: Callable[[], Decision]) -> Decision:
    """``decide()`` (a proof at ``ctx``), tried first without kept constants.

    Kept constants (:func:`preserving_writes`) cost a proof per write, and
    most questions are settled without them.  A proof from fewer facts is
    still a proof, so a first ``Proved`` stands; anything else is asked
    again exactly as before, with every fact, so refutations and their
    counterexamples are unchanged.  Without a stored integer constant in
    reach there are no kept constants, and one attempt does.
    """
    if _PROVING.get() or not _may_keep_constants(ctx):
        return decide()
    token = _PROVING.set(True)
    try:
        with proofs_only():
            first = decide()
    finally:
        _PROVING.reset(token)
    return first if isinstance(first, Proved) else decide()


def _may_keep_constants(ctx: Context) -> bool:
    """Whether some fact at ``ctx`` is a stored constant that :func:`preserving_writes` takes."""
    instantiator = ctx._instantiator
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
        inv = prog.invalidated(fact.site, _reads(prog, fact.site, fact.loads), target, skip=skip)
        for t in facts._make_templates(fact, 0, pairs.subtract(inv).coalesce()):
            out += facts._instantiate(fact, 0, t, load, graph, domain)
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
    if _PROVING.get() or dtypes.is_float(fact.value.dtype):
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

    def decide() -> Decision:
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
                set_to_condition(where, site.loop_vars, program.names))
        except PolypadError as err:
            return Unknown(str(err))
        token = _PROVING.set(True)
        try:
            with proofs_only():  # only a proof counts here
                return prove_same_value(stored, value, ctx)
        finally:
            _PROVING.reset(token)

    # The question is about integers, whose meaning strict_ieee does not change, so
    # one answer serves both modes (one a time limit shaped is not kept: Program._memo).
    return isinstance(program._memo(key, decide), Proved)


class _Replace(Rewriter):
    """Replaces one load (exactly) by a value."""

    def __init__(self, load: n.BufferLoad, value: n.Expr) -> None:
        self.load, self.value = load, value

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.Expr:
        return self.value if node == self.load else self.generic_visit(node)
