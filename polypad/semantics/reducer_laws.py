"""A cross-thread reducer must be commutative and associative: Z3 decides it.

A GPU combines the offers of its threads in the order of its tree (or its
warp shuffles), not in thread order, so a ``T.comm_reducer`` whose result
depends on that order has no one meaning.  :func:`check_reducer` asks Z3, with
the combiner's parameters as free values (floats as reals: the fast-math view
the prover takes everywhere), whether ``f(a, b) == f(b, a)`` and
``f(f(a, b), c) == f(a, f(b, c))`` hold for all ``a``, ``b``, ``c``; a
counterexample, or no answer in time, refuses the build with a
:class:`~polypad.errors.BuildError` that says which law and gives the values.
TVM's own reducers (sum, product, min, max, the bit operations, and the
two-value argmin and argmax with their tie-break on the index) all pass.
"""

from __future__ import annotations

import functools

import z3

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.substitute import substitute

#: Milliseconds Z3 may take for each law.
TIMEOUT_MS = 5000


def check_reducer(reducer: n.CommReducer, *, where: str) -> None:
    """Raise :class:`BuildError` unless ``reducer`` is commutative and associative."""
    why = _broken_law(reducer)
    if why is not None:
        raise BuildError(f"{where} has a combiner that is not {why}: its threads' "
                         "offers would combine differently in another order")


@functools.lru_cache(maxsize=64)
def _broken_law(reducer: n.CommReducer) -> str | None:
    from polypad.model.z3conv import Z3Env, to_z3

    triples = [tuple(n.Var(f"{v.name}_{tag}", v.dtype) for v in reducer.lhs)
               for tag in "abc"]
    a, b, c = triples

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
            values = ", ".join(f"{k}={model.eval(t, model_completion=True)}"
                               for k, t in sorted((str(d), d()) for d in model.decls()))
            return f"{law} (for {values})"
        if answer == z3.unknown:
            return f"proved {law} (Z3: {solver.reason_unknown()})"
    return None

