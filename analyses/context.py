"""What is known at a program point: ``context_at(f, stmt)``.

The context just before ``stmt`` runs holds

* the ranges of the enclosing loops and the conditions of the enclosing
  ``if`` branches (the *domain*: an ``isl.Set`` over the loop counters, with
  scalar parameters as ISL parameters);
* enclosing ``let`` bindings;
* integer ``T.assume`` facts that ran earlier (``T.assume(0 <= n < 8)``),
  folded into the domain exactly: an instance whose past holds a violated
  assumption cannot run;
* facts about buffer contents: earlier ``T.assume`` statements that read
  buffers and the values earlier stores wrote, both universally quantified
  over their loop instances and instantiated by :mod:`analyses.facts` at the
  buffer loads of each question.

Program order is the 2d+1 schedule of :mod:`polypad.model.schedule`, with
one refinement: a point *just before* a compound statement (a loop, an
``if``, a block) gets an odd sequence slot, so it comes after everything
before the statement and before everything inside it.

A fact that reads a buffer element holds only until that element is written
again (the review notes' rule; storing ``T.undef()`` is such a write, and so
is a fresh ``T.alloc_buffer`` allocation).  A condition on data, such as
``if A[0] == B[0]``, is a fact of the same kind, established when the ``if``
ran.

>>> ctx = analyses.context_at(f, store)
>>> ctx.known_value(B[0])            # FloatImm(0.0) under T.assume(B[0] == 0.0)
>>> analyses.prove(n // 8 == 0, ctx)  # Proved('isl')
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from polypad.errors import NotAffineError, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry, guarded
from polypad.ir.naming import Names
from polypad.ir.operators import logical_or
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, set_to_condition, to_set
from polypad.model.affine import to_map, to_pw_aff
from polypad.model.domains import conjuncts, loop_bounds
from polypad.model.nest import is_leaf
from polypad.model.overflow import wraps_somewhere

from .budgeted import bounded


@dataclass(eq=False)
class Site:
    """A statement with everything around it: loops, ``if`` branches, lets, program slot.

    ``slots`` has one entry per enclosing loop plus one for the statement:
    the sequence slot at each level (even for leaves and loops, odd for the
    point just before a compound statement).  ``loop_sites``, ``guard_sites``
    and ``let_sites`` are the sites of the enclosing loops, ``if`` statements
    and lets (a transformed tree may share one node object in two places, so
    sites, not nodes, say which occurrence).
    """

    index: int
    stmt: n.Stmt
    loops: tuple[n.For, ...]
    guards: tuple[tuple[n.IfThenElse, bool], ...]
    lets: tuple[n.LetStmt, ...]
    slots: tuple[int, ...]
    loop_sites: tuple[Site, ...] = ()
    guard_sites: tuple[Site, ...] = ()
    let_sites: tuple[Site, ...] = ()

    @property
    def name(self) -> str:
        """The ISL tuple name of the site's instances."""
        return f"S{self.index}"

    @property
    def loop_vars(self) -> tuple[n.Var, ...]:
        """The counters of the enclosing loops, outer first."""
        return tuple(loop.var for loop in self.loops)

    @property
    def let_values(self) -> dict:
        """Enclosing let bindings: variable -> value."""
        return {let.var: let.value for let in self.lets}


@dataclass(frozen=True)
class _Scope:
    """What encloses the statement being visited (nodes and their sites)."""

    loops: tuple = ()
    guards: tuple = ()
    lets: tuple = ()
    loop_sites: tuple = ()
    guard_sites: tuple = ()
    let_sites: tuple = ()
    outer: tuple = ()  # slots of the enclosing loops


def collect_sites(body: n.Stmt) -> list[Site]:
    """Every statement under ``body`` as a :class:`Site`, in program order."""
    sites: list[Site] = []
    counters = [0]

    @guarded
    def visit(stmt, sc: _Scope):
        if is_leaf(stmt) or isinstance(stmt, n.For):
            slot = 2 * counters[-1]
            counters[-1] += 1
        else:
            slot = 2 * counters[-1] - 1
        own = slot - 1 if isinstance(stmt, n.For) else slot
        site = Site(len(sites), stmt, sc.loops, sc.guards, sc.lets, (*sc.outer, own),
                    sc.loop_sites, sc.guard_sites, sc.let_sites)
        sites.append(site)
        match stmt:
            case n.SeqStmt(stmts=stmts):
                for s in stmts:
                    visit(s, sc)
            case n.For(body=body):
                counters.append(0)
                visit(body, replace(sc, loops=(*sc.loops, stmt), outer=(*sc.outer, slot),
                                    loop_sites=(*sc.loop_sites, site)))
                counters.pop()
            case n.IfThenElse(then_case=then, else_case=other):
                for branch, taken in ((then, True), (other, False)):
                    if branch is not None:
                        visit(branch, replace(sc, guards=(*sc.guards, (stmt, taken)),
                                              guard_sites=(*sc.guard_sites, site)))
            case n.LetStmt(body=body):
                visit(body, replace(sc, lets=(*sc.lets, stmt), let_sites=(*sc.let_sites, site)))
            case n.Block(body=body) | n.Allocate(body=body):
                visit(body, sc)

    visit(body, _Scope())
    return sites


class Program:
    """The ISL view of one function: sites, domains, program order and writes.

    Built once per function and cached (see :func:`program_of`); everything
    is computed on first use.
    """

    def __init__(self, func: n.PrimFunc) -> None:
        self.func = func
        self.sites = collect_sites(func.body)
        self.names = Names()
        for p in func.params:
            if isinstance(p, n.Var):
                self.names.name(p)
            else:
                for dim in p.shape:
                    if isinstance(dim, n.Var):
                        self.names.name(dim)
        self.buffer_names = Names(reserved=[s.name for s in self.sites])
        self._by_id: dict[int, list[Site]] = {}
        for site in self.sites:
            self._by_id.setdefault(id(site.stmt), []).append(site)
        self._cache: dict = {}

    def _memo(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def site_of(self, stmt: n.Stmt) -> Site:
        """The site of ``stmt`` (by identity)."""
        found = self._by_id.get(id(stmt), [])
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFoundError(
                f"the statement {_label(stmt)!r} is not in function {self.func.name}")
        raise PolypadError(
            f"the statement {_label(stmt)!r} occurs {len(found)} times in function "
            f"{self.func.name}; a program point needs a statement that occurs once")

    # ------------------------------------------------------------ per site

    def space(self, site: Site) -> AffineSpace:
        """The site's loop counters as set dims (tuple ``S<k>``), its lets, the shared names."""
        return self._memo(("space", site.index), lambda: AffineSpace(
            site.loop_vars, tuple_name=site.name, lets=site.let_values, names=self.names))

    def domain(self, site: Site) -> tuple[isl.Set, tuple[tuple[Site, n.Expr], ...]]:
        """The instances of ``site``, and the non-affine conditions it had to leave out.

        Each left-out condition comes with the site where it was evaluated (the
        loop or the ``if``), since a condition on data holds only as long as
        the data it read is unchanged.
        """
        return self._memo(("domain", site.index), lambda: self._domain(site))

    def _domain(self, site: Site):
        space = self.space(site)
        dom = space.universe
        dropped: list[tuple[Site, n.Expr]] = []
        for loop, origin in zip(site.loops, site.loop_sites):
            for bound in loop_bounds(loop):
                try:
                    dom = dom.intersect(to_set(bound, space))
                except NotAffineError:
                    dropped.append((origin, bound))
        loops = dom
        for (stmt, then), origin in zip(site.guards, site.guard_sites):
            for part in conjuncts(stmt.condition) if then else [stmt.condition]:
                try:
                    if wraps_somewhere(part, space, loops):
                        raise NotAffineError("it may wrap around", part)
                    where = to_set(part, space)
                except NotAffineError:
                    dropped.append((origin, part if then else n.Not(part)))
                    continue
                dom = dom.intersect(where if then else where.complement())
        return dom.coalesce(), tuple(dropped)

    def time(self, site: Site) -> isl.Map:
        """``S<k>[loops] -> [slot, loop, slot, ..., slot]`` on the site's domain."""
        def make():
            space = self.space(site)
            pws = [space.const(site.slots[0])]
            for var, slot in zip(site.loop_vars, site.slots[1:]):
                pws += [space.var(var), space.const(slot)]
            return to_map(space, pws, None).intersect_domain(self.domain(site)[0])
        return self._memo(("time", site.index), make)

    def before(self, a: Site, b: Site) -> isl.Map:
        """``a[y] -> b[x]``: instance ``y`` of ``a`` runs strictly before ``x`` of ``b``."""
        def make():
            ta, tb = self.time(a), self.time(b)
            common = min(len(a.slots), len(b.slots)) * 2 - 1
            ta = ta.project_out(isl.dim_type.out, common, ta.dim(isl.dim_type.out) - common)
            tb = tb.project_out(isl.dim_type.out, common, tb.dim(isl.dim_type.out) - common)
            return ta.lex_lt_map(tb)
        return self._memo(("before", a.index, b.index), make)

    def prefix_map(self, outer: Site, site: Site) -> isl.Map:
        """``outer[y] -> site[x]`` with ``y`` the counters of ``outer``'s loops (a prefix of x)."""
        space = self.space(site)
        pws = [space.var(v) for v in outer.loop_vars]
        return to_map(space, pws, outer.name).intersect_domain(self.domain(site)[0]).reverse()

    # ------------------------------------------------------------ buffers

    def buffer_space(self, buffer: n.Buffer) -> isl.Space:
        """The element space ``Name[e0, e1, ...]`` of ``buffer``."""
        names = [f"e{k}" for k in range(buffer.ndim)]
        space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=names)
        return space.set_tuple_name(isl.dim_type.set, self.buffer_names.name(buffer))

    def access(self, site: Site, buffer: n.Buffer, indices) -> tuple[isl.Map, bool]:
        """``site[y] -> Buf[e]`` for an access at ``indices``; exact, or all of ``buffer``.

        The flag is False when an index is not quasi-affine and the relation
        had to be widened to the whole buffer.
        """
        space = self.space(site)
        domain = self.domain(site)[0]
        try:
            pws = [to_pw_aff(i, space) for i in indices]
        except NotAffineError:
            everything = isl.Set.universe(self.buffer_space(buffer))
            return isl.Map.from_domain_and_range(domain, everything), False
        rel = to_map(space, pws, self.buffer_names.name(buffer))
        return rel.intersect_domain(domain), True

    def writers(self) -> list[tuple[Site, n.Buffer, isl.Map]]:
        """Every write: each store, and each allocation (which makes its buffer arbitrary)."""
        def make():
            out = []
            for site in self.sites:
                if isinstance(site.stmt, n.BufferStore):
                    rel, _ = self.access(site, site.stmt.buffer, site.stmt.indices)
                    out.append((site, site.stmt.buffer, rel))
                elif isinstance(site.stmt, n.Allocate):
                    buf = site.stmt.buffer
                    everything = isl.Set.universe(self.buffer_space(buf))
                    rel = isl.Map.from_domain_and_range(self.domain(site)[0], everything)
                    out.append((site, buf, rel))
            return out
        return self._memo("writers", make)

    def invalidated(self, src: Site, reads, target: Site, *,
                    skip: dict[int, isl.Set] | None = None) -> isl.Map:
        """``src[y] -> target[x]``: some element read at ``src[y]`` may be written in between.

        ``reads`` lists ``(buffer, src[y] -> Buf[e])`` relations.  A write
        counts when it runs strictly after ``src[y]`` and strictly before
        ``target[x]``, and is not among the instances ``skip`` gives for its
        site (by site index): writes known to leave the value read in place.
        """
        out = isl.Map.empty(self.before(src, target).get_space())
        for w_site, w_buf, w_rel in self.writers():
            if skip and w_site.index in skip:
                w_rel = w_rel.subtract_domain(skip[w_site.index])
            for buf, rel in reads:
                if buf is not w_buf:
                    continue
                pairs = rel.apply_range(w_rel.reverse()).intersect(self.before(src, w_site))
                if pairs.is_empty():
                    continue
                out = out.union(pairs.apply_range(self.before(w_site, target)))
        return out.coalesce()

    def context(self, site: Site) -> Context:
        """The (cached) context just before ``site``."""
        return self._memo(("context", site.index), lambda: Context(self, site))


# Programs of the functions asked about most recently, keyed by identity (a
# PrimFunc hashes structurally, which costs a walk of the whole tree).
_PROGRAMS: dict[int, tuple[n.PrimFunc, Program]] = {}
_KEEP = 16


def program_of(func: n.PrimFunc) -> Program:
    """The :class:`Program` of ``func``, built on first use."""
    found = _PROGRAMS.get(id(func))
    if found is not None and found[0] is func:
        return found[1]
    program = Program(func)
    if len(_PROGRAMS) >= _KEEP:
        _PROGRAMS.pop(next(iter(_PROGRAMS)))
    _PROGRAMS[id(func)] = (func, program)
    return program


@deep_entry
@bounded
def context_at(f: n.PrimFunc, stmt: n.Stmt) -> Context:
    """The context at the point just before ``stmt`` (found by identity in ``f``) runs.

    >>> ctx = context_at(f, store)
    >>> prove(4 * io + ii < 16, ctx)      # Proved('isl')
    """
    from polypad.arguments import expect
    expect(stmt, n.Stmt, "stmt", "context_at", what="a statement (Stmt) of f")
    program = program_of(f)
    return program.context(program.site_of(stmt))


class Context:
    """Facts that hold just before a statement runs; see the module docstring.

    ``loop_vars`` are the enclosing loop counters (outer first), ``domain``
    the ``isl.Set`` of their values (parameters for scalars) allowed by the
    loops, affine branch conditions and integer assumptions, ``conditions``
    the branch conditions as IR, and ``premises`` the facts only Z3 can use
    (conditions on data, lets), each already weakened where a later write
    may have broken it.
    """

    def __init__(self, program: Program | None, site: Site | None, *,
                 extra: tuple[n.Expr, ...] = (), base: Context | None = None) -> None:
        self.program, self.site = program, site
        if base is not None:
            self.space, self.domain = base.space, base.domain
            self._premises, self._instantiator = list(base._premises), base._instantiator
            self.conditions = base.conditions
        elif program is None:
            self.space = AffineSpace(())
            self.domain = self.space.universe
            self._premises, self._instantiator = [], None
            self.conditions = ()
        else:
            from .facts import Instantiator, int_assume_facts, path_premises

            self.space = program.space(site)
            domain, dropped = program.domain(site)
            domain, z3_facts = int_assume_facts(program, site, domain)
            self.domain = domain
            self._premises = path_premises(program, site, dropped) + z3_facts
            self._instantiator = Instantiator(program, site)
            self.conditions = tuple(
                s.condition if then else n.Not(s.condition) for s, then in site.guards)
        for cond in extra:
            try:
                if wraps_somewhere(cond, self.space, self.domain):
                    raise NotAffineError("it may wrap around", cond)
                self.domain = self.domain.intersect(to_set(cond, self.space))
            except NotAffineError:
                self._premises.append(cond)
        if extra:
            self.conditions = (*self.conditions, *extra)

    @classmethod
    def empty(cls) -> Context:
        """No loops, no facts: every free variable ranges over all values."""
        return cls(None, None)

    @property
    def func(self) -> n.PrimFunc | None:
        """The function the point is in (None for the empty context)."""
        return self.program.func if self.program is not None else None

    @property
    def stmt(self) -> n.Stmt | None:
        """The statement the point is just before."""
        return self.site.stmt if self.site is not None else None

    @property
    def loop_vars(self) -> tuple[n.Var, ...]:
        """The counters of the enclosing loops, outer first."""
        return self.site.loop_vars if self.site is not None else ()

    @property
    def names(self) -> Names:
        """ISL parameter names <-> IR variables for this context's sets."""
        return self.space.names

    @property
    def label(self) -> str:
        """How counterexamples name the statement."""
        return _label(self.stmt) if self.stmt is not None else "query"

    @property
    def premises(self) -> tuple[n.Expr, ...]:
        """Facts for Z3 beyond the domain: conditions on data, lets, extra conditions."""
        return tuple(self._premises)

    def with_condition(self, cond: n.Expr) -> Context:
        """This context with ``cond`` also known to hold (e.g. the branch not taken)."""
        return Context(self.program, self.site, extra=(cond,), base=self)

    def domain_condition(self) -> n.Expr:
        """The domain as one IR condition over the loop counters and parameters."""
        if getattr(self, "_domain_ir", None) is None:
            self._domain_ir = set_to_condition(self.domain, self.loop_vars, self.names)
        return self._domain_ir

    def facts_for(self, load: n.BufferLoad):
        """The buffer facts of this context instantiated at ``load`` (see :mod:`.facts`)."""
        if self._instantiator is None:
            return []
        return self._instantiator.facts_for(load, self.domain)

    def has_assumptions(self) -> bool:
        """Whether a ``T.assume`` about buffer contents may hold here."""
        if self._instantiator is None:
            return False
        return any(f.kind == "assume" for f in self._instantiator.facts())

    def history(self, load: n.BufferLoad, values: dict, element) -> tuple[list[str], str]:
        """Earlier writers of ``element`` of ``load``'s buffer, and what is known of its value.

        ``values`` gives the loop counters and parameters of the point (see
        :func:`analyses.history.element_history`).
        """
        if self._instantiator is None:
            return [], "input"
        from .history import element_history

        return element_history(self._instantiator, load, values, element)

    def known_value(self, load: n.BufferLoad) -> n.Expr | None:
        """A value proven equal to ``load`` at this point (from assumptions or stores), or None.

        >>> context_at(f, store).known_value(B[0])     # FloatImm(0.0)
        """
        from .prover import prove

        for candidate in self._candidates(load):
            if prove(load.equal(candidate), self):
                return candidate
        return None

    def _candidates(self, load: n.BufferLoad):
        """Values that may equal ``load``: from the facts, then from conditions on data.

        A candidate is only a guess; :meth:`known_value` proves it.  A condition
        such as ``if A[0] == n:`` offers ``n`` for ``A[0]`` inside its branch
        (only values that read no buffer: ``if A[0] == B[0]`` would offer each
        load for the other, and a second simplify would swap them back).
        """
        from .facts import has_undef, loads_in

        seen: set = {load}
        for fact in self.facts_for(load):
            if fact.candidate is not None and fact.candidate not in seen:
                seen.add(fact.candidate)
                yield fact.candidate
        for cond in (*self._premises, *self.conditions):
            for node in walk(cond):
                if not isinstance(node, n.Eq):
                    continue
                for a, b in ((node.a, node.b), (node.b, node.a)):
                    if a == load and b not in seen and not has_undef(b) and not loads_in(b):
                        seen.add(b)
                        yield b

    def __repr__(self) -> str:
        if self.site is None:
            return "Context(empty)"
        lines = [f"Context before `{self.label}` in {self.program.func.name}:"]
        loops = [f"{show(lo.min)} <= {lo.var.name} < {show(lo.min + lo.extent)}"
                 if not (isinstance(lo.min, n.IntImm) and lo.min.value == 0)
                 else f"0 <= {lo.var.name} < {show(lo.extent)}" for lo in self.site.loops]
        if loops:
            lines.append("  loops: " + ", ".join(loops))
        lines += [f"  if: {show(c)}" for c in self.conditions]
        lines.append(f"  domain: {self.domain}")
        lines += [f"  premise: {show(p)}" for p in self._premises]
        if self._instantiator is not None:
            lines += [f"  {fact}" for fact in self._instantiator.describe()]
        return "\n".join(lines)


def any_of(*conds: n.Expr) -> n.Expr:
    """``c1 or c2 ...`` with constant ``False`` operands left out."""
    kept = [c for c in conds if not (isinstance(c, n.BoolImm) and not c.value)]
    if not kept:
        return n.BoolImm(False)
    if any(isinstance(c, n.BoolImm) for c in kept):
        return n.BoolImm(True)
    return logical_or(*kept)


def _label(stmt: n.Stmt) -> str:
    text = show(stmt).strip().splitlines()
    first = text[0] if text else type(stmt).__name__
    return first if len(first) <= 60 else first[:57] + "..."
