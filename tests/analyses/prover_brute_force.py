"""Ground truth for the prover: run the function and look at every instance.

``violations(cond, f, stmt)`` executes ``f`` with the reference executor
(``codegen``'s interpreter) on random small inputs and, every time ``stmt``
is about to run, evaluates ``cond`` in the interpreter's state (loop
counters, lets, scalar parameters, current buffer contents).  It returns the
instances where ``cond`` is false: what ``prove`` must never call Proved.

Inputs are made consistent with the function's ``T.assume`` statements: the
executor checks each assumption when it runs; one that fails on an input
element it can repair (``... or A[i, j] == 0``, ``A[i] <= A[i + 1]``: set
that element so the comparison holds and start over) is repaired, and an
execution whose assumptions still fail (a scalar parameter outside an
assumed range), that a loop refuses (its range leaves its counter's
dtype), or that leaves a buffer (outside the kernel's precondition on its
parameters: the caller's contract rules such a call out), is discarded; if
every execution is, the check fails rather than pass vacuously.
``T.undef()`` evaluates to a fresh random value each time.  Input values
are small integers (also in float buffers), so float32 arithmetic on them
is exact and agrees with the prover's reals.
"""

from __future__ import annotations

import itertools

import numpy as np

from polypad.errors import BoundsCheckError, LoopRangeError
from polypad.ir import nodes as n
from polypad.semantics.interpreter import _Interpreter, convert
from polypad.semantics.values import numpy_dtype

VALUES = (-2, -1, 0, 1, 2)  # input values: small, and 0 often enough to meet assumptions
_MAX_REPAIRS = 64


class _Restart(Exception):
    def __init__(self, buffer, index, value):
        self.buffer, self.index, self.value = buffer, index, value


class _Inconsistent(Exception):
    pass


class _Probe(_Interpreter):
    """The reference executor, stopping by ``target`` to evaluate the claim."""

    def __init__(self, func, target, claim, where, rng, found):
        super().__init__(func)
        self.target, self.claim, self.where, self.rng = target, claim, where, rng
        self.found, self.written = found, set()

    def exec(self, stmt):
        if stmt is self.target:
            self.check()
        if (isinstance(stmt, n.Evaluate) and isinstance(stmt.value, n.Call)
                and stmt.value.op == "assume"):
            self.assume(stmt.value.args[0])
            return
        if isinstance(stmt, n.BufferStore):
            index = self.index(stmt.buffer, stmt.indices, "store to")
            self.written.add((stmt.buffer, index))
        super().exec(stmt)

    def call(self, expr):
        if expr.op == "undef":
            return convert(int(self.rng.integers(-3, 4)), expr.dtype)
        return super().call(expr)

    def check(self):
        if self.where is not None and not self.eval(self.where):
            return
        if not self.eval(self.claim):
            loops = {v.name: int(x) for v, x in self.env.items() if v.dtype.startswith("int")}
            self.found.append(loops)

    def assume(self, cond):
        if self.eval(cond):
            return
        for part in _disjuncts(cond):
            if not isinstance(part, (n.Eq, n.Le, n.Ge, n.Lt, n.Gt)):
                continue
            for load, other, left in ((part.a, part.b, True), (part.b, part.a, False)):
                if not isinstance(load, n.BufferLoad) or load.buffer not in self.func.params:
                    continue
                index = self.index(load.buffer, load.indices, "load of")
                if (load.buffer, index) not in self.written:
                    # Equal satisfies ==, <= and >=; one apart satisfies < and >.
                    step = {n.Lt: -1, n.Gt: 1}.get(type(part), 0) * (1 if left else -1)
                    raise _Restart(load.buffer, index, self.eval(other) + step)
        raise _Inconsistent


def _disjuncts(cond):
    if isinstance(cond, n.Or):
        return _disjuncts(cond.a) + _disjuncts(cond.b)
    return [cond]


def random_inputs(func: n.PrimFunc, scalars: dict, rng) -> list:
    """Arguments for ``func``: small random integers in every buffer, ``scalars`` by name."""
    args = []
    for p in func.params:
        if isinstance(p, n.Var):
            args.append(scalars[p.name])
            continue
        shape = tuple(scalars[s.name] if isinstance(s, n.Var) else s for s in p.shape)
        args.append(rng.choice(VALUES, size=shape).astype(numpy_dtype(p.dtype)))
    return args


def violations(cond: n.Expr, func: n.PrimFunc, stmt: n.Stmt, *, where: n.Expr | None = None,
               params: dict | None = None, samples: int = 6, seed: int = 0) -> list[dict]:
    """Instances (loop counters and scalars by name) where ``cond`` fails before ``stmt``.

    ``params`` maps each scalar parameter name to the values to try (default
    ``range(-1, 9)``); every combination runs ``samples`` random executions.
    """
    rng = np.random.default_rng(seed)
    names = [p.name for p in func.params if isinstance(p, n.Var)]
    ranges = [(params or {}).get(name, range(-1, 9)) for name in names]
    found: list[dict] = []
    consistent = 0
    for combo in itertools.product(*ranges):
        scalars = dict(zip(names, combo))
        for _ in range(samples):
            args = random_inputs(func, scalars, rng)
            consistent += _run(func, stmt, cond, where, args, rng, found)
    # A check that never ran would prove nothing.
    assert consistent, "brute force found no input satisfying the function's assumptions"
    return found


def _run(func, stmt, cond, where, args, rng, found) -> bool:
    for _ in range(_MAX_REPAIRS):
        seen: list[dict] = []
        arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            _Probe(func, stmt, cond, where, rng, seen).run(arrays)
        except _Restart as fix:
            position = next(k for k, p in enumerate(func.params) if p is fix.buffer)
            args[position][fix.index] = fix.value
            continue
        except (_Inconsistent, LoopRangeError, BoundsCheckError):
            # An assumption fails, a loop's range leaves its counter's dtype, or an access
            # leaves its buffer: not an input the function is defined for.
            return False
        found.extend(seen)
        return True
    return False


def holds_at(cond: n.Expr, values: dict) -> bool:
    """``cond`` evaluated by the reference executor with variables bound by ``values``.

    ``values`` maps IR variables to Python numbers (floats keep IEEE
    meaning: ``inf * 0.0`` is ``nan``).
    """
    probe = _Probe(n.PrimFunc("holds_at", (), n.SeqStmt(())), None, cond, None,
                   np.random.default_rng(0), [])
    probe.env = {var: convert(v, var.dtype) for var, v in values.items()}
    with np.errstate(all="ignore"):
        return bool(probe.eval(cond))


def assert_proved(cond: n.Expr, func: n.PrimFunc, stmt: n.Stmt, *, where: n.Expr | None = None,
                  params: dict | None = None, method: str | None = None, **options):
    """``prove`` says Proved at ``stmt`` (under ``where``), and brute force agrees.

    Returns the decision.  ``options`` go to ``prove`` (``strict_ieee``...).
    """
    from analyses import Proved, context_at, prove

    ctx = context_at(func, stmt)
    if where is not None:
        ctx = ctx.with_condition(where)
    decided = prove(cond, ctx, **options)
    assert isinstance(decided, Proved), decided
    if method is not None:
        assert decided.method == method, decided
    assert violations(cond, func, stmt, where=where, params=params) == []
    return decided
