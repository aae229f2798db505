"""The Z3 half of the prover: a value question, its facts, and the search for a
counterexample that describes a real execution.

:func:`decide` states the question in Z3 (:func:`polypad.model.to_z3`, with
the floats of ``options.floats``): buffers are uninterpreted functions, and
the premises are the context's domain, its conditions on data and lets, and
the buffer facts (assumptions, stored values, and where the caller passes
them, stored constants later writes keep) instantiated at the loads the
question and its premises read (:mod:`analyses.facts`).  Every call has a
timeout; a timeout is ``Unknown``.

Facts are instantiated in rounds (facts about the loads that facts
mention), lazily continued while Z3 still finds a counterexample.  A
counterexample is reported only when it describes a real execution
(:mod:`analyses.refutation`); what the caller needs back -- proofs only, the
first counterexample only -- is said by its :class:`ProofOptions`.
:func:`analyses.prover.prove` is the front door.
"""

from __future__ import annotations

import time

import islpy as isl
import z3

from polypad import budget
from polypad.errors import BudgetExceeded, PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import Z3Env, to_z3
from polypad.model.float_semantics import FloatSemantics
from polypad.model.z3conv import to_z3_exact

from .context import Context
from .evidence import Decision, Proved, Unknown
from .facts import KeptConstants, loads_in
from .proof_options import ProofOptions
from .refutation import CounterexampleSearch

DEFAULT_TIMEOUT_MS = 2000
_ROUNDS = 3  # instantiation rounds: facts about the loads that facts mention
_LAZY_ROUNDS = 8  # further rounds, only while Z3 still finds a counterexample
_MAX_PREMISES = 100  # instantiated facts per question
_MAX_NODES = 400  # IR nodes per instantiated fact
_RETRIES = 4  # further counterexamples sought when one needs an untracked value


class Goal:
    """What Z3 must show: ``cond``, or that ``same = (value, load)`` are the same value."""

    def __init__(self, cond: n.Expr, same: tuple[n.Expr, n.BufferLoad] | None = None):
        self.cond, self.same = cond, same

    @classmethod
    def same_value(cls, value: n.Expr, load: n.Expr) -> Goal:
        """``value`` is the same value as what ``load`` reads (not IEEE ``==``)."""
        return cls(load.equal(value), same=(value, load))

    def term(self, convert, floats: FloatSemantics) -> z3.BoolRef:
        """The goal in Z3, its terms made by ``convert``."""
        if self.same is None:
            return convert(self.cond)
        value, load = self.same
        return floats.same_value(convert(value), convert(load))


def decide(goal: Goal, ctx: Context, options: ProofOptions, *, timeout_ms: int,
           why_not_isl: str = "", kept: KeptConstants | None = None) -> Decision:
    """Whether ``goal`` holds everywhere in ``ctx``, asked of Z3 under ``options``.

    ``kept`` adds the stored constants later writes keep to the facts
    (:mod:`.kept_constants`); ``why_not_isl`` is why ISL did not decide it,
    for an ``Unknown``.  ISL refusing a fact's set while facts are gathered (its
    known refusal of some maps with integer divisions) is ``Unknown``; ISL's
    operation limit is the budget's error, and any other ISL failure rises to
    the decider, which answers ``Unknown`` naming it and drops what it computed
    (:mod:`polypad.isl_failure`).
    """
    try:
        return _prove_z3(goal, ctx, options, timeout_ms, why_not_isl, kept)
    except isl.Error as err:
        rise_unless_expected(err, DIVISIONS_REFUSED)
        return Unknown(f"isl refused a fact's set: {err}")


def _prove_z3(goal: Goal, ctx: Context, options: ProofOptions, timeout_ms: int,
              why_not_isl: str, kept: KeptConstants | None) -> Decision:
    floats = options.floats
    env = Z3Env(ctx.var_ranges(), floats=floats)

    def convert(e: n.Expr) -> z3.ExprRef:
        return to_z3(e, env)

    try:
        domain = ctx.domain_condition()
    except PolypadError as err:
        return Unknown(f"the context's domain has no IR form: {err}")
    premises = [domain, *ctx.premises]
    facts = _Facts(ctx, goal.cond, premises, kept)
    for _ in range(_ROUNDS):
        premises += facts.round()
    solver = floats.solver(env.ctx)
    solver.set("timeout", budget.remaining_ms(timeout_ms))
    held: list[z3.BoolRef] = []  # the premises in Z3, for the counterexample search
    try:
        # The domain is ISL's, over the integers: ``i < n + 2`` holds at n = 2**31 - 2,
        # i = 2**31 - 1, where the wrapped sum would exclude a point the loop runs.
        held.append(to_z3_exact(domain, env))
        for p in premises[1:]:
            held.append(convert(p))
        solver.add(*held)
        goal_term = goal.term(convert, floats)
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
        return Proved(floats.method)
    if verdict == z3.unknown:
        why = solver.reason_unknown()
        reason = f"z3 gave up ({why}; timeout {timeout_ms} ms)"
        return Unknown(f"{why_not_isl}; {reason}" if why_not_isl else reason,
                       timed_out=why in _TIMED_OUT)
    if not options.counterexamples:
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
        found = _at_known_points(solver, env, search, floats, timeout_ms)
        decided = decided if found is None else found
    xs = [convert(v) for v in ctx.loop_vars]
    for _ in range(_RETRIES if xs and options.earlier_instances else 0):
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
                     floats: FloatSemantics, timeout_ms: int) -> Decision | None:
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
    pinned = floats.solver(env.ctx)
    pinned.add(*solver.assertions())
    pinned.add(*[z3.Or(*at_points) for *_, at_points in apps])
    until = time.monotonic() + min(timeout_ms // 10, _KNOWN_POINTS_MS) / 1000
    if _check(pinned, env, until=until) != z3.sat:
        return None
    decided = search.refutation(pinned.model())
    return None if isinstance(decided, Unknown) else decided


class _Facts:
    """The buffer facts of a question, instantiated round by round.

    Round 1 instantiates the facts about the loads of the question and its
    premises; each later round those about the loads the previous round's
    facts mention.  ``frontier`` holds the loads still to instantiate and
    ``partial``, when set, why some facts were left out (a counterexample may
    break them; a proof without them still stands).
    """

    def __init__(self, ctx: Context, cond: n.Expr, premises: list,
                 kept: KeptConstants | None) -> None:
        self.ctx, self.kept = ctx, kept
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
            for fact in self.ctx.facts_for(load, kept=self.kept):
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
                   for load in self.frontier
                   for fact in self.ctx.facts_for(load, kept=self.kept))


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
