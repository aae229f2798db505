"""Where ISL's exact integers are the executed ones.

ISL (and :func:`polypad.model.to_pw_aff`) reads ``i + 2147483647`` as a
mathematical integer; executed on ``int32`` it wraps.  The two agree on a
set of points exactly when no operation of the expression leaves its
dtype's range there: then, by induction over the expression, every executed
value equals the exact one.  :func:`wraps_somewhere` decides that with ISL
on a given domain, after interval arithmetic (:mod:`.ranges`) has cleared
the operations that cannot wrap at all, which is nearly all of them.

A decider that answers an integer question with ISL asks this first; where
an operation may wrap it leaves the question to Z3, which models the
wrap-around exactly (:mod:`polypad.model.z3conv`).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polypad.concurrency import Recent
from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.ranges import Range, dtype_range, wrapping_operations
from polypad.ir.show import show
from polypad.ir.visitor import children

from .affine import AffineSpace, to_pw_aff
from .conditions import to_set


def wraps_somewhere(expr: n.Expr, space: AffineSpace, domain: isl.Set,
                    bounds: dict[n.Var, Range] | None = None, *,
                    modular_root: bool = False) -> bool:
    """Whether some operation of ``expr`` may wrap at a point of ``domain`` (over ``space``).

    ``False`` means ISL's exact reading of ``expr`` is its executed value at
    every point of ``domain``.  An operation ISL cannot read (not
    quasi-affine) counts as one that may wrap.
    """
    return wrapping_operation(expr, space, domain, bounds,
                              modular_root=modular_root) is not None


def wrapping_operation(expr: n.Expr, space: AffineSpace, domain: isl.Set,
                       bounds: dict[n.Var, Range] | None = None, *,
                       modular_root: bool = False) -> n.Expr | None:
    """An operation of ``expr`` that may wrap at a point of ``domain``, or ``None``.

    ``modular_root`` is :func:`.ranges.wrapping_operations`'s: for a buffer
    index, whose exact value a bounds check confines to the buffer.

    The values of the let-bound variables of ``space`` that ``expr`` reaches
    (transitively) are searched too: ISL reads such a variable as its value
    exactly (:func:`to_pw_aff`), so a value that wrapped when the let ran
    (``x: T.int8 = T.Cast("int8", j) + T.int8(100)``) is not the one ISL
    computes with, even where ``expr`` itself (``T.Cast("int32", x)``) cannot wrap.
    """
    roots = [(expr, modular_root), *let_values(expr, space, modular_root)]
    candidates = [e for root, modular in roots
                  for e in wrapping_operations(root, bounds, modular_root=modular)]
    if candidates and bounds is None:
        # The dtype ranges of the loop counters let nearly every `i + 1` through;
        # the box of the domain (cached, as callers ask many questions of one
        # domain) clears most of them at an interval's cost instead of ISL's.
        box = _box(domain, space)
        if box:
            candidates = [e for root, modular in roots
                          for e in wrapping_operations(root, box, modular_root=modular)]
    for e in candidates:
        try:
            pa = to_pw_aff(e, space)
        except NotAffineError:
            return e
        if not outside_points(pa, e.dtype, domain, space).is_empty():
            return e
    return None


def let_values(expr: n.Expr, space: AffineSpace, modular_root: bool = False
               ) -> list[tuple[n.Expr, bool]]:
    """The values of ``space``'s let-bound variables that ``expr`` reads, transitively
    (a value reading another let variable brings that one's value too), each with
    whether its wraps may be let through as a modular root's
    (:func:`.ranges.wrapping_operations`): where every read of the variable only
    feeds ``+``, ``-`` and ``*`` of its dtype up to ``expr``'s modular root
    (``A[2 * i + x - x]``), the wrapped value is the exact one modulo ``2**bits``,
    and so is the root."""
    if not space.lets:
        return []
    found: dict[n.Var, bool] = {}
    todo: list[tuple[n.Expr, bool]] = [(expr, modular_root)]
    while todo:
        root, root_modular = todo.pop()
        stack = [(root, root_modular)]
        while stack:
            node, modular = stack.pop()
            if isinstance(node, n.Var) and node in space.lets:
                # A read outside a modular position makes the value's wraps count.
                if found.get(node, True) and (node not in found or not modular):
                    found[node] = modular and found.get(node, True)
                    todo.append((space.lets[node], found[node]))
                continue
            ring = isinstance(node, (n.Add, n.Sub, n.Mul)) and dtypes.is_int(node.dtype)
            for child in children(node):
                if isinstance(child, n.Expr):
                    stack.append((child, modular and ring and child.dtype == node.dtype))
    return [(space.lets[var], modular) for var, modular in found.items()]


def outside_points(pa: isl.PwAff, dtype: str, where: isl.Set,
                   space: AffineSpace | None = None) -> isl.Set:
    """The points of ``where`` at which ``pa``'s exact value lies outside ``dtype``'s
    range; for a parameter set ``where``, its parameter values at which ``pa`` leaves
    the range somewhere in its domain.

    With ``space`` (that of ``pa``'s domain), only the points where every integer
    variable of ``space`` holds a value of its dtype (:func:`within_dtypes`): a point
    with ``n = 2**40`` for an int32 ``n`` is no execution, and would make every
    ``n - i`` look as if it wrapped.
    """
    lo, hi = dtype_range(dtype)
    outside = pa.lt_set(_const(pa, lo)).union(pa.gt_set(_const(pa, hi)))
    if where.is_params():
        hit = where.intersect_params(outside.params())
    else:
        hit = where.intersect(outside)
    return hit if space is None else within_dtypes(hit, space)


def point_outside(pa: isl.PwAff, dtype: str, where: isl.Set,
                  space: AffineSpace | None = None) -> isl.Point | None:
    """A point of :func:`outside_points` (where ``pa`` leaves ``dtype``), or ``None``
    where there is none: the evidence of a wrap."""
    hit = outside_points(pa, dtype, where, space)
    return None if hit.is_empty() else hit.sample_point()


@dataclass(frozen=True)
class Wrap:
    """The evidence of a wrap: at ``point`` (loop counters outer first, then the
    parameters, as ``(name, value)``) the exact value of ``operation`` is ``value``,
    outside the range of its ``dtype``.  The first such point in that order."""

    operation: n.Expr
    dtype: str
    value: int
    point: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        at = ", ".join(f"{name} = {v}" for name, v in self.point)
        return f"{show(self.operation)} = {self.value}" + (f" at {at}" if at else "")


def first_wrap(e: n.Expr, space: AffineSpace, where: isl.Set) -> Wrap | None:
    """The first point of ``where`` (a set over ``space``'s dims) at which ``e`` leaves
    its dtype (:func:`outside_points`), with its exact value there; ``None`` where there
    is none, or where isl cannot say (``e`` not quasi-affine).  ISL's error rises: the
    entry point answers it (:mod:`polypad.isl_failure`)."""
    try:
        pa = to_pw_aff(e, space)
        outside = outside_points(pa, e.dtype, where, space)
        if outside.is_empty():
            return None
        coords, params = first_point(pa, outside)
    except NotAffineError:
        return None
    names = [v.name for v in space.dims] + params
    return Wrap(e, e.dtype, coords[-1], tuple(zip(names, coords[:-1], strict=True)))


def first_point(pa: isl.PwAff, where: isl.Set) -> tuple[list[int], list[str]]:
    """The first point of ``where`` (its counters outer first, then the parameters, in
    lexicographic order) with ``pa``'s value there: ``(coordinates, parameter names)``,
    the coordinates being the counters, the parameters, then the value."""
    taken = isl.Map.from_pw_aff(pa.intersect_domain(where)).wrap().flatten()
    counters = where.dim(isl.dim_type.set)
    nparam = taken.dim(isl.dim_type.param)
    params = [taken.get_dim_name(isl.dim_type.param, k) for k in range(nparam)]
    flat = taken.move_dims(isl.dim_type.set, counters, isl.dim_type.param, 0, nparam)
    first = flat.lexmin()
    point = (first if not first.is_empty() else flat).sample_point()
    coords = [point.get_coordinate_val(isl.dim_type.set, k).to_python()
              for k in range(counters + nparam + 1)]
    return coords, params


def wrapped_pw_aff(pa: isl.PwAff, dtype: str) -> isl.PwAff:
    """``pa`` wrapped around into ``dtype``'s range, as fixed-width arithmetic does:
    ``(pa - lo) mod 2**bits + lo``, quasi-affine like ``pa``.  The executed value
    of an expression whose only wraps feed ``+``, ``-`` and ``*`` up to its root
    (``modular_root``) is its exact value wrapped so."""
    lo, hi = dtype_range(dtype)
    low = isl.PwAff.val_on_domain(pa.domain(), isl.Val(str(lo), context=pa.get_ctx()))
    return pa.sub(low).mod_val(isl.Val(str(hi - lo + 1), context=pa.get_ctx())).add(low)


def executed_set(cond: n.Expr, space: AffineSpace, domain: isl.Set) -> isl.Set:
    """The points of ``domain`` where ``cond`` holds as executed, wrap-arounds included.

    Without a wrap this is :func:`to_set`.  A comparison whose sides wrap only
    in the ``+ - *`` that lead to the side (``n - 1 < 0``, true at
    ``n = -2**31`` only exactly) compares the sides wrapped around
    (:func:`wrapped_pw_aff`).  Raises :class:`NotAffineError` where isl cannot
    say: a wrapped operand of ``//``, ``%``, ``min`` or ``max``, a cast.
    """
    if wrapping_operation(cond, space, domain) is None:
        return to_set(cond, space)
    match cond:
        case n.And(a=a, b=b):
            return executed_set(a, space, domain).intersect(executed_set(b, space, domain))
        case n.Or(a=a, b=b):
            return executed_set(a, space, domain).union(executed_set(b, space, domain))
        case n.Not(a=a):
            return executed_set(a, space, domain).complement()
        case n.Call(op="likely", args=(arg,)):
            return executed_set(arg, space, domain)
        case n.Compare(a=a, b=b) if dtypes.is_int(a.dtype):
            sides = []
            for side in (a, b):
                inner = wrapping_operation(side, space, domain, modular_root=True)
                if inner is not None:
                    raise NotAffineError("it may wrap around", inner)
                pa = to_pw_aff(side, space)
                if wrapping_operation(side, space, domain) is not None:
                    pa = wrapped_pw_aff(pa, side.dtype)
                sides.append(pa)
            return getattr(sides[0], _COMPARE[type(cond)])(sides[1])
    raise NotAffineError("it may wrap around", cond)


_COMPARE = {n.Eq: "eq_set", n.Ne: "ne_set", n.Lt: "lt_set", n.Le: "le_set", n.Gt: "gt_set",
            n.Ge: "ge_set"}


def within_dtypes(s: isl.Set, space: AffineSpace) -> isl.Set:
    """``s`` (a set over ``space``'s dims, or a parameter set) where every set
    dimension and every parameter that names an integer IR variable lies in
    that variable's dtype range -- the only values an execution gives it."""
    dims = [] if s.is_params() else [(isl.dim_type.set, k, v) for k, v in enumerate(space.dims)]
    params = [(isl.dim_type.param, k,
               space.names.lookup(s.get_dim_name(isl.dim_type.param, k)))
              for k in range(s.dim(isl.dim_type.param))]
    for kind, pos, var in dims + params:
        if isinstance(var, n.Var) and dtypes.is_int(var.dtype):
            lo, hi = dtype_range(var.dtype)
            s = s.lower_bound_val(kind, pos, isl.Val(str(lo), context=s.get_ctx()))
            s = s.upper_bound_val(kind, pos, isl.Val(str(hi), context=s.get_ctx()))
    return s


_BOXES = Recent(64)


def _box(domain: isl.Set, space: AffineSpace) -> dict[n.Var, Range]:
    """The ranges of ``space``'s dims and parameters over ``domain`` (see :func:`set_ranges`),
    remembered for the last few domains."""
    found = _BOXES.get((domain, space))
    if found is not None:
        return found
    dims = () if domain.is_params() else space.dims
    if len(dims) != domain.dim(isl.dim_type.set):
        return {}  # not a set over this space's dims: no box to speak of
    return _BOXES.put((domain, space), set_ranges(domain, dims, space.names))


def _const(pa: isl.PwAff, value: int) -> isl.PwAff:
    domain = isl.Set.universe(pa.get_domain_space())
    return isl.PwAff.val_on_domain(domain, isl.Val(str(value), context=pa.get_ctx()))


def set_ranges(domain: isl.Set, dims, names) -> dict[n.Var, Range]:
    """The ranges of ``dims`` (the set dimensions of ISL set ``domain``) and of its parameters.

    ``names`` maps ISL parameter names back to IR variables.  A dimension
    ISL finds unbounded keeps its dtype's range.
    """
    nparam = domain.dim(isl.dim_type.param)
    params = [names.lookup(domain.get_dim_name(isl.dim_type.param, k)) for k in range(nparam)]
    flat = domain.move_dims(isl.dim_type.set, domain.dim(isl.dim_type.set),
                            isl.dim_type.param, 0, nparam)
    out: dict[n.Var, Range] = {}
    if flat.is_empty():
        return out
    for k, var in enumerate([*dims, *params]):
        if not isinstance(var, n.Var) or not dtypes.is_int(var.dtype):
            continue
        lo, hi = dtype_range(var.dtype)
        low, high = flat.dim_min_val(k), flat.dim_max_val(k)
        if low.is_int():
            lo = max(lo, low.to_python())
        if high.is_int():
            hi = min(hi, high.to_python())
        if lo <= hi:
            out[var] = (lo, hi)
    return out
