"""Is a cross-thread reducer commutative and associative?  Z3 decides it.

A GPU combines the offers of its threads in the order of its tree (or its
warp shuffles), not in thread order, so a ``T.comm_reducer`` whose result
depends on that order has no one meaning.  :func:`reducer_laws` asks Z3, with
the combiner's parameters as free values (floats as reals: the fast-math view
the prover takes everywhere), whether ``f(a, b) == f(b, a)`` and
``f(f(a, b), c) == f(a, f(b, c))`` hold for all ``a``, ``b``, ``c``, and
answers :class:`Proved`, :class:`Refuted` with the values that break a law,
or :class:`Unknown` when Z3 gives no answer in time.  TVM's own reducers
(sum, product, min, max, the bit operations, and the two-value argmin and
argmax with their tie-break on the index) are all proved.
"""

from __future__ import annotations

import functools

import z3

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.substitute import substitute

from .evidence import Counterexample, Proved, Refuted, Unknown

#: Milliseconds Z3 may take for each law.
TIMEOUT_MS = 5000


#: One variable per (side, position, dtype), shared by every combiner's canonical form.
_CANONICAL: dict[tuple, n.Var] = {}


def reducer_laws(reducer: n.CommReducer) -> Proved | Refuted | Unknown:
    """Whether ``reducer`` is commutative and associative (see the module docstring).

    Remembered by the combiner's form with its parameters renamed (a block's
    combiner is read afresh, with new variables, at each build and ``bind``;
    one Z3 cannot decide costs its whole timeout each time); the values of a
    refutation are named by ``reducer``'s own parameters."""
    mapping = {v: _CANONICAL.setdefault((side, k, v.dtype), n.Var(f"{side}{k}", v.dtype))
               for side, params in (("x", reducer.lhs), ("y", reducer.rhs))
               for k, v in enumerate(params)}
    canonical = n.CommReducer(tuple(mapping[v] for v in reducer.lhs),
                              tuple(mapping[v] for v in reducer.rhs),
                              tuple(substitute(r, mapping) for r in reducer.results), ())
    decision = _laws(canonical)
    if not isinstance(decision, Refuted):
        return decision
    names = {mapping[v].name: v.name for v in (*reducer.lhs, *reducer.rhs)}
    cex = decision.counterexample
    values = {names[key.rsplit("_", 1)[0]] + "_" + key.rsplit("_", 1)[1]: value
              for key, value in cex.values.items()}
    return Refuted(Counterexample(cex.description, values=values))


@functools.lru_cache(maxsize=64)
def _laws(reducer: n.CommReducer) -> Proved | Refuted | Unknown:
    from polypad.model.z3conv import Z3Env, to_z3

    a, b, c = (tuple(n.Var(f"{v.name}_{tag}", v.dtype) for v in reducer.lhs)
               for tag in "abc")

    def combine(left, right):
        mapping = {**dict(zip(reducer.lhs, left)), **dict(zip(reducer.rhs, right))}
        return tuple(substitute(r, mapping) for r in reducer.results)

    laws = {
        "commutative": (combine(a, b), combine(b, a)),
        "associative": (combine(combine(a, b), c), combine(a, combine(b, c))),
    }
    for law, (lhs, rhs) in laws.items():
        env = Z3Env()
        solver = z3.Solver(ctx=env.ctx)
        solver.set("timeout", TIMEOUT_MS)
        differs = z3.Or([to_z3(x, env) != to_z3(y, env) for x, y in zip(lhs, rhs)])
        solver.add(*env.side)
        solver.add(differs)
        answer = solver.check()
        if answer == z3.sat:
            model = solver.model()
            values = {v.name: model.eval(env.vars[v], model_completion=True)
                      for v in (*a, *b, *c) if v in env.vars}
            return Refuted(Counterexample(f"the combiner is not {law}", values=values))
        if answer == z3.unknown:
            reason = solver.reason_unknown()
            return Unknown(f"Z3 did not decide whether the combiner is {law}: {reason}",
                           timed_out=reason in ("timeout", "canceled"))
    return Proved("z3")


def identity_law(reducer: n.CommReducer, values: tuple[n.Expr, ...]) -> bool:
    """Whether Z3 proves ``f(values, y) == y`` for every ``y``: ``values`` an identity of
    ``reducer`` (on the left; a commutative one is then one on both sides).  Floats are
    reals, as for the laws above: a sum's 0 is one, a max has none."""
    from polypad.model.z3conv import Z3Env, to_z3

    ys = tuple(n.Var(f"{v.name}_y", v.dtype) for v in reducer.rhs)
    mapping = {**dict(zip(reducer.lhs, values)), **dict(zip(reducer.rhs, ys))}
    env = Z3Env()
    solver = z3.Solver(ctx=env.ctx)
    solver.set("timeout", TIMEOUT_MS)
    differs = z3.Or([to_z3(substitute(r, mapping), env) != to_z3(y, env)
                     for r, y in zip(reducer.results, ys)])
    solver.add(*env.side)
    solver.add(differs)
    return solver.check() == z3.unsat


def require_reducer_laws(func_name: str, node: n.ThreadAllReduce) -> None:
    """Raise :class:`BuildError` unless the combiner of ``node``, a cross-thread reduction
    of the function ``func_name``, is proved commutative and associative: a refuted law
    with Z3's values, an undecided one saying so."""
    from polypad.semantics.lower_allreduce import at

    decision = reducer_laws(node.reducer)
    if isinstance(decision, Proved):
        return
    where = f"cannot build {func_name!r}: the cross-thread reduction{at(node)}"
    if isinstance(decision, Refuted):
        cex = decision.counterexample
        raise BuildError(f"{where} has a combiner that is not {cex.description.split()[-1]}"
                         f": its threads' offers would combine differently in another "
                         f"order ({cex})")
    raise BuildError(f"{where} has a combiner polypad could not prove commutative and "
                     f"associative: {decision.reason}")
