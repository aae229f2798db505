"""Before a build: every cross-thread reduction's combiner is commutative and associative.

The lowering (:mod:`polypad.semantics.lower_allreduce`) combines the threads'
offers in a tree, as a GPU does; that has one meaning only for a combiner
whose result does not depend on the order, which
:func:`analyses.reducer_laws.reducer_laws` decides with Z3.  A refuted law
is a :class:`~polypad.errors.BuildError` naming the reduction's place and
giving Z3's values; an undecided one is refused too, saying so.
"""

from __future__ import annotations

from analyses.reducer_laws import require_reducer_laws
from polypad.ir import nodes as n
from polypad.ir.visitor import walk


def check_reducers(func: n.PrimFunc) -> None:
    """Raise :class:`~polypad.errors.BuildError` unless every ``ThreadAllReduce`` of
    ``func`` has a combiner proved commutative and associative."""
    for node in walk(func.body):
        if isinstance(node, n.ThreadAllReduce):
            require_reducer_laws(func.name, node)
