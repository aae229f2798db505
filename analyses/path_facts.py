"""What the path to a point knows: integer assumptions, and premises from
conditions on data and ``let`` bindings.

Integer assumptions (no loads) need no instantiation: :func:`int_assume_facts`
folds them into the context's domain exactly (an instance with a violated
assumption in its past cannot run).  Conditions on data in enclosing ``if``
branches and ``let`` bindings become premises, weakened to the instances
where what they read is still unchanged (:func:`path_premises`).  Facts
about buffer contents are :mod:`.facts`'.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.stated import stated_condition
from polypad.ir.substitute import substitute
from polypad.model import set_to_condition, to_set
from polypad.model.affine import to_pw_aff
from polypad.model.overflow import wraps_somewhere

from .facts import is_assume, loads_in, reads_of, resolved_lets
from .program import Program, Site, any_of


def _valid_where(program: Program, origin: Site, expr: n.Expr, target: Site) -> n.Expr:
    """``expr`` (evaluated at ``origin``, an enclosing point) weakened where its data changed."""
    loads = loads_in(expr)
    if not loads:
        return expr
    inv = program.invalidated(origin, reads_of(program, origin, loads), target)
    broken = inv.intersect(program.prefix_map(origin, target)).range()
    if broken.is_empty():
        return expr
    where = set_to_condition(broken, target.loop_vars, program.names, exact=True)
    return any_of(where, expr)


def path_premises(program: Program, site: Site, dropped) -> list[n.Expr]:
    """Premises for Z3: non-affine branch conditions and loop bounds, and let bindings."""
    out = [_valid_where(program, origin, expr, site) for origin, expr in dropped]
    space = program.space(site)
    for let, origin in zip(site.lets, site.let_sites):
        fact = n.Eq(let.var, let.value)
        try:
            to_pw_aff(let.value, space)
            out.append(fact)  # an affine integer: no data, always valid
        except NotAffineError:
            out.append(_valid_where(program, origin, fact, site))
    return out


def int_assume_facts(program: Program, site: Site, domain: isl.Set):
    """``domain`` narrowed by the earlier integer assumptions, and those only Z3 can use."""
    premises: list[n.Expr] = []
    for src in program.sites:
        if not is_assume(src) or program.domain(src)[1]:
            continue
        lets = resolved_lets(src)
        if lets is None:
            continue
        formula = substitute(stated_condition(src.stmt), lets)
        if loads_in(formula):
            continue
        before = program.before(src, site)
        if before.is_empty():
            continue
        src_domain = program.domain(src)[0]
        try:
            holds = to_set(formula, program.space(src))
            if wraps_somewhere(formula, program.space(src), src_domain):
                # ISL would read `n + 1 < n` as never true; executed, it holds at
                # n = 2**31 - 1.  Z3 models the wrap-around.
                raise NotAffineError("it may wrap around", formula)
        except NotAffineError:
            # Usable as it stands only when it mentions no loop counter of its own.
            if not src.loops and domain.is_subset(before.range()):
                premises.append(formula)
            continue
        bad = before.intersect_domain(src_domain.subtract(holds)).range()
        domain = domain.subtract(bad).coalesce()
    return domain, premises
