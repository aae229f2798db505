"""Turning a Z3 model into a counterexample that describes a real execution.

:mod:`analyses.prover` asks Z3 for a model of "the premises and not the
claim".  A model assigns values to the buffer elements the question reads,
but it is a real execution only if those values could be there
(:mod:`analyses.history`): an input, a ``T.undef()``, or the value a stored
fact gives.  An element last written with a value the prover does not track
(a running sum) is the hard case: the model still counts when the claim
fails *whatever that element holds*, given the premises -- ``D + 1.0 != D``
for every ``D`` -- and the element then shows as ``"any"``.  Elements the
premises determine from the fixed ones (``B[3, 3] = A[3, 3] + 1.0`` with
``A[3, 3] = 0``) show with their value.  Failing that, such an element's
value at one concrete point is traced write by write back to the inputs
(:mod:`.traced_values`), and a model of the premises with those values is a
real execution: a reduction's running sum is refuted with the inputs that
make it.
"""

from __future__ import annotations

import dataclasses
import time

import islpy as isl
import z3

from polypad import budget
from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import set_to_condition
from polypad.model.float_semantics import REALS, py_value

from .context import Context
from .evidence import Counterexample, Decision, Element, Instance, Refuted, Unknown
from .facts import loads_in
from .traced_values import (
    Untraceable,
    ValueTrace,
    all_parameters,
    constant_value,
    earliest,
    fix,
)

#: Input elements a traced counterexample shows with their values.
_SHOWN_INPUTS = 8
#: Further points of Z3's a traced refutation tries, after the first instances.
_MORE_POINTS = 3


class CounterexampleSearch:
    """Turns Z3 models into counterexamples, checking that they need no untracked value."""

    def __init__(self, goal, goal_term, ctx: Context, env, convert, facts,
                 held: list, timeout_ms: int):
        self.goal, self.goal_term, self.ctx = goal, goal_term, ctx
        self.env, self.convert, self.timeout_ms = env, convert, timeout_ms
        # Loads whose facts are all in the solver, and loads merely mentioned.
        self.seen, self.frontier = list(facts.seen), facts.frontier
        self.held = held  # the premises, in Z3: true of every execution reaching the point
        # One time slice for all the checks a refutation makes (several elements
        # may each need one), so that it costs at most one query's timeout.
        self._until = 0.0
        # The variables a traced value introduced (written values, not the program's).
        self._traced_vars: set[n.Var] = set()

    def refutation(self, model: z3.ModelRef) -> Decision:
        """``Refuted`` from ``model``, or ``Unknown`` when it may not be a real execution."""
        ctx, convert = self.ctx, self.convert
        self._until = time.monotonic() + self.timeout_ms / 1000

        def value(e: n.Expr):
            return py_value(model.eval(convert(e), model_completion=True))

        for op, args, _, at_points in self.env.applications:
            if not any(z3.is_true(model.eval(at, model_completion=True)) for at in at_points):
                shown = ", ".join(str(py_value(model.eval(a, model_completion=True)))
                                  for a in args)
                return Unknown(f"not proved, and the counterexample Z3 found needs {op}({shown}),"
                               f" a value the prover does not compute ({op} is uninterpreted)")
        lets = {let.var for let in (ctx.site.lets if ctx.site is not None else ())}
        free = [v for v in self.env.vars if v not in lets and v not in self._traced_vars]
        at_x = {v: value(v) for v in free if dtypes.is_int(v.dtype)}
        fixed, untracked = [], []
        traceable: list[tuple[n.BufferLoad, tuple]] | None = []
        for load in [*self.seen, *self.frontier]:
            element = tuple(value(i) for i in load.indices)
            if not all(isinstance(k, int) for k in element):
                untracked.append(show(load))
                traceable = None
                continue
            writers, state = ctx.history(load, at_x, element)
            instantiated = load in self.seen
            # Inputs and undef may hold anything; a stored value binds the
            # model only where its fact was instantiated.
            if state in ("input", "arbitrary") or (state == "pinned" and instantiated):
                fixed.append(load)
            elif state == "untracked" or not instantiated:
                text = (f"{load.buffer.name}[{', '.join(map(str, element))}] "
                        f"(last written by `{'` or `'.join(writers)}`)")
                if text not in untracked:
                    untracked.append(text)
                if traceable is not None:
                    traceable.append((load, element))
        if not untracked:
            return self._counterexample(value, free, set())
        pinned = self._pinned(model, fixed)
        if pinned is None or not self._fails_anyway(pinned):
            # Whatever the untracked elements hold is too much to ask: the values their
            # last writers left, at one point, may still refute.
            traced = self._traced(model, free, at_x, traceable) if traceable else None
            if traced is not None:
                return traced
            return Unknown("not proved, and the counterexample Z3 found needs the value of "
                           f"{', '.join(untracked)}, which the prover does not track")
        # The goal fails whatever the elements not fixed hold; those the premises
        # determine from the fixed ones (B[i] = A[i] + 1.0) are shown with their value.
        rest = [ld for ld in [*self.seen, *self.frontier] if ld not in fixed]
        anything = {ld for ld in rest if not self._forced(pinned, model, ld)}
        stored = self.goal.same[0] if self.goal.same is not None else None
        free_store = (stored is not None and any(ld in anything for ld in loads_in(stored))
                      and not self._forced(pinned, model, stored))
        return self._counterexample(value, free, anything, free_store)

    def _traced(self, model: z3.ModelRef, free: list[n.Var], at_x: dict,
                loads: list[tuple[n.BufferLoad, tuple]]) -> Refuted | None:
        """A counterexample at one point, where the elements the prover does not track
        (``loads``, at the model's point) hold the values their last writers left
        (:mod:`.traced_values`), or ``None``.

        At a fixed point (loop counters and parameters), each element the
        question reads is then an input, an arbitrary value, a stored fact's
        value, or a traced value defined by equations over the inputs: every
        model of the premises, those equations and the claim's negation is a
        real execution, so one is a counterexample.  Not tried where an
        assumption constrains buffer contents (the inputs the trace reaches
        would be constrained too) or a condition on data guards the point (it
        might not be reached).
        """
        ctx = self.ctx
        if (ctx.program is None or ctx.site is None or ctx.has_assumptions()
                or any(loads_in(p) for p in ctx.premises)):
            return None
        if self.env.floats.bit_precise:
            # Bit-precise float equations, one per write, take Z3 seconds: near a
            # question's timeout, where the answer would depend on the machine's load.
            return None
        params = {v: k for v, k in at_x.items() if v not in ctx.loop_vars}
        at = tuple(at_x[v] for v in ctx.loop_vars)
        by_name = {ctx.names.name(v): k for v, k in params.items() if v in ctx.names}
        # Every parameter gets a value, those the question does not mention too (which
        # writes ran depends on them): the model's where it has one, else one the
        # context allows.  The trace and the solver both use these.
        others = all_parameters(ctx.domain, by_name)
        if others is None:
            return None
        for name, value in others.items():
            var = ctx.names.lookup(name)
            # Only integers: a bool parameter (`if flag:`) is named in isl's space but
            # constrained by nothing there, and its isl value is no Z3 Bool; Z3 picks it.
            if isinstance(var, n.Var) and dtypes.is_int(var.dtype) and var not in params:
                params[var], by_name[name] = value, value
        # The first instance first: it follows the fewest writes, and a caller proving
        # that a statement changes what a later one reads needs the first instance
        # that changes anything (no_op._not_decisive).
        first = earliest(ctx.domain, by_name)
        # Else the first instance that reads the same elements as the model's point
        # (the first that overwrites a running sum's element, where the first of all
        # overwrites a padding zero with zero).
        same = ctx.domain
        for load, element in loads:
            reads, exact = ctx.program.access(ctx.site, load.buffer, load.indices)
            if exact:
                cell = fix(isl.Set.universe(reads.get_space().range()), element, by_name)
                same = same.intersect(reads.intersect_range(cell).domain())
        first_same = earliest(same, by_name)
        tried = list(dict.fromkeys(p for p in (first, first_same) if p is not None))
        for point in tried:
            found = self._traced_at(model, free, params, point)
            if found is not None:
                return found
        # Else a few of Z3's points among the instances that are the first to write
        # their element (where nothing the statement stored before is behind the value
        # it replaces), and last the model's own.
        firsts = self._first_writers(by_name)
        for _ in range(_MORE_POINTS if firsts is not None else 0):
            point = self._another_point(firsts, params, [*tried, at])
            if point is None:
                break
            tried.append(point)
            found = self._traced_at(model, free, params, point)
            if found is not None:
                return found
        return None if at in tried else self._traced_at(model, free, params, at)

    def _first_writers(self, params: dict[str, int]) -> z3.BoolRef | None:
        """The instances of the question's store that write their element first, as a
        condition on its loop counters in Z3 (None: not a store, or not exact)."""
        ctx = self.ctx
        store = ctx.site.stmt
        if not isinstance(store, n.BufferStore):
            return None
        writes, exact = ctx.program.access(ctx.site, store.buffer, store.indices)
        if not exact:
            return None
        try:
            firsts = fix(writes.intersect_domain(ctx.domain).reverse().lexmin().range(), (),
                         params)
            return self.convert(set_to_condition(firsts, ctx.loop_vars, ctx.names, exact=True))
        except (isl.Error, PolypadError) as err:
            rise_unless_expected(err, DIVISIONS_REFUSED)  # out of budget, ISL failing: rise
            return None

    def _another_point(self, firsts: z3.BoolRef, params: dict, tried: list
                       ) -> tuple[int, ...] | None:
        """Loop counters of a model of the premises and the claim's negation among
        ``firsts``, other than those ``tried``."""
        ctx, env = self.ctx, self.env
        xs = [self.convert(v) for v in ctx.loop_vars]
        left_ms = int((self._until - time.monotonic()) * 1000)
        if left_ms <= 0 or not xs:
            return None
        solver = _fresh_solver(env.ctx)
        solver.add(*self.held, z3.Not(self.goal_term), firsts)
        for var, k in params.items():
            solver.add(self.convert(var) == k)
        for point in tried:
            solver.add(z3.Or(*[x != k for x, k in zip(xs, point)]))
        solver.set("timeout", budget.remaining_ms(left_ms))
        verdict = solver.check()
        if verdict != z3.sat:
            if verdict == z3.unknown and solver.reason_unknown() in ("timeout", "canceled"):
                budget.note_time_limit()
            return None
        found = solver.model()
        return tuple(int(found.eval(x, model_completion=True).as_long()) for x in xs)

    def _traced_at(self, model: z3.ModelRef, free: list[n.Var], params: dict,
                   at: tuple[int, ...]) -> Refuted | None:
        """:meth:`_traced` at the loop counters ``at``: every element the question reads
        is told apart again there (an input at one point may be written by another)."""
        ctx, env, convert = self.ctx, self.env, self.convert
        pinned = {**params, **dict(zip(ctx.loop_vars, at))}
        known = dict(pinned)
        for let in ctx.site.lets:  # integer lets (a block's axes) name indices too
            if dtypes.is_int(let.var.dtype):
                value = _at_point(let.value, known)
                if value is not None:
                    known[let.var] = value
        trace = ValueTrace(ctx.program, params, ctx.site, at)
        pairs = []
        try:
            for load in [*self.seen, *self.frontier]:
                element = tuple(_at_point(i, known) for i in load.indices)
                if any(k is None for k in element):
                    return None
                _, state = ctx.history(load, pinned, element)
                if state in ("input", "arbitrary") or (
                        state in ("pinned", "tracked") and load in self.seen):
                    continue  # any value, or the value a fact in the premises gives
                pairs.append((load, trace.value_before(load.buffer, element)))
        except Untraceable:
            return None
        self._traced_vars.update(eq.a for eq in trace.equations)
        solver = _fresh_solver(env.ctx)
        solver.add(*self.held)
        for var, k in pinned.items():
            solver.add(convert(var) == k)
        # Definitions, not IEEE comparisons: `==` on Z3 floats is identity (-0.0 is not
        # 0.0, a NaN is itself), as each value is exactly what the program computes.
        for eq in trace.equations:
            solver.add(convert(eq.a) == convert(eq.b))
        for load, traced in pairs:
            solver.add(convert(load) == convert(traced))
        solver.add(z3.Not(self.goal_term))
        solver.add(*env.side)
        found = self._check_known_points(solver, env)
        if found is None:
            return None
        shown = [*free, *(v for v in params if v not in free)]  # every parameter pinned
        refuted = self._counterexample(
            lambda e: py_value(found.eval(convert(e), model_completion=True)), shown, set())
        reached = sorted(trace.inputs.values(), key=lambda ld: (
            ld.buffer.name, tuple(i.value for i in ld.indices)))[:_SHOWN_INPUTS]
        inputs = {f"input {show(ld)}": py_value(found.eval(convert(ld), model_completion=True))
                  for ld in reached}
        cex = refuted.counterexample
        return Refuted(dataclasses.replace(cex, values={**cex.values, **inputs}))

    def _check_known_points(self, solver: z3.Solver, env) -> z3.ModelRef | None:
        """A model of ``solver`` whose math intrinsics are all at points of known value
        (``exp(0) = 1``), or ``None``: within the refutation's time slice."""
        for attempt in range(2):
            left_ms = int((self._until - time.monotonic()) * 1000)
            if left_ms <= 0:
                budget.note_time_limit()
                return None
            solver.set("timeout", budget.remaining_ms(left_ms))
            verdict = solver.check()
            if verdict != z3.sat:
                if verdict == z3.unknown and solver.reason_unknown() in ("timeout", "canceled"):
                    budget.note_time_limit()
                return None
            found = solver.model()
            apps = env.applications
            if all(any(z3.is_true(found.eval(at, model_completion=True)) for at in points)
                   for *_, points in apps):
                return found
            if attempt or any(not points for *_, points in apps):
                return None
            solver.add(*[z3.Or(*points) for *_, points in apps])
        return None

    def _pinned(self, model: z3.ModelRef, fixed: list[n.BufferLoad]) -> z3.Solver | None:
        """A solver holding the premises, with the model's point and ``fixed`` elements.

        ``fixed`` are the inputs and the elements a stored constant gives;
        the other elements are left free, bound only by the premises (facts
        true of every real execution that reaches the point).  ``None`` when
        a condition on data around the point could make it unreachable for the
        real values: then nothing is claimed.
        """
        if any(loads_in(p) for p in self.ctx.premises):
            return None
        env, convert = self.env, self.convert
        solver = _fresh_solver(env.ctx)
        solver.add(*self.held)
        terms = [*env.vars.values(), *env.undefs]
        terms += [convert(ld) for ld in fixed]
        for t in terms:
            solver.add(t == model.eval(t, model_completion=True))
        return solver

    def _fails_anyway(self, pinned: z3.Solver) -> bool:
        """Whether the goal fails at the model's point whatever the free elements hold.

        Every real execution through the point with the fixed values
        satisfies the premises, so "premises and goal" unsatisfiable means
        the goal fails in each of them, and the model's inputs give one.
        """
        return self._unsat(pinned, self.goal_term)

    def _unsat(self, pinned: z3.Solver, term) -> bool:
        """Whether ``pinned`` with ``term`` is unsatisfiable, decided within the
        refutation's time slice (and the budget); ``False`` when it is not decided."""
        left_ms = int((self._until - time.monotonic()) * 1000)
        if left_ms <= 0:
            budget.note_time_limit()
            return False
        pinned.set("timeout", budget.remaining_ms(left_ms))
        pinned.push()
        try:
            pinned.add(term)
            verdict = pinned.check()
            if verdict == z3.unknown and pinned.reason_unknown() in ("timeout", "canceled"):
                budget.note_time_limit()
            return verdict == z3.unsat
        finally:
            pinned.pop()

    def _forced(self, pinned: z3.Solver, model: z3.ModelRef, expr: n.Expr) -> bool:
        """Whether the premises leave ``expr`` only the model's value, given the fixed ones."""
        term = self.convert(expr)
        # Undecided counts as not forced: the element then shows as "any",
        # which the goal failing whatever it holds already justifies.
        return self._unsat(pinned, z3.Not(term == model.eval(term, model_completion=True)))

    def _counterexample(self, value, free: list[n.Var], anything: set,
                        free_store: bool = False) -> Refuted:
        ctx, goal = self.ctx, self.goal
        indices = {v.name: value(v) for v in ctx.loop_vars}
        params, scalars = {}, {}
        for var in free:
            if var in ctx.loop_vars:
                continue
            (params if dtypes.is_int(var.dtype) else scalars)[var.name] = value(var)
        shown = loads_in(goal.same[1].equal(goal.same[0]) if goal.same else goal.cond)
        values: dict[str, object] = {}
        element = None
        for load in shown:
            coords = tuple(value(i) for i in load.indices)
            key = f"{load.buffer.name}[{', '.join(map(str, coords))}]"
            values[key] = "any" if load in anything else value(load)
            if element is None and load not in anything and all(
                    isinstance(k, int) for k in coords):
                element = Element(load.buffer.name, coords)
        values.update(scalars)
        if goal.same is not None:
            stored, target = goal.same
            values[f"stored {show(stored)}"] = "any" if free_store else value(stored)
            text = f"storing {show(stored)} changes {show(target)}"
        else:
            text = f"{show(goal.cond)} does not hold"
        return Refuted(Counterexample(
            text,
            instances=(Instance(ctx.label, indices),) if ctx.site is not None else (),
            element=element, params=params, values=values))


def _at_point(index: n.Expr, values: dict[n.Var, int]) -> int | None:
    """The value of integer ``index`` with its variables at ``values`` (None if not one)."""
    from polypad.ir.substitute import substitute

    value = constant_value(substitute(index, {v: n.IntImm(k, v.dtype)
                                              for v, k in values.items()}))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _fresh_solver(ctx: z3.Context) -> z3.Solver:
    # The prover's tactic for reals (FloatSemantics.solver), fast on small one-shot
    # queries; these checks are small whatever the floats mean.
    return REALS.solver(ctx)
