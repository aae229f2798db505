"""``prove(cond, context)``: does ``cond`` hold at every instance of a program point?

Two deciders, chosen by the question:

* an *index question* -- integers and booleans only, no buffer loads, no
  floats -- goes to ISL: ``cond`` becomes a set over the context's loop
  counters (scalar parameters as ISL parameters), and it is proved when the
  context's domain holds no point outside it.  Otherwise ISL's
  ``sample_point`` is the counterexample.  Nothing is enumerated, so
  extents of 10^9 cost what extents of 4 cost.
* a *value question* goes to Z3 (:func:`polypad.model.to_z3`): buffers are
  uninterpreted functions, floats are reals (or IEEE floats with
  ``strict_ieee=True``, see :mod:`analyses.ieee`), and the premises are the
  context's domain, its conditions on data and lets, and the buffer facts
  (assumptions, stored values) instantiated at the loads the question and
  its premises read (:mod:`analyses.facts`).  Every call has a timeout; a
  timeout is ``Unknown``.

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

import contextlib
import contextvars
import time

import islpy as isl
import z3

from polypad import budget
from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, BudgetExceeded, NotAffineError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.operators import as_expr
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model import Z3Env, to_set, to_z3
from polypad.model.overflow import set_ranges, wrapping_operation

from .budgeted import decider
from .context import Context
from .evidence import Counterexample, Decision, Instance, Proved, Refuted, Unknown
from .facts import has_undef, loads_in
from .ieee import IEEEEnv, same_value, to_z3_ieee
from .refutation import CounterexampleSearch

DEFAULT_TIMEOUT_MS = 2000
_ROUNDS = 3  # instantiation rounds: facts about the loads that facts mention
_LAZY_ROUNDS = 8  # further rounds, only while Z3 still finds a counterexample
_MAX_PREMISES = 100  # instantiated facts per question
_MAX_NODES = 400  # IR nodes per instantiated fact
_RETRIES = 4  # further counterexamples sought when one needs an untracked value
_NO_RETRIES = contextvars.ContextVar("polypad_first_counterexample_only", default=False)

# Set while the caller uses only a Proved answer (see proofs_only).
_PROOFS_ONLY = contextvars.ContextVar("polypad_proofs_only", default=False)


@contextlib.contextmanager
def proofs_only():
    """Within this, a Z3 question that is not proved is ``Unknown``, with no counterexample.

    For callers that act only on ``Proved`` (a first attempt with fewer
    facts, a lemma): the counterexample search, which checks each model
    against the history of every element it reads, is skipped.
    """
    token = _PROOFS_ONLY.set(True)
    try:
        yield
    finally:
        _PROOFS_ONLY.reset(token)


@contextlib.contextmanager
def first_counterexample_only():
    """Within this, a counterexample that needs an untracked value is not sought again
    at earlier instances: for callers with a cheaper way to refute (a run)."""
    token = _NO_RETRIES.set(True)
    try:
        yield
    finally:
        _NO_RETRIES.reset(token)


def seeking_proofs_only() -> bool:
    """Whether a :func:`proofs_only` block is in force (a refutation would be thrown away)."""
    return _PROOFS_ONLY.get()


@decider
def prove(cond, context: Context | None = None, *, strict_ieee: bool = False,
          timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Decision:
    """Decide whether ``cond`` holds everywhere in ``context``.

    Returns ``Proved(method)`` (``"isl"``, ``"z3"`` or ``"z3-ieee"``),
    ``Refuted(counterexample)`` naming the loop indices, parameters, buffer
    element and values, or ``Unknown(reason)``.  Without a context, free
    variables range over all integers (or reals) and buffers hold anything.

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
            budget.note_if_exhausted(err)
            decided, why_not_isl = None, f"isl failed ({err})"
        if decided is not None:
            return decided
    return _guarded(_Goal(cond), ctx, strict_ieee, timeout_ms, why_not_isl)


def _guarded(goal, ctx, strict, timeout_ms, why_not_isl) -> Decision:
    """:func:`_prove_z3`, with a failure inside ISL turned into ``Unknown``."""
    try:
        return _prove_z3(goal, ctx, strict, timeout_ms, why_not_isl)
    except isl.Error as err:
        budget.note_if_exhausted(err)
        return Unknown(f"isl failed while gathering facts: {err}")


@decider
def prove_same_value(value: n.Expr, load: n.Expr, context: Context, *,
                     strict_ieee: bool = False,
                     timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Decision:
    """Decide whether ``value`` equals what ``load`` reads, at every instance of ``context``.

    ``load`` is usually a ``BufferLoad``; any expression of a matching dtype
    works (two branches storing the same value).

    This is "the same value", not IEEE ``==``: with ``strict_ieee`` a store
    of ``0.0`` over ``-0.0`` changes memory, and NaN is the same as NaN.
    """
    return _guarded(_Goal(load.equal(value), same=(value, load)), context, strict_ieee,
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
        if wrapping_operation(cond, ctx.space, ctx.domain, var_ranges(ctx)) is not None:
            return False
        return ctx.domain.intersect(holds.complement()).is_empty()
    except (PolypadError, isl.Error) as err:
        budget.note_if_exhausted(err)
        return False


def _prove_isl(cond: n.Expr, ctx: Context) -> Decision | None:
    holds = to_set(cond, ctx.space)
    wrapping = wrapping_operation(cond, ctx.space, ctx.domain, var_ranges(ctx))
    if wrapping is not None:  # ISL's integers do not wrap: Z3 models the wrap-around
        raise NotAffineError(f"{show(wrapping)} may wrap around its {wrapping.dtype} range",
                             wrapping)
    bad = ctx.domain.intersect(holds.complement())
    if bad.is_empty():
        return Proved("isl")
    if ctx.premises:
        return None  # a premise ISL cannot read may exclude the point: let Z3 decide
    point = bad.sample_point()
    indices = {v.name: _coordinate(point, isl.dim_type.set, k)
               for k, v in enumerate(ctx.loop_vars)}
    params = {point.get_space().get_dim_name(isl.dim_type.param, k):
              _coordinate(point, isl.dim_type.param, k)
              for k in range(point.get_space().dim(isl.dim_type.param))}
    return Refuted(Counterexample(
        f"{show(cond)} does not hold",
        instances=(Instance(ctx.label, indices),) if ctx.site is not None else (),
        params=params))


def _coordinate(point: isl.Point, kind: isl.dim_type, k: int) -> int:
    return int(point.get_coordinate_val(kind, k).to_python())


# ---------------------------------------------------------------- Z3


class _Goal:
    """What Z3 must show: ``cond``, or that ``same = (value, load)`` are the same value."""

    def __init__(self, cond: n.Expr, same: tuple[n.Expr, n.BufferLoad] | None = None):
        self.cond, self.same = cond, same

    def term(self, convert, strict: bool) -> z3.BoolRef:
        if self.same is None:
            return convert(self.cond)
        value, load = self.same
        a, b = convert(value), convert(load)
        if strict:
            return same_value(a, b)
        if z3.is_int(a) != z3.is_int(b):
            a, b = z3.ToReal(a) if z3.is_int(a) else a, z3.ToReal(b) if z3.is_int(b) else b
        return a == b


def _prove_z3(goal: _Goal, ctx: Context, strict: bool, timeout_ms: int,
              why_not_isl: str) -> Decision:
    ranges = var_ranges(ctx)
    env = IEEEEnv(ranges) if strict else Z3Env(ranges)

    def convert(e: n.Expr) -> z3.ExprRef:
        return to_z3_ieee(e, env) if strict else to_z3(e, env)

    try:
        premises = [ctx.domain_condition(), *ctx.premises]
    except PolypadError as err:
        return Unknown(f"the context's domain has no IR form: {err}")
    facts = _Facts(ctx, goal.cond, premises)
    for _ in range(_ROUNDS):
        premises += facts.round()
    solver = _solver(env.ctx, strict)
    solver.set("timeout", budget.remaining_ms(timeout_ms))
    held: list[z3.BoolRef] = []  # the premises in Z3, for the counterexample search
    try:
        for p in premises:
            held.append(convert(p))
        solver.add(*held)
        goal_term = goal.term(convert, strict)
        solver.add(z3.Not(goal_term))
        verdict = _check(solver, env)
        # A counterexample may break a fact not instantiated yet: keep going
        # while there are loads left to instantiate (lazily, only on "sat").
        for _ in range(_LAZY_ROUNDS):
            if verdict != z3.sat or not facts.open():
                break
            budget.check()
            more = [convert(p) for p in facts.round()]
            held += more
            solver.add(*more)
            verdict = _check(solver, env)
    except BudgetExceeded:
        raise  # the outermost budgeted call answers for it
    except PolypadError as err:
        return Unknown(f"cannot state the question in Z3: {err}")
    if verdict == z3.unsat:
        return Proved("z3-ieee" if strict else "z3")
    if verdict == z3.unknown:
        why = solver.reason_unknown()
        reason = f"z3 gave up ({why}; timeout {timeout_ms} ms)"
        return Unknown(f"{why_not_isl}; {reason}" if why_not_isl else reason,
                       timed_out=why in _TIMED_OUT)
    if _PROOFS_ONLY.get():
        return Unknown("not proved (no counterexample sought)")
    if facts.partial or facts.open():
        why = facts.partial or f"instantiation stopped after {_ROUNDS + _LAZY_ROUNDS} rounds"
        return Unknown(f"not proved; Z3 found a counterexample to the facts instantiated, "
                       f"but {why}, so it may break one that was not")
    search = CounterexampleSearch(goal, goal_term, ctx, env, convert, facts, held,
                                  timeout_ms)
    decided = search.refutation(solver.model())
    if isinstance(decided, Unknown):
        # Compared with None: a Decision is truthy only when it is a proof.
        found = _at_known_points(solver, env, search, strict, timeout_ms)
        decided = decided if found is None else found
    xs = [convert(v) for v in ctx.loop_vars]
    for _ in range(_RETRIES if xs and not _NO_RETRIES.get() else 0):
        if not isinstance(decided, Unknown):
            break
        # The counterexample leans on a value the prover does not track;
        # earlier instances follow fewer writes, so look before it.
        at = [solver.model().eval(x, model_completion=True) for x in xs]
        solver.add(z3.Or(*[z3.And(*[xs[j] == at[j] for j in range(k)], xs[k] < at[k])
                           for k in range(len(xs))]))
        if timed_check(solver) != z3.sat:
            break
        decided = search.refutation(solver.model())
    return decided


#: The time the search at known points may take: a tenth of the query's timeout, at
#: most this many ms.  It only refutes, and an intrinsic's side facts can make Z3
#: slow (strict IEEE ``exp``); a refutation there, when one exists, comes fast.
_KNOWN_POINTS_MS = 200


def _at_known_points(solver: z3.Solver, env: Z3Env, search: CounterexampleSearch,
                     strict: bool, timeout_ms: int) -> Decision | None:
    """A refutation whose math intrinsics are all at points of known value, or ``None``.

    Z3 treats ``T.exp`` as an arbitrary function, so its model may need
    ``exp(7)``, a value nothing computed; with every argument at a known
    point (``exp(0) = 1``) the model is a real execution, if one exists.
    Asked only when the model at hand needs such a value, of a solver of its
    own (``solver`` keeps its model), within :data:`_KNOWN_POINTS_MS`.
    """
    apps = env.applications
    if not apps or any(not at_points for *_, at_points in apps):
        return None
    model = solver.model()
    if all(any(z3.is_true(model.eval(at, model_completion=True)) for at in at_points)
           for *_, at_points in apps):
        return None  # the model's values are known ones: not what made it Unknown
    pinned = _solver(env.ctx, strict)
    pinned.add(*solver.assertions())
    pinned.add(*[z3.Or(*at_points) for *_, at_points in apps])
    until = time.monotonic() + min(timeout_ms // 10, _KNOWN_POINTS_MS) / 1000
    if _check(pinned, env, until=until) != z3.sat:
        return None
    decided = search.refutation(pinned.model())
    return None if isinstance(decided, Unknown) else decided


def var_ranges(ctx: Context) -> dict:
    """The ranges of ``ctx``'s loop counters and parameters over its domain (memoized)."""
    ranges = getattr(ctx, "_var_ranges", None)
    if ranges is None:
        ranges = set_ranges(ctx.domain, ctx.loop_vars, ctx.names)
        ctx._var_ranges = ranges
    return ranges


class _Facts:
    """The buffer facts of a question, instantiated round by round.

    Round 1 instantiates the facts about the loads of the question and its
    premises; each later round those about the loads the previous round's
    facts mention.  ``frontier`` holds the loads still to instantiate and
    ``partial``, when set, why some facts were left out (a counterexample may
    break them; a proof without them still stands).
    """

    def __init__(self, ctx: Context, cond: n.Expr, premises: list) -> None:
        self.ctx = ctx
        self.seen: dict[n.BufferLoad, None] = {}
        self.known = set(premises)
        self.partial = ""
        self.frontier = loads_in(cond)
        for p in premises:
            self.frontier += loads_in(p)

    def round(self) -> list[n.Expr]:
        """The premises of one more round."""
        out: list[n.Expr] = []
        new: list[n.BufferLoad] = []
        for load in self.frontier:
            if load in self.seen:
                continue
            if len(self.known) >= _MAX_PREMISES:
                # Chains of facts can grow without bound (each element read
                # was written from two others...): stop; proofs stay sound.
                self.partial = "facts past the size limit were left out"
                break
            budget.check()
            self.seen[load] = None
            for fact in self.ctx.facts_for(load):
                if fact.partial:
                    self.partial = ("some fact instances were left out (an assumption "
                                    "relating several elements, or a chain of writes too "
                                    "deep to state)")
                if fact.premise in self.known:
                    continue
                if len(self.known) >= _MAX_PREMISES or not _small(fact.premise):
                    # Facts substituted into facts at non-affine indices grow
                    # without bound; leaving one out is safe for proofs.
                    self.partial = "facts past the size limit were left out"
                    continue
                self.known.add(fact.premise)
                out.append(fact.premise)
                new += loads_in(fact.premise)
        self.frontier = [ld for ld in dict.fromkeys(new) if ld not in self.seen]
        return out

    def open(self) -> bool:
        """Whether an assumption about a load not yet instantiated may break a counterexample.

        Stored values need no more rounds: each element has at most one that
        still holds, and they were stored in order, so values for the loads
        left over can always be chosen to satisfy them.
        """
        if not self.ctx.has_assumptions():
            return False
        return any(fact.fact.kind == "assume"
                   for load in self.frontier for fact in self.ctx.facts_for(load))



def _small(expr: n.Expr) -> bool:
    """Whether ``expr`` has at most ``_MAX_NODES`` nodes."""
    for count, _ in enumerate(walk(expr)):
        if count >= _MAX_NODES:
            return False
    return True


def _check(solver: z3.Solver, env: Z3Env, *, until: float | None = None
           ) -> z3.CheckSatResult:
    """``solver.check()``, adding the env's range facts only when a model breaks one.

    The facts ``-2**31 <= x < 2**31`` are true of every int32 symbol, so
    leaving them out only weakens the premises: "unsat" stays a proof.  But
    huge bounds slow Z3 down on questions with ``//`` and ``%``, so they are
    added lazily, when a model needs a value no int32 holds.  ``until`` (a
    ``time.monotonic()`` deadline) is one slice of time for all the checks:
    past it the answer is ``unknown``.
    """
    def check() -> z3.CheckSatResult:
        if until is not None:
            left_ms = int((until - time.monotonic()) * 1000)
            if left_ms <= 0:
                budget.note_time_limit()
                return z3.unknown
            solver.set("timeout", budget.remaining_ms(left_ms))
        return timed_check(solver)

    verdict = check()
    while verdict == z3.sat:
        model = solver.model()
        broken = [s for s in env.side
                  if not z3.is_true(model.eval(s, model_completion=True))]
        if not broken:
            break
        budget.check()
        solver.add(*broken)
        verdict = check()
    return verdict


#: Z3's reasons for "unknown" that mean its time ran out.
_TIMED_OUT = ("timeout", "canceled")


def timed_check(solver: z3.Solver) -> z3.CheckSatResult:
    """``solver.check()``; an "unknown" because its time ran out is noted with
    :func:`polypad.budget.note_time_limit` (the answer may depend on the time)."""
    verdict = solver.check()
    if verdict == z3.unknown and solver.reason_unknown() in _TIMED_OUT:
        budget.note_time_limit()
    return verdict


def _solver(ctx: z3.Context, strict: bool = False) -> z3.Solver:
    """A solver in ``ctx``, the context of the question's :class:`~polypad.model.Z3Env`."""
    if strict:
        # IEEE floats: "qffp" bit-blasts them up front (fpa2bv, then SAT, or the
        # SMT core where integers or functions remain).  The SMT core's lazy
        # float theory takes some ten times as long on a float32 product and
        # varies as much again from run to run (0.1 s to 1.8 s on one query),
        # which left strict questions near their timeout on a busy machine.
        return z3.Tactic("qffp", ctx).solver()
    # simplify + smt as a tactic: several times faster than z3.Solver() on the
    # small one-shot queries a prover asks (no incremental machinery to set up).
    return z3.Then("simplify", "smt", ctx=ctx).solver()


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
    for fact in context.facts_for(load):
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
