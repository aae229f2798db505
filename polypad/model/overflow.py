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

import islpy as isl

from polypad.concurrency import Recent
from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n

from .affine import AffineSpace, to_pw_aff
from .ranges import Range, dtype_range, wrapping_operations


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
    """
    candidates = wrapping_operations(expr, bounds, modular_root=modular_root)
    if candidates and bounds is None:
        # The dtype ranges of the loop counters let nearly every `i + 1` through;
        # the box of the domain (cached, as callers ask many questions of one
        # domain) clears most of them at an interval's cost instead of ISL's.
        box = _box(domain, space)
        if box:
            candidates = wrapping_operations(expr, box, modular_root=modular_root)
    for e in candidates:
        try:
            pa = to_pw_aff(e, space)
        except NotAffineError:
            return e
        lo, hi = dtype_range(e.dtype)
        outside = pa.lt_set(_const(pa, lo)).union(pa.gt_set(_const(pa, hi)))
        if domain.is_params():
            hit = domain.intersect_params(outside.params())
        else:
            hit = domain.intersect(outside)
        if not hit.is_empty():
            return e
    return None


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
