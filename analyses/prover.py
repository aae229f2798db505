"""``prove(cond, context)``: does ``cond`` hold at every instance of a program point?

Two deciders, chosen by the question:

* an *index question* -- integers and booleans only, no buffer loads, no
  floats -- goes to ISL: ``cond`` becomes a set over the context's loop
  counters (scalar parameters as ISL parameters), and it is proved when the
  context's domain holds no point outside it.  Otherwise ISL's
  ``sample_point`` is the counterexample.  Nothing is enumerated, so
  extents of 10^9 cost what extents of 4 cost.
* a *value question* goes to Z3 (:mod:`analyses.z3_question`): buffers are
  uninterpreted functions, floats are reals (or IEEE floats with
  ``strict_ieee=True``: :mod:`polypad.model.float_semantics`), and the
  premises are the context's domain, its conditions on data and lets, and
  the buffer facts (assumptions, stored values, and the stored constants
  later writes keep, :mod:`analyses.kept_constants`) instantiated at the
  loads the question and its premises read (:mod:`analyses.facts`).  Every
  call has a timeout; a timeout is ``Unknown``.  What the caller needs back
  is said by a :class:`~analyses.proof_options.ProofOptions`.

An index question that is not quasi-affine (``i * j < 100``) also goes to
Z3, with integer variables; if Z3 cannot decide it the ``Unknown`` names the
expression.

Facts are instantiated in rounds (facts about the loads that facts
mention), lazily continued while Z3 still finds a counterexample.  A
counterexample is reported only when it describes a real execution: every
element it reads holds an input, ``T.undef()``, or a value a stored fact
gives (:mod:`analyses.history`), and no assumption instance was left out.
When it needs an element an earlier statement wrote with a value the prover
does not track (``B[i] = B[i] + A[i, j]``), it still counts if the claim
fails whatever that element holds, given the premises (the element shows as
``"any"``; :mod:`analyses.refutation`); otherwise the answer is ``Unknown``
saying why.

>>> prove(n // 8 == 0, context_at(f, store))        # Proved('isl') under T.assume(0 <= n < 8)
>>> prove(x * 0.0 == 0.0, strict_ieee=True)         # Refuted: x = inf
"""

from __future__ import annotations

import islpy as isl

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, NotAffineError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.operators import as_expr
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import to_set
from polypad.model.isl_helpers import coordinate
from polypad.model.overflow import wrapping_operation

from .budgeted import decider
from .context import Context
from .evidence import Counterexample, Decision, Instance, Proved, Refuted
from .facts import has_undef, loads_in
from .kept_constants import kept_constant_facts
from .proof_options import ProofOptions
from .z3_question import DEFAULT_TIMEOUT_MS, Goal, decide

__all__ = ["DEFAULT_TIMEOUT_MS", "is_index_question", "known_value", "prove",
           "prove_same_value", "proved_by_isl"]


@decider
def prove(cond, context: Context | None = None, *, strict_ieee: bool = False,
          timeout_ms: int = DEFAULT_TIMEOUT_MS, options: ProofOptions | None = None) -> Decision:
    """Decide whether ``cond`` holds everywhere in ``context``.

    Returns ``Proved(method)`` (``"isl"``, ``"z3"`` or ``"z3-ieee"``),
    ``Refuted(counterexample)`` naming the loop indices, parameters, buffer
    element and values, or ``Unknown(reason)``.  Without a context, free
    variables range over all integers (or reals) and buffers hold anything.
    ``options`` (:class:`~analyses.proof_options.ProofOptions`) are for deciders
    that ask on behalf of a caller: what floats mean and what the caller needs
    back; ``strict_ieee=True`` is ``options`` with IEEE floats.

    >>> prove(4 * i + j < 14 or (i == 3 and j >= 2), context_at(f, store))  # Proved('isl')
    """
    expect(cond, (n.Expr, bool), "cond", "prove", what="a condition (a boolean Expr or a bool)")
    expect(context, (Context, None), "context", "prove",
           what="a Context (from analyses.context_at) or None")
    expect(timeout_ms, int, "timeout_ms", "prove")
    ctx = context if context is not None else Context.empty()
    cond = as_expr(cond)
    if not dtypes.is_bool(cond.dtype):
        raise ArgumentTypeError(f"prove: parameter cond needs a condition, not {show(cond)} of "
                                f"dtype {cond.dtype}")
    why_not_isl = ""
    if is_index_question(cond):
        try:
            decided = _prove_isl(cond, ctx)
        except NotAffineError as err:
            decided, why_not_isl = None, str(err)
        except isl.Error as err:
            # Only ISL's known refusal goes on to Z3; its operation limit is the
            # budget's, and any other failure drops the question (isl_failure).
            rise_unless_expected(err, DIVISIONS_REFUSED)
            decided, why_not_isl = None, f"isl refused it ({err})"
        if decided is not None:
            return decided
    return _in_z3(Goal(cond), ctx, ProofOptions.of(strict_ieee, options), timeout_ms,
                  why_not_isl)


def _in_z3(goal: Goal, ctx: Context, options: ProofOptions, timeout_ms: int,
           why_not_isl: str) -> Decision:
    """The question asked of Z3, with the stored constants later writes keep among the
    facts unless ``options`` leave them out."""
    kept = kept_constant_facts if options.kept_constants else None
    return decide(goal, ctx, options, timeout_ms=timeout_ms, why_not_isl=why_not_isl,
                  kept=kept)


@decider
def prove_same_value(value: n.Expr, load: n.Expr, context: Context, *,
                     strict_ieee: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                     options: ProofOptions | None = None) -> Decision:
    """Decide whether ``value`` equals what ``load`` reads, at every instance of ``context``.

    ``load`` is usually a ``BufferLoad``; any expression of a matching dtype
    works (two branches storing the same value).

    This is "the same value", not IEEE ``==``: with ``strict_ieee`` a store
    of ``0.0`` over ``-0.0`` changes memory, and NaN is the same as NaN.
    """
    return _in_z3(Goal.same_value(value, load), context, ProofOptions.of(strict_ieee, options),
                  timeout_ms, "")


def is_index_question(cond: n.Expr) -> bool:
    """True when ``cond`` involves only integers and booleans: no loads, floats or undef."""
    for node in walk(cond):
        if isinstance(node, n.BufferLoad):
            return False
        if isinstance(node, n.Call) and node.op != "likely":
            return False
        if isinstance(node, n.Expr) and dtypes.is_float(node.dtype):
            return False
    return True


# ---------------------------------------------------------------- ISL


def proved_by_isl(cond: n.Expr, ctx: Context) -> bool:
    """Whether ISL alone proves the index question ``cond`` everywhere in ``ctx``.

    ``False`` says nothing: not an index question, not quasi-affine, an
    operation that may wrap around its integer range, or a point of the
    domain where ``cond`` fails (the premises, which ISL cannot read, might
    exclude it).  For callers that try the cheap proof before :func:`prove`.
    """
    if not is_index_question(cond):
        return False
    try:
        holds = to_set(cond, ctx.space)
        if wrapping_operation(cond, ctx.space, ctx.domain, ctx.var_ranges()) is not None:
            return False
        return ctx.domain.intersect(holds.complement()).is_empty()
    except (PolypadError, isl.Error) as err:
        rise_unless_expected(err, DIVISIONS_REFUSED)
        return False


def _prove_isl(cond: n.Expr, ctx: Context) -> Decision | None:
    holds = to_set(cond, ctx.space)
    wrapping = wrapping_operation(cond, ctx.space, ctx.domain, ctx.var_ranges())
    if wrapping is not None:  # ISL's integers do not wrap: Z3 models the wrap-around
        raise NotAffineError(f"{show(wrapping)} may wrap around its {wrapping.dtype} range",
                             wrapping)
    bad = ctx.domain.intersect(holds.complement())
    if bad.is_empty():
        return Proved("isl")
    if ctx.premises:
        return None  # a premise ISL cannot read may exclude the point: let Z3 decide
    point = bad.sample_point()
    indices = {v.name: coordinate(point, isl.dim_type.set, k)
               for k, v in enumerate(ctx.loop_vars)}
    params = {point.get_space().get_dim_name(isl.dim_type.param, k):
              coordinate(point, isl.dim_type.param, k)
              for k in range(point.get_space().dim(isl.dim_type.param))}
    return Refuted(Counterexample(
        f"{show(cond)} does not hold",
        instances=(Instance(ctx.label, indices),) if ctx.site is not None else (),
        params=params))


def known_value(load: n.BufferLoad, context: Context, *,
                max_size: int | None = None) -> n.Expr | None:
    """A value proven equal to ``load`` at ``context`` (from assumptions or stores), or None.

    With ``max_size``, only constants and candidates of at most that many
    nodes are tried: a caller that would not use a bigger value does not pay
    for its proof (a stored 10,000-term sum).

    Candidates come from the facts about the element, then from equalities in
    the conditions on data around the point (``if A[0] == n:`` offers ``n``,
    only values that read no buffer: ``if A[0] == B[0]`` would offer each
    load for the other, and a second simplify would swap them back).  Each
    is only a guess until :func:`prove` shows it.

    >>> known_value(B[0], context_at(f, store))     # FloatImm(0.0)
    """
    expect(load, n.BufferLoad, "load", "known_value")
    expect(context, Context, "context", "known_value")
    for candidate in _candidates(load, context):
        if max_size is not None and _bigger_than(candidate, max_size):
            continue
        if prove(load.equal(candidate), context):
            return candidate
    return None


def _bigger_than(e: n.Expr, limit: int) -> bool:
    """Whether ``e`` is not a constant and has more than ``limit`` nodes (counted up to
    the first one past the limit)."""
    if isinstance(e, (n.IntImm, n.FloatImm, n.BoolImm)):
        return False
    return any(k >= limit for k, _ in enumerate(walk(e)))


def _candidates(load: n.BufferLoad, context: Context):
    seen: set = {load}
    for fact in context.facts_for(load, kept=kept_constant_facts):
        if fact.candidate is not None and fact.candidate not in seen:
            seen.add(fact.candidate)
            yield fact.candidate
    for cond in (*context.premises, *context.conditions):
        for node in walk(cond):
            if not isinstance(node, n.Eq):
                continue
            for a, b in ((node.a, node.b), (node.b, node.a)):
                if a == load and b not in seen and not has_undef(b) and not loads_in(b):
                    seen.add(b)
                    yield b
