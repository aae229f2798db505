"""Before a build: every cross-thread reduction's combiner is commutative and associative.

The lowering (:mod:`polypad.semantics.lower_allreduce`) combines the threads'
offers in a tree, as a GPU does; that has one meaning only for a combiner
whose result does not depend on the order, which
:func:`analyses.reducer_laws.reducer_laws` decides with Z3.  A refuted law
is a :class:`~polypad.errors.BuildError` naming the reduction's place and
giving Z3's values; an undecided one is refused too, saying so.
"""

from __future__ import annotations

from analyses.evidence import Proved, Refuted
from analyses.reducer_laws import reducer_laws
from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.semantics.lower_allreduce import at


def check_reducers(func: n.PrimFunc) -> None:
    """Raise :class:`BuildError` unless every ``ThreadAllReduce`` of ``func`` has a
    combiner proved commutative and associative."""
    for node in walk(func.body):
        if not isinstance(node, n.ThreadAllReduce):
            continue
        decision = reducer_laws(node.reducer)
        if isinstance(decision, Proved):
            continue
        where = f"cannot build {func.name!r}: the cross-thread reduction{at(node)}"
        if isinstance(decision, Refuted):
            cex = decision.counterexample
            raise BuildError(f"{where} has a combiner that is not {cex.description.split()[-1]}"
                             f": its threads' offers would combine differently in another "
                             f"order ({cex})")
        raise BuildError(f"{where} has a combiner polypad could not prove commutative and "
                         f"associative: {decision.reason}")
