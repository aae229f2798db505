"""Which elements of a buffer a function (or statement) touches, and when.

RFC 0077 (Enhancement - Predicate for DomainTouched) asks ``DomainTouched``
to track the condition under which a buffer is touched, not only the
indices.  :func:`domain_touched` answers both exactly: the union of the
access relations of every statement (loop bounds and affine guards
included) projected onto the buffer, as an ``isl.Set`` whose parameters
are the scalar parameters -- and, for a statement, the loop variables
around it.  Each part of the set comes with the parameter values for which
it is touched::

    >>> print(domain_touched(f, "A"))
    A[i] for 0 <= i < 14 when n >= 4

A guard that reads a buffer cannot be modelled: it is dropped, the set
over-approximates, ``exact`` is False and ``dropped`` lists the guards.
``T.assume`` statements are facts, not accesses, and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.arguments import expect, expect_choice
from polypad.errors import NotAffineError, NotFoundError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model import Model, extract, pw_aff_to_expr, set_to_condition
from polypad.model.conditions import condition_set

from .budgeted import bounded
from .instances import buffer_box

_KINDS = ("read", "write", "any")
_INDEX_NAMES = ("i", "j", "k", "l")


@dataclass(frozen=True)
class TouchedPart:
    """Elements ``region`` (over the buffer's indices) touched when ``when`` holds."""

    region: isl.Set
    when: isl.Set  # a parameter set; the universe when unconditional


@dataclass(frozen=True, eq=False)
class Touched:
    """The answer of :func:`domain_touched`.

    ``set`` is the exact touched set (an over-approximation when ``exact`` is
    False, ``dropped`` then naming the guards left out); ``parts`` splits it by
    the parameter values under which each piece is touched; ``index_vars``
    are the IR variables :meth:`condition` uses for the buffer's indices and
    ``params`` those for the ISL parameters.
    """

    buffer: n.Buffer
    kind: str
    set: isl.Set
    exact: bool
    dropped: tuple[n.Expr, ...]
    parts: tuple[TouchedPart, ...]
    index_vars: tuple[n.Var, ...]
    params: dict[str, n.Var]

    @property
    def predicate(self) -> n.Expr:
        """When anything is touched: a condition over the parameters."""
        return set_to_condition(self.set.params(), [], self.params)

    def condition(self) -> n.Expr:
        """Whether element ``index_vars`` is touched: a condition over indices and parameters."""
        return set_to_condition(self.set, self.index_vars, self.params)

    def is_empty(self) -> bool:
        """True when nothing of the buffer is touched, whatever the parameters."""
        return self.set.is_empty()

    def contains(self, indices, params: dict[str, int] | None = None) -> bool:
        """Whether element ``indices`` is touched for the parameter values ``params``."""
        s = self.set
        for name, value in (params or {}).items():
            k = s.find_dim_by_name(isl.dim_type.param, name)
            if k >= 0:
                s = s.fix_val(isl.dim_type.param, k, isl.Val(str(int(value))))
        for k, value in enumerate(indices):
            s = s.fix_val(isl.dim_type.set, k, isl.Val(str(int(value))))
        return not s.is_empty()

    def __str__(self) -> str:
        if self.set.is_empty():
            text = f"nothing of {self.buffer.name}"
        else:
            text = "; ".join(self._show_part(p) for p in self.parts)
        if not self.exact:
            guards = ", ".join(show(g) for g in self.dropped) or "a data-dependent value"
            text += f" (over-approximated: dropped {guards})"
        return text

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the set, the predicate and the buffer's grid.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import touched_html

        return touched_html(self)

    def _show_part(self, part: TouchedPart) -> str:
        region, shown, free = part.region, [], []
        # An index the parameters pin down is shown as its value: B[0], not B[i] for i == 0.
        for k, var in enumerate(self.index_vars):
            low, high = region.dim_min(k), region.dim_max(k)
            if low.n_piece() == 1 and low.is_equal(high):
                shown.append(show(pw_aff_to_expr(low, [], self.params)))
            else:
                shown.append(var.name)
                free.append(k)
        for k in reversed(range(len(self.index_vars))):
            if k not in free:
                region = region.project_out(isl.dim_type.set, k, 1)
        text = f"{self.buffer.name}[{', '.join(shown)}]"
        if not region.plain_is_universe():
            variables = [self.index_vars[k] for k in free]
            cond = set_to_condition(region, variables, self.params)
            text += f" for {_pretty(cond, variables)}"
        if not part.when.plain_is_universe():
            when = set_to_condition(part.when, [], self.params)
            text += f" when {_pretty(when, ())}"
        return text


@bounded
def domain_touched(f_or_stmt: n.PrimFunc | n.Stmt, buffer: n.Buffer | str,
                   kind: str = "any", *, assumes: bool = False) -> Touched:
    """The elements of ``buffer`` that ``f_or_stmt`` reads, writes or both (``kind``).

    ``f_or_stmt`` is a function, or one statement of it (a loop, a block, a
    store): then the loop variables around it are free, and become
    parameters of the set and of the predicate.  ``buffer`` is a ``Buffer``
    or its name.  ``assumes=True`` counts the loads inside ``T.assume`` as
    reads.  Raises :class:`NotAffineError` when an index of the buffer is not
    quasi-affine.
    """
    expect(f_or_stmt, (n.PrimFunc, n.Stmt), "f_or_stmt", "domain_touched")
    expect(buffer, (n.Buffer, str), "buffer", "domain_touched",
           what="a Buffer or a buffer name (str)")
    expect_choice(kind, _KINDS, "kind", "domain_touched")
    if isinstance(f_or_stmt, n.PrimFunc):
        func = f_or_stmt
    else:
        func = n.PrimFunc("statement", (), f_or_stmt)
    target = _find_buffer(func, buffer)
    model = extract(func)
    space = buffer_box(model, target).get_space() if target in model.buffer_names else None
    touched, exact, dropped = None, True, []
    for s in model.statements:
        if s.is_assume and not assumes:
            continue
        for access in s.accesses:
            if access.buffer is not target or (kind != "any" and access.kind != kind):
                continue
            part = access.relation.range()
            touched = part if touched is None else touched.union(part)
            if access.may:
                exact = False
                dropped += _dropped(s, access)
    if touched is None:
        base = space if space is not None else _bare_space(target)
        touched = isl.Set.empty(base)
    touched = touched.coalesce()
    index_vars = _index_vars(model, len(target.shape))
    params = {model.names.name(var): var for var in model.names.objects()}
    return Touched(
        buffer=target, kind=kind, set=touched, exact=exact, dropped=_unique(dropped),
        parts=_parts(touched), index_vars=index_vars, params=params,
    )


def _parts(s: isl.Set) -> tuple[TouchedPart, ...]:
    """``s`` grouped by the parameter condition of each of its pieces."""
    groups: list[list] = []
    for bset in s.get_basic_sets():
        when = isl.Set.from_basic_set(bset).params()
        for group in groups:
            if group[0].is_equal(when):
                group[1] = group[1].union(isl.Set.from_basic_set(bset))
                break
        else:
            groups.append([when, isl.Set.from_basic_set(bset)])
    return tuple(TouchedPart(region.gist_params(when).coalesce(), when.coalesce())
                 for when, region in groups)


def _dropped(s, access) -> list[n.Expr]:
    """The conditions left out of ``access``'s relation."""
    out = list(s.dropped_guards)
    if isinstance(s.stmt, n.BufferStore) and access.kind == "read":
        for node in walk(s.stmt.value):
            if not isinstance(node, n.Select):
                continue
            branches = (node.true_value, node.false_value)
            if any(x is access.node for b in branches for x in walk(b)):
                try:
                    condition_set(node.condition, s.space)
                except NotAffineError:
                    out.append(node.condition)
    return out


def _unique(exprs) -> tuple[n.Expr, ...]:
    out: list[n.Expr] = []
    for e in exprs:
        if not any(e == x for x in out):
            out.append(e)
    return tuple(out)


def _find_buffer(func: n.PrimFunc, ref: n.Buffer | str) -> n.Buffer:
    buffers = [p for p in func.params if isinstance(p, n.Buffer)]
    for node in walk(func.body):
        candidate = getattr(node, "buffer", None)
        if isinstance(candidate, n.Buffer) and not any(candidate is b for b in buffers):
            buffers.append(candidate)
    if isinstance(ref, n.Buffer):
        if any(ref is b for b in buffers):
            return ref
        raise NotFoundError(f"buffer {ref.name} is not used in {func.name}")
    found = [b for b in buffers if b.name == ref]
    if len(found) == 1:
        return found[0]
    if not found:
        names = ", ".join(b.name for b in buffers) or "none"
        raise NotFoundError(f"no buffer {ref!r} in {func.name}; buffers: {names}")
    raise NotFoundError(f"{len(found)} buffers are called {ref!r} in {func.name}; "
                        "pass the Buffer itself")


def _bare_space(buffer: n.Buffer) -> isl.Space:
    space = isl.Space.set_alloc(isl.DEFAULT_CONTEXT, 0, len(buffer.shape))
    return space.set_tuple_name(isl.dim_type.set, buffer.name)


def _index_vars(model: Model, ndim: int) -> tuple[n.Var, ...]:
    """Names for the indices that no parameter of ``model`` uses."""
    taken = {model.names.name(v) for v in model.names.objects()}
    base = _INDEX_NAMES if ndim <= len(_INDEX_NAMES) else tuple(f"i{k}" for k in range(ndim))
    out = []
    for name in base[:ndim]:
        while name in taken:
            name += "_"
        out.append(n.Var(name))
    return tuple(out)


_LOWER = {n.Ge: "<=", n.Gt: "<"}
_UPPER = {n.Lt: "<", n.Le: "<="}


def _pretty(cond: n.Expr, index_vars) -> str:
    """``cond`` with each index's bounds written as one chain: ``0 <= i < 14``."""
    return " or ".join(_pretty_and(d, index_vars) for d in _split(cond, n.Or))


def _pretty_and(cond: n.Expr, index_vars) -> str:
    rest, lows, highs = [], {}, {}
    for c in _split(cond, n.And):
        var = c.a if isinstance(c, n.Compare) else None
        if any(var is v for v in index_vars) and type(c) in _LOWER and id(var) not in lows:
            lows[id(var)] = f"{show(c.b)} {_LOWER[type(c)]} "
        elif any(var is v for v in index_vars) and type(c) in _UPPER and id(var) not in highs:
            highs[id(var)] = f" {_UPPER[type(c)]} {show(c.b)}"
        else:
            rest.append(show(c))
    chains = [f"{lows.get(id(v), '')}{v.name}{highs.get(id(v), '')}" for v in index_vars
              if id(v) in lows or id(v) in highs]
    return " and ".join(chains + rest)


def _split(cond: n.Expr, op) -> list[n.Expr]:
    if isinstance(cond, op):
        return _split(cond.a, op) + _split(cond.b, op)
    return [cond]
