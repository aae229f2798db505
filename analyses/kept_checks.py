"""Why removing an ``assert`` is never a no-op: it may raise.

An assert makes its condition a fact for what follows it (:mod:`polypad.ir.stated`),
but it is a check, not a promise: where the condition is false the call
raises, and without the assert it would go on.  So :func:`analyses.is_no_op`
never proves a statement that holds an assert.  For a plain assert
(:func:`polypad.ir.opaque.is_plain_check`) it looks for the values that make it
raise: a counterexample where the condition is false at an instance that runs
(after the facts of the statements before it); otherwise the answer is
``Unknown`` saying the assert is kept all the same.
"""

from __future__ import annotations

from polypad.errors import NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.opaque import first_check, is_plain_check
from polypad.ir.show import show
from polypad.ir.visitor import walk

from .context import context_at
from .evidence import Counterexample, Refuted, Unknown
from .prover import prove


def holds_check(stmt: n.Stmt) -> bool:
    """Whether ``stmt`` is or contains an ``assert``."""
    return first_check(stmt) is not None


def removing_a_check(f: n.PrimFunc, stmt: n.Stmt) -> Refuted | Unknown:
    """The answer of ``is_no_op(f, stmt)`` for a ``stmt`` that holds an assert."""
    if not any(x is stmt for x in walk(f.body)):
        raise NotFoundError(f"the statement is not in function {f.name}")
    kept = ("an assert is a check that may raise, and polypad never removes one "
            "(its condition is a fact only for what follows it)")
    if not isinstance(stmt, n.Assert):
        return Unknown(f"the statement holds an assert: {kept}")
    if not is_plain_check(stmt):
        return Unknown(f"`assert {show(stmt.condition)}` reads a buffer, a pointer or an "
                       f"opaque intrinsic; {kept}")
    try:
        decided = prove(stmt.condition, context_at(f, stmt))
    except PolypadError as err:  # the rest of the function cannot be modelled
        return Unknown(f"{kept}; whether it can fail is not known: {err}")
    if isinstance(decided, Refuted):
        cex = decided.counterexample
        return Refuted(Counterexample(
            f"`assert {show(stmt.condition)}` fails here and raises; removed, the call "
            f"would go on: {cex.description}",
            params=cex.params, values=cex.values))
    if isinstance(decided, Unknown):
        return Unknown(f"{kept}; whether it can fail is not known: {decided.reason}")
    return Unknown(f"its condition holds wherever it runs, but {kept}")
