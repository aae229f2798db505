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
``A[3, 3] = 0``) show with their value.
"""

from __future__ import annotations

import time

import z3

from polypad import budget
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.show import show

from .context import Context
from .evidence import Counterexample, Decision, Element, Instance, Refuted, Unknown
from .facts import loads_in
from .ieee import py_value


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
        free = [v for v in self.env.vars if v not in lets]
        at_x = {v: value(v) for v in free if dtypes.is_int(v.dtype)}
        fixed, untracked = [], []
        for load in [*self.seen, *self.frontier]:
            element = tuple(value(i) for i in load.indices)
            if not all(isinstance(k, int) for k in element):
                untracked.append(show(load))
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
        if not untracked:
            return self._counterexample(value, free, set())
        pinned = self._pinned(model, fixed)
        if pinned is None or not self._fails_anyway(pinned):
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


def _fresh_solver(ctx: z3.Context) -> z3.Solver:
    # The prover's tactic (see analyses.prover._solver): fast on small one-shot queries.
    return z3.Then("simplify", "smt", ctx=ctx).solver()
