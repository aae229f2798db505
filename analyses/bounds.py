"""Whether every access stays inside its buffer: ``check_bounds(f)``.

An access is every store, and every load that runs: in a stored value or
an index, an ``if`` condition, a loop bound, a ``let`` value or a
``T.assume``.  For each one ISL decides whether some instance reaches an
element outside the buffer's shape::

    { S[y] -> A[e] : y runs, e = index(y), not (0 <= e_k < shape_k for all k) }

The instances that run are the statement's domain (loop bounds and affine
``if`` guards) cut down to where the load is evaluated at all (``Select``,
``and`` and ``or`` evaluate lazily, so ``i < 10 and A[i] > 0`` never loads
``A[10]``) and to where the integer assumptions that ran before hold
(``T.assume(0 <= n < 8)``, through
:func:`analyses.path_facts.int_assume_facts`).  Scalar parameters and symbolic
extents are ISL parameters, each within its dtype's range (a call cannot
pass an ``int32`` ``n`` of ``2**33``), and extents are never negative.
Where an index's ``+``, ``-`` and ``*`` leave its dtype, the element
executed is the exact index wrapped around, ``(e - lo) mod 2**bits + lo``,
which is quasi-affine too.

* ``Proved("isl")`` when no access has such an instance.
* ``Refuted`` when one surely has: the counterexample names the statement
  instance, the element and the parameter values -- the lexicographically
  first bad instance, found by ISL (``lexmin``, ``sample_point``), never by
  enumeration, at parameter values near zero where there are such.
* ``Unknown`` when the rest cannot be decided: an index that is not
  quasi-affine (``A[B[i]]``, ``A[i * j]``) or in which ``//``, ``%``,
  ``min`` or ``max`` may take a wrapped operand, or a bad instance that only a data-dependent
  guard, which the model drops, might keep from running.  The reason names
  each such access and expression.

>>> check_bounds(f)
Refuted(Counterexample('store to A[i + 1] at f.py:4 is outside the shape (10,) of A', ...))
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.arguments import expect
from polypad.errors import NotAffineError, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.lanes import lane, lane_count
from polypad.ir.location import source_location
from polypad.ir.show import show
from polypad.ir.views import is_view, through_view
from polypad.ir.visitor import children, walk
from polypad.model import AffineSpace, to_set
from polypad.model.affine import to_map, to_pw_aff
from polypad.model.nest import is_leaf
from polypad.model.overflow import executed_set, wrapped_pw_aff, wrapping_operation
from polypad.model.ranges import dtype_range

from .budgeted import decider
from .evidence import Counterexample, Element, Instance, Proved, Refuted, Unknown
from .instances import dim_names, point_coordinates
from .path_facts import int_assume_facts
from .program import Program, Site, program_of

# (condition, value it must have) for a load to be evaluated.
_Path = tuple[tuple[n.Expr, bool], ...]


@dataclass(frozen=True, eq=False)
class _Access:
    """One access of a site: the node, and when (lazily) it is evaluated."""

    site: Site
    node: n.BufferLoad | n.BufferStore
    path: _Path = ()
    lets: dict = field(default_factory=dict)  # expression lets around a load

    @property
    def buffer(self) -> n.Buffer:
        return self.node.buffer

    def describe(self) -> str:
        """``store to A[i + 1] at f.py:4``."""
        buffer = self.node.buffer
        text = f"{buffer.name}[{', '.join(show(i) for i in self.node.indices)}]"
        kind = "store to" if isinstance(self.node, n.BufferStore) else "load of"
        return f"{kind} {text}{self.where()}"

    def where(self) -> str:
        """`` at f.py:4``, or nothing where the statement has no source span."""
        return source_location(self.site.stmt)


@decider
def check_bounds(f: n.PrimFunc, *, within: n.Stmt | None = None) -> Proved | Refuted | Unknown:
    """Whether every access of ``f`` stays inside its buffer, for every parameter value
    the integer assumptions before it allow.

    The first access (in program order) proved to leave its buffer is the
    ``Refuted`` one; otherwise an access that cannot be decided makes the
    answer ``Unknown``.  ``within``, a statement of ``f``, limits the
    question to the accesses of the statements inside it (itself included),
    each still in its whole context.

    >>> check_bounds(f)      # for i in T.serial(10): A[i + 1] = 1.0, A of shape (10,)
    Refuted(...)             # instances: S0(i=9); element: A[10]
    """
    if not isinstance(f, n.PrimFunc):
        raise PolypadError(f"check_bounds takes a PrimFunc, not {type(f).__name__}")
    expect(within, (n.Stmt, None), "within", "check_bounds", what="a statement of f or None")
    inside = None if within is None else {id(x) for x in walk(within) if isinstance(x, n.Stmt)}
    checker = Checker(program_of(f))
    reasons: list[str] = []
    count = 0
    matched = False
    for site, label in zip(checker.program.sites, statement_labels(f.body), strict=True):
        if inside is not None and id(site.stmt) not in inside:
            continue
        matched = True
        for access in site_accesses(site):
            count += 1
            decided = checker.decide(access, label)
            if isinstance(decided, Refuted):
                return decided
            if isinstance(decided, Unknown) and decided.reason not in reasons:
                reasons.append(decided.reason)
    if within is not None and not matched and not any(x is within for x in walk(f.body)):
        raise NotFoundError(f"check_bounds: the statement given as within is not in {f.name}")
    if reasons:
        return Unknown("; ".join(reasons))
    return Proved("isl", f"{count} accesses stay inside their buffers")


class Checker:
    """The ISL questions of :func:`check_bounds`, with what they share cached."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._domains: dict[int, tuple[isl.Set, tuple]] = {}
        self._boxes: dict[n.Buffer, isl.Set] = {}
        # Accesses proved inside, by what decides it: `B[i] = B[i] + 1` loads and
        # stores one element at the same instances, and the second costs nothing.
        self._inside: set = set()
        self.extents = self._extents()

    def _extents(self) -> isl.Set:
        """The parameter values a function can be called with: no negative extent."""
        func = self.program.func
        found: dict[n.Var, None] = {}
        buffers = [p for p in func.params if isinstance(p, n.Buffer)]
        buffers += [x.buffer for x in walk(func.body) if isinstance(x, n.Allocate)]
        for buffer in buffers:
            for extent in buffer.shape:
                if isinstance(extent, n.Var):
                    found.setdefault(extent)
        space = AffineSpace((), names=self.program.names)
        out = space.universe
        for var in found:
            out = out.intersect(to_set(var >= 0, space))
        return out.params()

    def domain(self, site: Site) -> tuple[isl.Set, tuple]:
        """Instances of ``site`` that can run, and the conditions left out of them."""
        if site.index not in self._domains:
            domain, dropped = self.program.domain(site)
            domain, _ = int_assume_facts(self.program, site, domain)
            self._domains[site.index] = (domain.intersect_params(self.extents), dropped)
        return self._domains[site.index]

    def box(self, buffer: n.Buffer) -> isl.Set:
        """``{ A[e] : 0 <= e_k < shape_k }``."""
        if buffer not in self._boxes:
            dims = tuple(n.Var(f"e{k}") for k in range(len(buffer.shape)))
            space = AffineSpace(dims, tuple_name=self.program.buffer_names.name(buffer),
                                names=self.program.names)
            box = space.universe
            for var, extent in zip(dims, buffer.shape, strict=True):
                size = extent if isinstance(extent, n.Var) else n.IntImm(int(extent))
                box = box.intersect(to_set(n.And(var >= 0, var < size), space))
            self._boxes[buffer] = box
        return self._boxes[buffer]

    def decide(self, access: _Access, label: str) -> Proved | Refuted | Unknown:
        """Whether ``access`` stays inside its buffer; ``label`` names its statement.

        A vector access is decided lane by lane, and an access through a view
        both inside the view and inside the memory it shares (in the indices
        of the buffer owning it).
        """
        for buffer, indices in self.targets(access):
            found = self.examine(access, buffer, indices)
            if not isinstance(found, Outside):
                if isinstance(found, Proved):
                    continue
                return found
            evidence = self.counterexample(access, label, found.bad, buffer)
            if found.unmodelled:
                return Unknown(f"{evidence} -- unless {' or '.join(found.unmodelled)} (which "
                               "the analysis cannot model) keeps that instance from running")
            return Refuted(evidence)
        return Proved("isl")

    def targets(self, access: _Access) -> list[tuple[n.Buffer, tuple]]:
        """The (buffer, indices) pairs ``access`` must stay inside: one per vector
        lane, and for an access through a view both the view and, in its indices,
        the buffer owning the memory."""
        node = access.node
        count = max((lane_count(i) for i in node.indices), default=1)
        out = []
        for k in range(count):
            indices = tuple(lane(i, k) for i in node.indices)
            targets = [(node.buffer, indices)]
            if is_view(node.buffer):
                # A view's extents may be lets (``A_1 = A.view(n * m)`` prints a let):
                # then only the memory it shares bounds it.
                params = set(self.program.func.params)
                if not all(isinstance(d, int) or d in params for d in node.buffer.shape):
                    targets = []
                targets.append(through_view(node.buffer, indices))
            out.extend(targets)
        return out

    def examine(self, access: _Access, buffer: n.Buffer | None = None,
                indices: tuple | None = None) -> Proved | Unknown | Outside:
        """Where ``access`` leaves ``buffer`` (its own buffer unless given) at
        ``indices`` (its own unless given): nowhere (``Proved``), at the instances
        of an :class:`Outside`, or ``Unknown`` when its index is not modelled."""
        site, node = access.site, access.node
        buffer = node.buffer if buffer is None else buffer
        indices = tuple(node.indices) if indices is None else indices
        key = (site.index, buffer, indices, access.path, tuple(access.lets.items()))
        if key in self._inside:
            return Proved("isl")
        space, where, unmodelled = self.running(access)
        try:
            pws = [to_pw_aff(index, space) for index in indices]
        except NotAffineError as err:
            return Unknown(f"cannot tell whether the {access.describe()} stays inside "
                           f"{buffer.name}: {err}")
        for index in indices:
            wraps = wrapping_operation(index, space, where, modular_root=True)
            if wraps is not None:
                return Unknown(f"cannot tell whether the {access.describe()} stays inside "
                               f"{buffer.name}: {show(wraps)} may wrap around its "
                               f"{wraps.dtype} range")
        name = self.program.buffer_names.name(buffer)
        relation = to_map(space, pws, name).intersect_domain(where)
        exact = None
        if not relation.subtract_range(_dtype_box(self.box(buffer), indices)).is_empty():
            # Some exact index leaves its dtype.  Only `+ - *` lead to it (checked
            # above), so the executed index is the exact one wrapped around.
            exact = relation.subtract_range(self.box(buffer))
            pws = [wrapped_pw_aff(pw, index.dtype) for pw, index in zip(pws, indices,
                                                                  strict=True)]
            relation = to_map(space, pws, name).intersect_domain(where)
        bad = relation.subtract_range(self.box(buffer))
        if bad.is_empty():
            self._inside.add(key)
            return Proved("isl")
        return Outside(bad, tuple(unmodelled), exact, buffer)

    def running(self, access: _Access) -> tuple[AffineSpace, isl.Set, list[str]]:
        """The space of ``access``'s expressions, the instances at which it may run (its
        statement's domain cut down to where the lazy operands around it evaluate it)
        and the conditions left out of them (which may keep more from running)."""
        space = self.program.space(access.site)
        if access.lets:
            space = space.with_lets(access.lets)
        where, dropped = self.domain(access.site)
        unmodelled = [show(cond) for _, cond in dropped]
        for cond, value in access.path:
            try:
                holds = executed_set(cond, space, where)
            except NotAffineError:
                unmodelled.append(show(cond) if value else f"not {show(cond)}")
                continue
            where = where.intersect(holds if value else holds.complement())
        return space, where, unmodelled

    def counterexample(self, access: _Access, label: str, bad: isl.Map,
                       buffer: n.Buffer | None = None) -> Counterexample:
        """The first instance of ``bad`` (instances of ``access`` -> elements of
        ``buffer``, its own buffer unless given, outside it), at parameter values
        near zero where there are such."""
        pairs = _near_zero(bad.wrap())
        first = pairs.lexmin()  # the first bad instance, for each parameter value
        point = (first if not first.is_empty() else pairs).sample_point()
        coords, params = point_coordinates(point)
        depth = len(access.site.loop_vars)
        names = dim_names(self.program.space(access.site).space)
        shape = ", ".join(getattr(x, "name", str(x)) for x in buffer.shape)
        shape = f"({shape}{',' if len(buffer.shape) == 1 else ''})"
        return Counterexample(
            f"{access.describe()} is outside the shape {shape} of {buffer.name}",
            instances=(Instance(label, dict(zip(names, coords[:depth], strict=True))),),
            element=Element(buffer.name, tuple(coords[depth:])),
            params=params,
        )


@dataclass(frozen=True, eq=False)
class Outside:
    """Where an access leaves its buffer: ``bad`` maps its instances to the elements
    outside (the indices executed); ``unmodelled`` are the conditions on the path
    to it that the analysis could not model, any of which might keep ``bad`` from
    running.  Where an index wraps around, ``exact`` holds the instances whose
    exact index is outside (a superset of ``bad`` without ``mod 2**bits``)."""

    bad: isl.Map
    unmodelled: tuple[str, ...]
    exact: isl.Map | None = None
    buffer: n.Buffer | None = None  # the buffer left (a view's owner), if not the access's


def _near_zero(pairs: isl.Set) -> isl.Set:
    """``pairs`` at parameter values of at most 64, else 65536, in magnitude, where it
    has points there: a counterexample a reader (and a test) can run."""
    for limit in (64, 65536):
        box = isl.Set.universe(pairs.get_space())
        for k in range(pairs.dim(isl.dim_type.param)):
            box = box.lower_bound_val(isl.dim_type.param, k, isl.Val(str(-limit)))
            box = box.upper_bound_val(isl.dim_type.param, k, isl.Val(str(limit)))
        near = pairs.intersect(box)
        if not near.is_empty():
            return near
    return pairs


def _dtype_box(box: isl.Set, indices) -> isl.Set:
    """The elements each of whose indices is a value of that index's dtype."""
    out = isl.Set.universe(box.get_space())
    for k, index in enumerate(indices):
        lo, hi = dtype_range(index.dtype)
        out = out.lower_bound_val(isl.dim_type.set, k, isl.Val(str(lo)))
        out = out.upper_bound_val(isl.dim_type.set, k, isl.Val(str(hi)))
    return out


# ---------------------------------------------------------------- what runs where


def site_accesses(site: Site) -> list[_Access]:
    """The accesses ``site`` itself evaluates (not those of the statements inside it)."""
    out: list[_Access] = []
    stmt = site.stmt
    match stmt:
        case n.BufferStore():
            for e in (stmt.value, *stmt.indices):  # the order a store evaluates them
                _loads(site, e, (), {}, out)
            out.append(_Access(site, stmt))
        case n.Evaluate() | n.LetStmt():
            _loads(site, stmt.value, (), {}, out)
        case n.IfThenElse():
            _loads(site, stmt.condition, (), {}, out)
        case n.For():
            _loads(site, stmt.min, (), {}, out)
            _loads(site, stmt.extent, (), {}, out)
    return out


@guarded
def _loads(site: Site, e: n.Expr, path: _Path, lets: dict, out: list[_Access]) -> None:
    """The loads of ``e`` in evaluation order, each with the conditions it runs under."""
    match e:
        case n.Select(condition=c, true_value=t, false_value=f):
            _loads(site, c, path, lets, out)
            _loads(site, t, (*path, (c, True)), lets, out)
            _loads(site, f, (*path, (c, False)), lets, out)
        case n.And(a=a, b=b) | n.Or(a=a, b=b):
            _loads(site, a, path, lets, out)
            _loads(site, b, (*path, (a, isinstance(e, n.And))), lets, out)
        case n.Let(var=var, value=value, body=body):
            _loads(site, value, path, lets, out)
            _loads(site, body, path, {**lets, var: value}, out)
        case n.BufferLoad(indices=indices):
            for index in indices:
                _loads(site, index, path, lets, out)
            out.append(_Access(site, e, path, lets))
        case _:
            for child in children(e):
                _loads(site, child, path, lets, out)


def statement_labels(body: n.Stmt) -> list[str]:
    """How evidence names each statement, in the order of
    :func:`analyses.context.collect_sites`: the innermost block's name, else
    the model's ``S<k>`` for a store, assumption or plain assert (as ``polypad check``
    numbers them), ``for j`` for a loop's bounds, ``if`` or ``let x``."""
    out: list[str] = []
    leaves = 0

    def visit(stmt: n.Stmt, block: str | None) -> None:
        nonlocal leaves
        match stmt:
            case n.BufferStore() | n.Evaluate() | n.Assert() if is_leaf(stmt):
                own = f"S{leaves}"
                leaves += 1
            case n.For():
                own = f"for {stmt.var.name}"
            case n.LetStmt():
                own = f"let {stmt.var.name}"
            case _:
                own = type(stmt).__name__.lower().replace("ifthenelse", "if")
        out.append(block if block is not None else own)
        match stmt:
            case n.SeqStmt(stmts=stmts):
                for s in stmts:
                    visit(s, block)
            case n.IfThenElse(then_case=then, else_case=other):
                visit(then, block)
                if other is not None:
                    visit(other, block)
            case n.Block(name=name, body=inner):
                visit(inner, name)
            case (n.For(body=inner) | n.LetStmt(body=inner) | n.Allocate(body=inner)
                  | n.DeclBuffer(body=inner)):
                visit(inner, block)

    visit(body, None)
    return out
