"""The statements of a function as the deciders see them: sites and program order.

A :class:`Site` is a statement with everything around it (loops, ``if``
branches, lets, its slot in program order); a :class:`Program` holds the
sites of one function with their ISL spaces, instance domains, times,
accesses and writers, memoized.  Program order is the 2d+1 schedule of
:mod:`polypad.model.schedule`, with one refinement: a point *just before* a
compound statement (a loop, an ``if``, a block) gets an odd sequence slot,
so it comes after everything before the statement and before everything
inside it.

This is the bottom of the deciders' stack: :mod:`.facts` and
:mod:`.history` build on it, :mod:`.context` on those, and the prover on
the context -- imports go in that one direction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from polypad import budget
from polypad.concurrency import Recent
from polypad.errors import NotAffineError, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.lanes import lane, lane_count
from polypad.ir.naming import Names
from polypad.ir.operators import logical_or
from polypad.ir.show import show
from polypad.ir.stated import stated_condition
from polypad.ir.views import root, through_view
from polypad.model import AffineSpace, to_set
from polypad.model.affine import to_map, to_pw_aff
from polypad.model.domains import conjuncts, loop_bounds
from polypad.model.nest import is_leaf
from polypad.model.overflow import executed_set, within_dtypes, wraps_somewhere


@dataclass(eq=False)
class Site:
    """A statement with everything around it: loops, ``if`` branches, lets, program slot.

    ``slots`` has one entry per enclosing loop plus one for the statement:
    the sequence slot at each level (even for leaves and loops, odd for the
    point just before a compound statement).  ``loop_sites``, ``guard_sites``
    and ``let_sites`` are the sites of the enclosing loops, ``if`` statements
    and lets.  ``verify`` refuses a tree that shares one statement object in two
    places, but an expression or buffer may still be one object in many places;
    sites, not nodes, say which occurrence a question is about.
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
            case n.Block(body=body) | n.Allocate(body=body) | n.DeclBuffer(body=body):
                visit(body, sc)

    visit(body, _Scope())
    return sites


_MISSING = object()


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

    def memo(self, key, make):
        """``make()``, computed once per ``key`` for this program (the analyses
        built on it keep their per-program answers here).

        A value made while a time limit was reached is returned but not kept.
        """
        # Threads asking about one function share this Program: the first value
        # stored is the one every thread uses (each dict step is atomic under
        # the GIL).  A value made while a time limit was reached may lack what a
        # step that gave up would have added, so it is not kept.
        found = self._cache.get(key, _MISSING)
        if found is not _MISSING:
            return found
        value, in_time = budget.computed_in_time(lambda: _settled(make()))
        return self._cache.setdefault(key, value) if in_time else value

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
        return self.memo(("space", site.index), lambda: AffineSpace(
            site.loop_vars, tuple_name=site.name, lets=site.let_values, names=self.names))

    def domain(self, site: Site) -> tuple[isl.Set, tuple[tuple[Site, n.Expr], ...]]:
        """The instances of ``site``, and the non-affine conditions it had to leave out.

        Each left-out condition comes with the site where it was evaluated (the
        loop or the ``if``), since a condition on data holds only as long as
        the data it read is unchanged.
        """
        return self.memo(("domain", site.index), lambda: self._domain(site))

    def parameters(self) -> list[n.Var]:
        """The scalar parameters and symbolic extents, which isl sees as parameters."""
        return [v for v in self.names.objects() if isinstance(v, n.Var)]

    def parameter_box(self) -> isl.Set:
        """The parameter values a call can pass: each in its dtype's range."""
        def make():
            space = AffineSpace((), names=self.names)
            names = [self.names.name(v) for v in self.parameters()]
            universe = isl.Set(f"[{', '.join(names)}] -> {{ : }}", context=space.ctx)
            return within_dtypes(universe, space)
        return self.memo("parameter_box", make)

    def parameter_context(self, site: Site) -> isl.Set:
        """The parameter values a call can have when ``site`` runs: within their dtypes
        and the loop-free, unconditional integer assumptions and checks that ran before
        it (``T.assume(n >= 3)`` or ``assert n == 128, ...`` at the top of the function)."""
        out = self.parameter_box()
        for index, holds in self._leading_assumptions():
            if index < site.index:  # pre-order: a loop-free, unguarded site is before
                out = out.intersect(holds)
        return out

    def _leading_assumptions(self) -> list[tuple[int, isl.Set]]:
        """``(site index, parameter set where it holds)`` of each integer ``T.assume``
        or plain ``assert`` (:mod:`polypad.ir.stated`) outside every loop and ``if`` that isl
        reads exactly."""
        def make():
            out = []
            for site in self.sites:
                formula = stated_condition(site.stmt)
                if site.loops or site.guards or formula is None:
                    continue
                space = self.space(site)
                try:
                    if wraps_somewhere(formula, space, self.parameter_box()):
                        continue
                    out.append((site.index, to_set(formula, space).params()))
                except NotAffineError:
                    continue
            return out
        return self.memo("leading_assumptions", make)

    def _domain(self, site: Site):
        space = self.space(site)
        dom = space.universe.intersect_params(self.parameter_context(site))
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
                    where = executed_set(part, space, loops)
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
        return self.memo(("time", site.index), make)

    def before(self, a: Site, b: Site) -> isl.Map:
        """``a[y] -> b[x]``: instance ``y`` of ``a`` runs strictly before ``x`` of ``b``.

        The lexicographic order of the two sites' times, built from program
        structure: with ``k`` enclosing loops shared, either the counters of
        the first ``j < k`` agree and the ``j``-th is smaller, or all ``k``
        agree and ``a`` comes earlier in the sequence at level ``k`` (its slot
        is smaller; an equal slot there is a point both end at, as a
        compound statement and the first loop inside it do).
        """
        def make():
            dom_a, dom_b = self.domain(a)[0], self.domain(b)[0]
            pairs = isl.Map.from_domain_and_range(dom_a, dom_b)
            shared = 0
            while (shared < min(len(a.loop_sites), len(b.loop_sites))
                   and a.loop_sites[shared] is b.loop_sites[shared]):
                shared += 1
            out = isl.Map.empty(pairs.get_space())
            same = pairs  # the first j counters agree
            fixed_a, fixed_b = dom_a.detect_equalities(), dom_b.detect_equalities()
            for j in range(shared):
                value = _fixed(fixed_a, j)
                if value is not None and value == _fixed(fixed_b, j):
                    # One value on both sides (a loop of extent 1): the counters agree,
                    # and no case of the order starts here.  A deep nest has many.
                    continue
                out = out.union(same.order_lt(isl.dim_type.in_, j, isl.dim_type.out, j))
                same = same.equate(isl.dim_type.in_, j, isl.dim_type.out, j)
            if a.slots[shared] < b.slots[shared]:
                out = out.union(same)
            return out.coalesce()
        return self.memo(("before", a.index, b.index), make)

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

        The flag is False when an index is not quasi-affine, or may wrap
        around its dtype (ISL's exact reading is then not the element
        executed), and the relation had to be widened to the whole buffer.
        An access through a view is one of the buffer owning its memory, and a
        vector access touches the element of each lane.
        """
        # Memoized by content: the site, the buffer (held by the key) and the indices.
        try:
            key = ("access", site.index, buffer, tuple(indices))
            hash(key)
        except TypeError:
            return self._access(site, buffer, indices)
        return self.memo(key, lambda: self._access(site, buffer, indices))

    def _access(self, site: Site, buffer: n.Buffer, indices) -> tuple[isl.Map, bool]:
        count = max((lane_count(i) for i in indices), default=1)
        out, exact = None, True
        for k in range(count):
            owner, at = through_view(buffer, tuple(lane(i, k) for i in indices))
            rel, ok = self._lane_access(site, owner, at)
            out = rel if out is None else out.union(rel)
            exact = exact and ok
        return out, exact

    def _lane_access(self, site: Site, buffer: n.Buffer, indices) -> tuple[isl.Map, bool]:
        space = self.space(site)
        domain = self.domain(site)[0]
        try:
            pws = [to_pw_aff(i, space) for i in indices]
            for i in indices:
                if wraps_somewhere(i, space, domain, modular_root=True):
                    raise NotAffineError("it may wrap around", i)
        except NotAffineError:
            everything = isl.Set.universe(self.buffer_space(buffer))
            return isl.Map.from_domain_and_range(domain, everything), False
        rel = to_map(space, pws, self.buffer_names.name(buffer))
        return rel.intersect_domain(domain), True

    def writers(self, buffer: n.Buffer) -> list[tuple[Site, n.Buffer, isl.Map]]:
        """Every write to ``buffer``'s memory: each store (through a view of it too), and
        each allocation of it (which makes it arbitrary), with its ``site[y] -> Buf[e]``
        relation (in the memory owner's indices)."""
        buffer = root(buffer)

        def make():
            out = []
            for site in self.sites:
                stmt = site.stmt
                if isinstance(stmt, n.BufferStore) and root(stmt.buffer) is buffer:
                    rel, _ = self.access(site, stmt.buffer, stmt.indices)
                    out.append((site, buffer, rel))
                elif isinstance(stmt, n.Allocate) and stmt.buffer is buffer:
                    everything = isl.Set.universe(self.buffer_space(buffer))
                    rel = isl.Map.from_domain_and_range(self.domain(site)[0], everything)
                    out.append((site, buffer, rel))
            return out
        # Keyed by identity (a buffer's structural hash would cost a walk of its shape);
        # the entry holds the buffer, so no other object can take its id meanwhile.
        key = ("writers", id(buffer))
        found = self._cache.get(key)
        if found is None or found[0] is not buffer:
            value, in_time = budget.computed_in_time(make)
            found = (buffer, value)
            if in_time:
                self._cache[key] = found
        return found[1]

    def invalidated(self, src: Site, reads, target: Site, *,
                    skip: dict[int, isl.Set] | None = None) -> isl.Map:
        """``src[y] -> target[x]``: some element read at ``src[y]`` may be written in between.

        ``reads`` lists ``(buffer, src[y] -> Buf[e])`` relations.  A write
        counts when it runs strictly after ``src[y]`` and strictly before
        ``target[x]``, and is not among the instances ``skip`` gives for its
        site (by site index): writes known to leave the value read in place.
        """
        out = isl.Map.empty(self.before(src, target).get_space())
        for buf, rel in reads:
            for w_site, _, w_rel in self.writers(buf):
                if skip and w_site.index in skip:
                    w_rel = w_rel.subtract_domain(skip[w_site.index])
                pairs = rel.apply_range(w_rel.reverse()).intersect(self.before(src, w_site))
                if pairs.is_empty():
                    continue
                out = out.union(pairs.apply_range(self.before(w_site, target)))
        return out.coalesce()


def _settled(value):
    """``value`` with each ISL set or map in it in the form ISL's in-place rewrites keep.

    A memoized set is shared by every later question, and some ISL operations
    (``detect_equalities``, ``remove_redundancies``) rewrite the pieces of the
    very set they are given, shared or not: the set stays equal, but what is
    later computed from it comes out in another form.  A domain ``l % 3 >= 2``
    on ``0 <= l <= 3`` kept its division until an ``is_no_op`` question
    detected ``l = 2`` in it, and ``can_remove_conditional`` then chose
    another counterexample than when asked first (the fuzz, case 665).  Those
    rewrites change nothing in a set they have already been applied to.
    """
    if isinstance(value, isl.Set | isl.Map):
        return value.detect_equalities().remove_redundancies()
    if isinstance(value, tuple | list):
        return type(value)(_settled(v) for v in value)
    return value


def _fixed(domain: isl.Set, k: int) -> int | None:
    """The value ``domain`` plainly fixes its dimension ``k`` to, or ``None``."""
    value = domain.plain_get_val_if_fixed(isl.dim_type.set, k)
    return None if value.is_nan() else value.to_python()


# Programs of the functions asked about most recently, keyed by identity (a
# PrimFunc hashes structurally, which costs a walk of the whole tree).  Threads
# asking about one function share its Program (see Program.memo).
_PROGRAMS = Recent(16)


def program_of(func: n.PrimFunc) -> Program:
    """The :class:`Program` of ``func``, built on first use."""
    found = _PROGRAMS.get((func,))
    if found is not None:
        return found
    return _PROGRAMS.put((func,), Program(func))


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
