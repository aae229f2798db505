"""Whether every block's axis bindings stay in their domains: ``check_block_bindings(f)``.

A block binds its axes (``vj = T.axis.spatial(n, j_0 * 8 + j_1)``); TVM,
and every analysis that trusts axis domains, needs each binding inside its
domain ``[min, min + extent)`` at every instance where the block runs: every
value of the loop counters around it that its enclosing conditions and its
``T.where`` predicate let through.  The parser checks the bindings a script
writes; this asks the same of any function, one a schedule built included,
from its block headers (:mod:`polypad.model.block_bindings`, with a
parameter buffer's symbolic sizes never negative, as the parser has them).

* ``Proved("isl")`` when every binding stays in its domain.
* ``Refuted`` when one leaves it: the counterexample names the block, the
  axis, its binding and the value it takes, at the first such instance
  (loop counters outer first, then the smallest parameters, by isl's
  ``lexmin``).
* ``Unknown`` when the rest cannot be decided: a binding, bound or guard
  that is not quasi-affine, arithmetic that may wrap around its dtype.

Blocks under a buffer view (``T.decl_buffer``), an annotation (``T.attr``)
or in a packed function are checked as any other: none of these changes a
binding or where a block runs, except that an ``assert c`` (as a
``T.assume(c)``) holds after it and nothing after a ``return`` runs.

>>> check_block_bindings(f)
Refuted(Counterexample("block 'c' binds vi = i * 2 to 16, outside its domain [0, 16)", ...))
"""

from __future__ import annotations

from polypad.ir.nodes import PrimFunc
from polypad.ir.show import show
from polypad.model.block_axes import Violation
from polypad.model.block_bindings import binding_problems

from .budgeted import decider
from .evidence import Counterexample, Instance, Proved, Refuted, Unknown


@decider
def check_block_bindings(f: PrimFunc) -> Proved | Refuted | Unknown:
    """Whether every block axis of ``f`` is bound inside its domain wherever its block
    runs; the first binding (in program order) proved to leave it is the ``Refuted`` one.

    >>> check_block_bindings(pp.parse(text))     # vi = T.axis.spatial(16, i) under range(16)
    Proved(method='isl', detail='every block axis binding stays in its domain')
    """
    reasons: list[str] = []
    for problem in binding_problems(f):
        found = problem.found
        if isinstance(found, Violation):
            counters = dict(found.instance[:problem.counters])
            params = dict(found.instance[problem.counters:])
            description = (f"block {problem.block.name!r} binds {problem.axis.var.name} = "
                           f"{show(problem.value)} to {found.value}, outside its domain "
                           f"{problem.domain}")
            return Refuted(Counterexample(
                description, (Instance(problem.block.name, counters),), params=params,
                values={problem.axis.var.name: found.value}))
        reasons.append(str(problem))
    if reasons:
        return Unknown("; ".join(dict.fromkeys(reasons)))
    return Proved("isl", "every block axis binding stays in its domain")

