"""Random arguments that honour a function's ``T.assume`` facts (and its plain asserts'
conditions on scalars, so that a run goes past them).

The reference executor checks every assumption at run time, so inputs drawn
at random must satisfy them: scalars are drawn until the assumptions on
scalars alone hold, and buffer elements an assumption pins (padding, as in
``T.assume(4 * io + ii < 14 or A[io, ii] == 0)``) are set to their value.
Inputs that still break an assumption are caught by the executor, which
raises :class:`~polypad.errors.AssumptionError`: a caller draws again.

``exact=True`` draws floats among the small integers (-4 to 4), on which
float32 sums and products of a small program are exact: a difference
between two programs run on them is then a difference over the reals too
(:mod:`.execution_refutation`).

>>> args = make_inputs(f, np.random.default_rng(0))
"""

from __future__ import annotations

import operator

from polypad.ir import nodes as ir
from polypad.ir.opaque import is_plain_check
from polypad.ir.visitor import walk

_BINARY = {
    ir.Add: operator.add, ir.Sub: operator.sub, ir.Mul: operator.mul,
    ir.FloorDiv: operator.floordiv, ir.FloorMod: operator.mod, ir.Min: min, ir.Max: max,
    ir.Eq: operator.eq, ir.Ne: operator.ne, ir.Lt: operator.lt, ir.Le: operator.le,
    ir.Gt: operator.gt, ir.Ge: operator.ge,
}


class _Opaque(Exception):
    """An expression the input helper does not evaluate (T.undef(), an internal buffer)."""


def _eval(e, env: dict, arrays: dict):
    """A tiny evaluator for the index predicates and pad values in assumptions."""
    match e:
        case ir.IntImm() | ir.FloatImm() | ir.BoolImm():
            return e.value
        case ir.Var():
            if e not in env:
                raise _Opaque(e)
            return env[e]
        case ir.Cast():
            return _eval(e.value, env, arrays)
        case ir.And():
            return bool(_eval(e.a, env, arrays)) and bool(_eval(e.b, env, arrays))
        case ir.Or():
            return bool(_eval(e.a, env, arrays)) or bool(_eval(e.b, env, arrays))
        case ir.Not():
            return not _eval(e.a, env, arrays)
        case ir.BufferLoad() if e.buffer in arrays:
            return arrays[e.buffer][tuple(int(_eval(i, env, arrays)) for i in e.indices)]
    if type(e) in _BINARY:
        return _BINARY[type(e)](_eval(e.a, env, arrays), _eval(e.b, env, arrays))
    raise _Opaque(e)


def _disjuncts(cond) -> list:
    return _disjuncts(cond.a) + _disjuncts(cond.b) if isinstance(cond, ir.Or) else [cond]


def _pad_fact(term, env):
    """``(load, value)`` when ``term`` is ``buffer[indices] == constant``, else None."""
    if isinstance(term, ir.Eq):
        for load, value in ((term.a, term.b), (term.b, term.a)):
            if isinstance(load, ir.BufferLoad):
                try:
                    return load, _eval(value, env, {})
                except _Opaque:
                    return None  # e.g. == T.undef(): any value will do
    return None


def _establish(cond, env: dict, arrays: dict) -> None:
    """Make ``T.assume(cond)`` true by storing the pad value it names, where it is false."""
    facts, others = [], []
    for term in _disjuncts(cond):
        fact = _pad_fact(term, env)
        (facts if fact is not None else others).append(fact or term)
    for term in others:
        try:
            if _eval(term, env, arrays):
                return
        except _Opaque:
            pass
    for load, value in facts[:1]:
        if load.buffer in arrays:
            index = tuple(int(_eval(i, env, arrays)) for i in load.indices)
            arrays[load.buffer][index] = value


def _has_assume(stmt) -> bool:
    return any(isinstance(n, ir.Call) and n.op == "assume" for n in walk(stmt))


def _satisfy(stmt, env: dict, arrays: dict) -> None:
    """Walk the loop nests that hold assumptions and establish each instance.

    Under a loop bound, a let or a condition the helper cannot evaluate (it
    reads a local buffer) nothing is established: the executor checks what
    runs there, and a caller draws again when an assumption fails.
    """
    try:
        _satisfy_in(stmt, env, arrays)
    except _Opaque:
        pass


def _satisfy_in(stmt, env: dict, arrays: dict) -> None:
    match stmt:
        case ir.SeqStmt():
            for s in stmt.stmts:
                if _has_assume(s):
                    _satisfy(s, env, arrays)
        case ir.Block() | ir.Allocate() | ir.DeclBuffer() | ir.AttrStmt():
            _satisfy(stmt.body, env, arrays)  # a view's declaration holds the rest
        case ir.For():
            lo = _eval(stmt.min, env, arrays)
            for v in range(lo, lo + _eval(stmt.extent, env, arrays)):
                _satisfy(stmt.body, {**env, stmt.var: v}, arrays)
        case ir.LetStmt():
            _satisfy(stmt.body, {**env, stmt.var: _eval(stmt.value, env, arrays)}, arrays)
        case ir.IfThenElse():
            branch = stmt.then_case if _eval(stmt.condition, env, arrays) else stmt.else_case
            if branch is not None:
                _satisfy(branch, env, arrays)
        case ir.Evaluate(value=ir.Call(op="assume")):
            _establish(stmt.value.args[0], env, arrays)


def _scalar_values(f: ir.PrimFunc, rng) -> dict:
    """Values for the scalar parameters that satisfy every assumption (and plain assert) on
    scalars alone."""
    scalars = [p for p in f.params if isinstance(p, ir.Var)]
    # A plain assert's condition too: a run that fails it stops there (it raises).
    stated = [n.args[0] for n in walk(f.body) if isinstance(n, ir.Call) and n.op == "assume"]
    stated += [n.condition for n in walk(f.body) if is_plain_check(n)]
    conds = [c for c in stated if not any(isinstance(m, ir.BufferLoad) for m in walk(c))]
    for _ in range(1000):
        env = {v: int(rng.integers(0, 17)) for v in scalars}
        try:
            if all(_eval(c, env, {}) for c in conds):
                return env
        except _Opaque:
            return env  # the assumption involves loop variables: not about scalars alone
    raise ValueError(f"no scalar values satisfy the assumptions of {f.name}")


def make_inputs(f: ir.PrimFunc, rng, *, exact: bool = False) -> list:
    """Random arguments for ``f``; padding that an assumption pins is set to its value.

    Raises :class:`ValueError` when no scalar values satisfy the assumptions on
    scalars alone (within 1000 draws)."""
    env = _scalar_values(f, rng)
    args, arrays = [], {}
    for p in f.params:
        if isinstance(p, ir.Var):
            args.append(env[p])
            continue
        shape = tuple(env[s] if isinstance(s, ir.Var) else s for s in p.shape)
        if p.dtype.startswith(("int", "uint")):
            a = rng.integers(-5, 6, size=shape).astype(p.dtype)
        elif exact:
            a = rng.integers(-4, 5, size=shape).astype(p.dtype)
        else:
            a = rng.standard_normal(shape).astype(p.dtype)
        arrays[p] = a
        args.append(a)
    if _has_assume(f.body):
        _satisfy(f.body, dict(env), arrays)
    return args
