"""Facts about buffer contents: assumptions and stored values, instantiated at loads.

Two kinds of statement establish a fact at each of their instances ``y``:

* ``T.assume(phi(y))`` that reads buffers: ``phi(y)`` holds right after it;
* a store ``A[w(y)] = v(y)``: ``A[w(y)] == v(y)`` holds right after it
  (``v`` evaluated before the store, so an instance whose value reads the
  element it overwrites, ``B[i] = B[i] + x``, establishes nothing).

The fact about instance ``y`` still holds at the point ``P[x]`` when ``y``
ran before ``x`` and no element the fact reads was written in between
(:meth:`Program.invalidated`; storing ``T.undef()`` is such a write, which is
how the review notes' rule 3 -- drop every fact about a location once undef
is stored there -- comes out).  Which ``y`` to use for a question about the
load ``A[h(x)]``: the instances whose access ``A[g(y)]`` is that element.
ISL gives them as a function of ``x`` and the element ``e`` (the lexicographic
minimum, and maximum when several match), and the fact is instantiated by
substituting ``y := y(x, e)`` and ``e := h(x)`` -- a quantifier-free formula
for Z3, whatever ``h`` is.

Integer assumptions, conditions on data around a point and ``let``
bindings are the context's own (:mod:`.path_facts`).  Stored constants that
later writes keep are added by the prover's caller (:mod:`.kept_constants`,
through ``facts_for(..., kept=...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from polypad import budget
from polypad.errors import BudgetExceeded, NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.stated import stated_condition
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter, walk
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import pw_aff_to_expr, set_to_condition
from polypad.model.affine import to_map, to_pw_aff

from .program import Program, Site, any_of


def loads_in(expr: n.Expr) -> list[n.BufferLoad]:
    """The distinct buffer loads in ``expr``, in order of appearance."""
    seen: dict[n.BufferLoad, None] = {}
    for node in walk(expr):
        if isinstance(node, n.BufferLoad):
            seen.setdefault(node, None)
    return list(seen)


def has_undef(expr: n.Expr) -> bool:
    """True when ``expr`` contains ``T.undef()``."""
    return any(isinstance(x, n.Call) and x.op == "undef" for x in walk(expr))


def resolved_lets(site: Site) -> dict | None:
    """The site's let values with earlier lets substituted, or None if one reads a buffer.

    A let bound to a load holds the value of that load *when the let ran*;
    substituting it into a later fact would read the buffer again, so such
    facts are not used.
    """
    out: dict = {}
    for let in site.lets:
        value = substitute(let.value, out)
        if loads_in(value):
            return None
        out[let.var] = value
    return out


def reads_of(program: Program, site: Site, loads) -> list:
    """``(buffer, access relation)`` of each of ``loads``, read at ``site``."""
    return [(ld.buffer, program.access(site, ld.buffer, ld.indices)[0]) for ld in loads]


def is_assume(site: Site) -> bool:
    """Whether ``site`` states a fact for what follows it: a ``T.assume``, or an
    ``assert`` on plain values (:mod:`polypad.ir.stated`)."""
    return stated_condition(site.stmt) is not None


@dataclass(eq=False)
class ValueFact:
    """A fact about buffer contents established at every instance of ``site``."""

    kind: str  # "assume" or "stored"
    site: Site
    formula: n.Expr  # over the site's loop counters
    loads: tuple[n.BufferLoad, ...]  # for "stored", loads[0] is the element written
    domain: isl.Set  # the instances that establish it
    value: n.Expr | None = None  # for "stored": the value written
    # Branches on data around the site: the fact needs them taken, so it is
    # only used at points inside the same branch of the same ``if`` instance.
    guards: tuple[tuple[Site, bool], ...] = ()

    def __str__(self) -> str:
        over = ", ".join(v.name for v in self.site.loop_vars)
        where = f" for {over} in {self.domain}" if over else ""
        if self.kind == "stored":
            return f"stored ({self.site.name}): {show(self.loads[0])} == {show(self.value)}{where}"
        return f"assume ({self.site.name}): {show(self.formula)}{where}"


def value_facts(program: Program) -> list[ValueFact]:
    """Every assumption that reads buffers and every store that establishes a value."""
    return [f for site in program.sites for f in site_facts(program, site)]


def site_facts(program: Program, site: Site) -> list[ValueFact]:
    """The fact ``site`` establishes, if any (memoized)."""
    return program.memo(("value_facts", site.index), lambda: _site_facts(program, site))


def _may_state_fact(site: Site) -> bool:
    """Whether ``site`` may establish a fact, by its text alone (no domain computed).

    Only assumptions and stores do, and not an update ``B[i] = B[i] + x``:
    the element it reads is the one it writes at every instance, which
    leaves no instance whose stored value is known (see :func:`_site_facts`).
    """
    stmt = site.stmt
    if is_assume(site):
        return True
    if not isinstance(stmt, n.BufferStore):
        return False
    return not any(isinstance(x, n.BufferLoad) and x.buffer is stmt.buffer
                   and x.indices == stmt.indices for x in walk(stmt.value))


def _site_facts(program: Program, site: Site) -> list[ValueFact]:
    if not _may_state_fact(site):
        return []  # no domain to compute for the rest
    domain, dropped = program.domain(site)
    lets = resolved_lets(site)
    guards = _branches(site, dropped)
    if guards is None or lets is None:
        return []  # a statement that may not have run establishes nothing
    if is_assume(site):
        formula = substitute(stated_condition(site.stmt), lets)
        loads = loads_in(formula)
        return [ValueFact("assume", site, formula, tuple(loads), domain, guards=guards)
                ] if loads else []
    store = site.stmt
    value = substitute(store.value, lets)
    if has_undef(value):
        return []
    target = n.BufferLoad(store.buffer, tuple(substitute(i, lets) for i in store.indices))
    written, exact = program.access(site, store.buffer, target.indices)
    if not exact:
        return []
    for load in loads_in(value):
        if load.buffer is store.buffer:
            read, _ = program.access(site, load.buffer, load.indices)
            domain = domain.subtract(written.intersect(read).domain())
    if domain.is_empty():
        return []
    return [ValueFact("stored", site, n.Eq(target, value), (target, *loads_in(value)),
                      domain, value, guards)]


@dataclass(frozen=True, eq=False)
class FactInstance:
    """A fact instantiated at one load: ``premise`` holds; ``candidate`` may equal the load."""

    fact: ValueFact
    premise: n.Expr
    candidate: n.Expr | None
    # Other instances of the fact also read this element and were not used:
    # harmless for proofs, but a counterexample may then break one of them.
    partial: bool = False


#: Finds the stored constants that still hold at a load because the writes since
#: kept them: ``kept(instantiator, load, graph, domain)`` (see ``facts_for``).
KeptConstants = Callable[["Instantiator", n.BufferLoad, "isl.Map | None", "isl.Set | None"],
                         list[FactInstance]]


@dataclass(frozen=True, eq=False)
class _Template:
    """Instance ``ys`` of a fact's site where ``where`` holds, over (x, element) variables."""

    where: n.Expr
    ys: tuple[n.Expr, ...]
    element: tuple[n.Var, ...]
    domain: isl.Set  # `where` as a set over [x..., e...]
    partial: bool = False  # several instances match; this is one of them


class Instantiator:
    """The value facts that hold at ``target``, instantiated at the loads of a question."""

    def __init__(self, program: Program, target: Site) -> None:
        self.program, self.target = program, target
        self._templates: dict = {}
        self._valid: dict = {}
        self._instances: dict = {}
        self._graphs: dict[n.BufferLoad, isl.Map | None] = {}
        self._facts: list[ValueFact] | None = None
        self._canonical = _Canonical(program, target)

    def facts(self) -> list[ValueFact]:
        """The facts of the function whose statements may run before the target."""
        if self._facts is None:
            prog = self.program  # sites that never run before the target: no fact to make
            self._facts = [f for site in prog.sites
                           if _may_state_fact(site)
                           and not prog.before(site, self.target).is_empty()
                           for f in site_facts(prog, site)]
        return self._facts

    def valid(self, fact: ValueFact) -> isl.Map:
        """``site[y] -> target[x]``: instance ``y`` of ``fact`` still holds at ``x``."""
        key = id(fact)
        if key not in self._valid:
            prog = self.program
            pairs = prog.before(fact.site, self.target).intersect_domain(fact.domain)
            taken = {(g.index, then) for g, (_, then)
                     in zip(self.target.guard_sites, self.target.guards)}
            if any((g.index, then) not in taken for g, then in fact.guards):
                self._valid[key] = isl.Map.empty(pairs.get_space())
                return self._valid[key]
            # The same instance of each branch: its loops are shared with the target.
            for j in range(max((len(g.loops) for g, _ in fact.guards), default=0)):
                pairs = pairs.equate(isl.dim_type.in_, j, isl.dim_type.out, j)
            inv = prog.invalidated(fact.site, reads_of(prog, fact.site, fact.loads), self.target)
            self._valid[key] = pairs.subtract(inv).coalesce()
        return self._valid[key]

    def templates(self, fact: ValueFact, k: int) -> list[_Template]:
        """How to pick the instance of ``fact`` whose ``k``-th load reads a given element."""
        key = (id(fact), k)
        found = self._templates.get(key)
        if found is None:
            found, in_time = budget.computed_in_time(lambda: self.make_templates(fact, k))
            if in_time:  # see Program.memo
                found = self._templates.setdefault(key, found)
        return found

    def make_templates(self, fact: ValueFact, k: int,
                       valid: isl.Map | None = None) -> list[_Template]:
        """:meth:`templates`, computed now (not memoized), for the instances of
        ``fact`` in ``valid`` (``site[y] -> target[x]``; :meth:`valid` unless given)."""
        prog, load = self.program, fact.loads[k]
        access, exact = prog.access(fact.site, load.buffer, load.indices)
        if not exact:
            return []
        valid = self.valid(fact) if valid is None else valid
        # [x, e] -> y: the valid instances y whose k-th load reads element e.
        match = valid.reverse().domain_product(access.reverse()).flatten_domain()
        # coalesce() also sidesteps an ISL failure ("affine expression involves
        # some of the domain dimensions") in lexmin on some uncoalesced maps.
        match = match.coalesce()
        if match.is_empty():
            return []
        element = tuple(n.Var(f"e{j}", "int32") for j in range(load.buffer.ndim))
        over = (*self.target.loop_vars, *element)
        try:
            choices = [match.lexmin_pw_multi_aff()]
            if not match.is_single_valued():
                choices.append(match.lexmax_pw_multi_aff())
        except isl.Error as err:
            # Out of time raises (not an answer to remember), as does ISL failing;
            # ISL's known refusal leaves no instance to name: the fact goes unused.
            rise_unless_expected(err, DIVISIONS_REFUSED)
            return []
        # Where the target itself runs goes without saying.
        known = isl.Map.from_domain_and_range(
            prog.domain(self.target)[0], isl.Set.universe(prog.buffer_space(load.buffer)))
        known = known.wrap().flatten()
        if any(pma.n_piece() > MAX_PIECES for pma in choices):
            # Which instance wrote the element is a formula of many cases
            # (their number grows with the extents): too dear to state.
            return [_TOO_COMPLEX]
        out = []
        for pma in choices:
            domain = pma.domain()
            try:
                where = set_to_condition(domain, over, prog.names, context=known, exact=True)
                ys = tuple(_counter_expr(pma.get_pw_aff(j), over, prog.names)
                           for j in range(pma.dim(isl.dim_type.out)))
            except BudgetExceeded:
                raise  # out of time: not a template that cannot be written
            except PolypadError:
                continue
            out.append(_Template(where, ys, element, domain, len(choices) > 1))
        return out

    def facts_for(self, load: n.BufferLoad, domain: isl.Set | None = None, *,
                  kept: KeptConstants | None = None) -> list[FactInstance]:
        """Every fact instance about the element ``load`` reads, as a premise for Z3.

        With the context's ``domain``, instances that cannot apply there are
        left out and the condition of the others is simplified against it.
        ``kept``, when given, adds the stored constants later writes keep
        (:func:`analyses.kept_constants.kept_constant_facts`, which proves
        those writes and so lives above this module).
        """
        # The facts proper are the same with or without kept constants, so one
        # entry holds both: a proof tried without kept constants first (see
        # analyses.kept_constants) does not pay for the facts twice.
        key = (load, id(domain))
        found = self._instances.get(key)
        if found is None or found[0] is not domain:
            facts, in_time = budget.computed_in_time(lambda: self._facts_for(load, domain))
            found = (domain, facts, {})
            if in_time:  # see Program.memo
                self._instances[key] = found
        _, plain, with_kept = found
        if kept is None:
            return plain
        if kept in with_kept:
            return with_kept[kept]
        more, in_time = budget.computed_in_time(
            lambda: plain + kept(self, load, self._graph(load), domain))
        if in_time:  # a proof that ran out of time keeps fewer constants
            with_kept[kept] = more
        return more

    def _facts_for(self, load: n.BufferLoad, domain: isl.Set | None) -> list[FactInstance]:
        """The instances of the assumed and stored facts at ``load`` (no kept constants)."""
        out = []
        graph = self._graph(load)
        for fact in self.facts():
            for k, access in enumerate(fact.loads):
                if access.buffer is not load.buffer:
                    continue
                for t in self.templates(fact, k):
                    out += self.instantiate(fact, k, t, load, graph, domain)
        return out

    def instantiate(self, fact: ValueFact, k: int, t: _Template, load: n.BufferLoad,
                     graph: isl.Map | None, domain: isl.Set | None) -> list[FactInstance]:
        """The instance of ``fact`` that template ``t`` picks for ``load`` (none, or one)."""
        if t is _TOO_COMPLEX:
            return [FactInstance(fact, n.BoolImm(True), None, True)]
        at = dict(zip(t.element, load.indices))
        where = self._narrow(t, at, graph, domain)
        if where is None:
            return []
        ys = dict(zip(fact.site.loop_vars, (substitute(y, at) for y in t.ys)))
        if any(_too_large(y) for y in ys.values()):
            # The writer's instance as a formula of the element: a
            # chain of writes (A[i % 7] from A[i // 4]) nests these
            # ever deeper.  Leaving the fact out keeps proofs sound;
            # `partial` stops a counterexample that may break it.
            return [FactInstance(fact, n.BoolImm(True), None, True)]
        body = self._canonical.visit(substitute(fact.formula, ys))
        premise = any_of(n.Not(where), body)
        if isinstance(where, n.BoolImm) and where.value:
            premise = body
        candidate = _candidate(fact, k, ys)
        # Stored values define the element they write; only
        # assumptions constrain several inputs at once.
        partial = t.partial and fact.kind == "assume" and len(fact.loads) > 1
        return [FactInstance(fact, premise, candidate, partial)]

    def _graph(self, load: n.BufferLoad) -> isl.Map | None:
        """``target[x] -> [x, e]`` with ``e`` the element ``load`` reads; None if not affine."""
        if load not in self._graphs:
            space = self.program.space(self.target)
            try:
                pws = [space.var(v) for v in self.target.loop_vars]
                pws += [to_pw_aff(i, space) for i in load.indices]
                self._graphs[load] = to_map(space, pws, None)
            except NotAffineError:
                self._graphs[load] = None
        return self._graphs[load]

    def _narrow(self, t: _Template, at: dict, graph: isl.Map | None,
                domain: isl.Set | None) -> n.Expr | None:
        """Where template ``t`` applies to the load, within ``domain``; None if nowhere."""
        if domain is None or graph is None:
            return substitute(t.where, at)  # a non-affine load index: Z3 sorts it out
        holds = graph.intersect_range(t.domain).domain().intersect(domain)
        if holds.is_empty():
            return None
        if domain.is_subset(holds):
            return n.BoolImm(True)
        if holds.n_basic_set() > MAX_PIECES:
            return substitute(t.where, at)  # right, if not as simple as it could be
        try:
            return set_to_condition(holds, self.target.loop_vars, self.program.names,
                                    context=domain, exact=True)
        except NotAffineError:  # isl's form does not fit the IR's integers
            return substitute(t.where, at)

    def describe(self) -> list[str]:
        """One line per fact that may hold here (for the context's repr)."""
        return [str(f) for f in self.facts()]


def _branches(site: Site, dropped) -> tuple[tuple[Site, bool], ...] | None:
    """The ``if`` branches (site, taken) behind ``site``'s non-affine conditions.

    None when a non-affine loop bound is among them: then which iterations
    ran is not known at all.
    """
    out = []
    for origin, _ in dropped:
        if not isinstance(origin.stmt, n.IfThenElse):
            return None
        then = next(t for g, (_, t) in zip(site.guard_sites, site.guards) if g is origin)
        out.append((origin, then))
    return tuple(out)


class _Canonical(Rewriter):
    """Loads with their affine indices in one normal form (``A[10]`` for ``A[11 - 1]``).

    Instantiating a fact substitutes expressions into expressions; without a
    normal form the same element comes back as ever longer indices, and a
    chain of facts would never reach a fixed point.
    """

    def __init__(self, program: Program, target: Site) -> None:
        self.space, self.names = program.space(target), program.names
        self.vars = target.loop_vars
        self.done: dict = {}

    def visit_BufferLoad(self, load: n.BufferLoad) -> n.BufferLoad:
        indices = tuple(self.index(i) for i in load.indices)
        if all(a is b for a, b in zip(indices, load.indices)):
            return load
        return n.BufferLoad(load.buffer, indices)

    def index(self, e: n.Expr) -> n.Expr:
        if isinstance(e, (n.IntImm, n.Var)) or _too_large(e):
            return e
        if e not in self.done:
            try:
                pa = to_pw_aff(e, self.space)
                self.done[e] = pw_aff_to_expr(pa, self.vars, self.names)
            except PolypadError:  # not affine, or several pieces: keep it
                self.done[e] = e
        return self.done[e]


#: Nodes in a fact's instance formula beyond which the fact is left out.
MAX_INSTANCE_NODES = 40
#: Pieces of "which instance wrote this element" beyond which the fact is left out.
MAX_PIECES = 4
#: The template of a fact left out as too complex (a marker).
_TOO_COMPLEX = object()


def _too_large(e: n.Expr) -> bool:
    for count, _ in enumerate(walk(e)):
        if count >= MAX_INSTANCE_NODES:
            return True
    return False


def _counter_expr(pa: isl.PwAff, over: tuple, names) -> n.Expr:
    """One loop counter of a fact's instance, as IR over ``over``.

    A few ISL calls each, and an instance of a 64-deep nest has 64 counters
    (seconds in all): the deadline is checked between them.
    """
    budget.check()
    return pw_aff_to_expr(_one_piece(pa), over, names)


def _one_piece(pa: isl.PwAff) -> isl.PwAff:
    """``pa`` as a single affine piece when one of its pieces is right everywhere.

    ISL often splits ``y = i`` into ``y = 3 if i = 3 else i``; the IR reads
    better, and Z3 works less, with the one formula.
    """
    pieces = pa.get_pieces()
    for _, aff in pieces:
        # Right everywhere: equal to each piece's function on that piece's domain.  The
        # same question as whole.is_equal(pa), piece by piece: on a 64-deep nest's
        # domains a quarter of the time.
        if all(aff.ne_set(other).intersect(where).is_empty() for where, other in pieces):
            return isl.PwAff.from_aff(aff).intersect_domain(pa.domain())
    return pa


def _candidate(fact: ValueFact, k: int, ys: dict) -> n.Expr | None:
    """The value ``fact`` gives its ``k``-th load, instantiated, if it states one."""
    load = fact.loads[k]
    if fact.kind == "stored":
        return substitute(fact.value, ys) if k == 0 else None
    for node in walk(fact.formula):
        if isinstance(node, n.Eq):
            for a, b in ((node.a, node.b), (node.b, node.a)):
                if a == load and not has_undef(b) and load not in loads_in(b):
                    return substitute(b, ys)
    return None
