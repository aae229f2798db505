"""What happened to one buffer element before a program point, for counterexamples.

A counterexample from Z3 assigns values to the elements a question reads.
It describes a real execution only if those values could be there: an
element never written still holds the function's input (any value the
assumptions allow), one last written by ``T.undef()`` or a fresh allocation
holds anything, one a stored value still covers holds that value -- but one
last written with a value the prover does not track could hold something
else.  :func:`element_history` tells these apart for one concrete point and
element, with ISL.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.model.isl_helpers import fix

from .facts import Instantiator, loads_in
from .program import Program, Site


def element_history(facts: Instantiator, load: n.BufferLoad, x_values: dict,
                    element) -> tuple[list[str], str]:
    """Who may have written ``element`` before the point, and what is known of its value.

    ``x_values`` gives the loop counters and parameters (IR variable ->
    int) of the point; ``element`` the indices ``load`` reads there.
    Returns the statements that may have written the element earlier and
    its state: ``"input"`` (never written: it holds the function's
    input), ``"pinned"`` (a stored value that still holds gives it,
    without reading buffers), ``"tracked"`` (a stored value gives it in
    terms of other loads), ``"arbitrary"`` (last written by a store of
    ``T.undef()`` or a fresh allocation: any value is a real one) or
    ``"untracked"``.
    """
    prog, target = facts.program, facts.target
    params = {prog.names.name(v): val for v, val in x_values.items() if v in prog.names}
    at_x = fix(isl.Set.universe(prog.space(target).space),
                [x_values[v] for v in target.loop_vars], params)
    at_e = fix(isl.Set.universe(prog.buffer_space(load.buffer)), element, params)
    hits = []
    for w_site, _, w_rel in prog.writers(load.buffer):
        when = prog.before(w_site, target).intersect_range(at_x).domain()
        found = fix(w_rel.intersect_range(at_e).domain().intersect(when), (), params)
        if not found.is_empty():
            hits.append((w_site, found))
    writers = [show(w.stmt).strip().splitlines()[0] for w, _ in hits]
    if not writers:
        return writers, "input"
    coords = [*(x_values[v] for v in target.loop_vars), *element]
    for fact in facts.facts():
        if fact.kind != "stored" or fact.loads[0].buffer is not load.buffer:
            continue
        if any(not fix(t.domain, coords, params).is_empty()
               for t in facts.templates(fact, 0)):
            return writers, "tracked" if loads_in(fact.value) else "pinned"
    if all(_makes_arbitrary(w.stmt) for w in _last_writers(prog, hits)):
        return writers, "arbitrary"
    return writers, "untracked"


def _last_writers(prog: Program, hits: list) -> list[Site]:
    """The writer sites with an instance in ``hits`` that no other hit follows."""
    last = []
    for w1, z1 in hits:
        rest = z1
        for w2, z2 in hits:
            rest = rest.subtract(prog.before(w1, w2).intersect_domain(z1).intersect_range(z2)
                                 .domain())
        if not rest.is_empty():
            last.append(w1)
    return last


def _makes_arbitrary(stmt: n.Stmt) -> bool:
    """A write that leaves any value at all: a store of ``T.undef()``, an allocation."""
    if isinstance(stmt, n.Allocate):
        return True
    return (isinstance(stmt, n.BufferStore) and isinstance(stmt.value, n.Call)
            and stmt.value.op == "undef")
