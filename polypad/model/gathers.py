"""The elements a data-dependent index may name: the over-approximation of a gather
(``A[X[i]]``) or a scatter (``B[X[i]] = v``) in :func:`polypad.model.extract_gathers`.

Nobody knows ``X[i]`` before the program runs, so an axis whose index reads
memory is taken to name any element of the buffer's extent on that axis --
and, where isl can say more, only the values the index takes for *some*
value of each load it reads: each load becomes a fresh variable ranging over
its dtype, the rest of the index is converted as usual, and the variables are
projected out.  ``T.min(T.max(0, X[i]), 15)`` (TVM's clipped ``take``) names
``0..15``; ``tx * 4 + X[i] % 4`` names thread ``tx``'s own four elements.
That range is used only where no operation of the index may wrap at any such
value (:func:`polypad.model.overflow.wrapping_operation`): the executed index
is then the exact one, so an access that passes its run-time bounds check
touches an element of the range.  Otherwise (``X[i] + 1`` wraps at the
dtype's largest value) the extent alone bounds it.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.ranges import dtype_range
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter

from .affine import AffineSpace, to_pw_aff
from .conditions import to_set
from .overflow import wrapping_operation


def any_element(relation: isl.Map, buffer: n.Buffer, axes: dict[int, n.Expr],
                space: AffineSpace, domain: isl.Set, name: str) -> isl.Map:
    """``relation`` (``space -> name[...]``) with each axis ``k`` of ``axes`` (its
    data-dependent index) replaced by every element it may name: inside the
    buffer's extent, and among :func:`value_range`'s values where that is known.
    ``S[i] -> A[e] : 0 <= e < 16`` for the gather ``A[X[i]]`` of a 16-element ``A``."""
    dims = tuple(n.Var(f"e{k}") for k in range(len(buffer.shape)))
    target = AffineSpace(dims, tuple_name=name, names=space.names, ctx=space.ctx)
    box = target.universe
    count = len(buffer.shape)
    for k, index in axes.items():
        relation = relation.project_out(isl.dim_type.out, k, 1).insert_dims(
            isl.dim_type.out, k, 1).set_tuple_name(isl.dim_type.out, name)
        extent = buffer.shape[k]
        extent = extent if isinstance(extent, n.Expr) else n.IntImm(int(extent))
        box = box.intersect(to_set(n.And(dims[k] >= 0, dims[k] < extent), target))
        values = value_range(index, space, domain)
        if values is not None:  # S[y] -> [e] lifted to S[y] -> name[..., e, ...]
            lifted = values.insert_dims(isl.dim_type.out, 0, k).add_dims(
                isl.dim_type.out, count - k - 1).set_tuple_name(isl.dim_type.out, name)
            relation = relation.intersect(lifted)
    return relation.intersect_range(box).coalesce()


class _LoadsAsVariables(Rewriter):
    """Each outermost load of an expression as a fresh variable (one per distinct
    load)."""

    def __init__(self):
        self.fresh: dict[n.BufferLoad, n.Var] = {}

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.Var:
        var = self.fresh.get(node)
        if var is None:
            var = self.fresh[node] = n.Var(f"_load{len(self.fresh)}", node.dtype)
        return var


def value_range(index: n.Expr, space: AffineSpace, domain: isl.Set) -> isl.Map | None:
    """``S[y] -> [e]``: every value ``index`` (an expression over ``space``) takes at an
    instance of ``domain`` for some value of each load it reads, each within its
    dtype; None where isl cannot say (a load that is no integer scalar, a rest that is
    not quasi-affine, an operation that may wrap: see the module docstring)."""
    lets = {}
    for var, value in space.lets.items():  # in scope order: earlier ones substituted
        lets[var] = substitute(value, lets)
    rewriter = _LoadsAsVariables()
    expr = rewriter.visit(substitute(index, lets))
    fresh = list(rewriter.fresh.values())
    if not fresh or not all(dtypes.is_int(v.dtype) for v in fresh):
        return None
    depth = len(space.dims)
    wide = AffineSpace((*space.dims, *fresh), tuple_name=space.tuple_name,
                       names=space.names, ctx=space.ctx)
    loads = wide.universe  # each load's value within its dtype
    for k, var in enumerate(fresh):
        lo, hi = dtype_range(var.dtype)
        loads = loads.lower_bound_val(isl.dim_type.set, depth + k, wide.val(lo))
        loads = loads.upper_bound_val(isl.dim_type.set, depth + k, wide.val(hi))
    where = loads.intersect(domain.insert_dims(isl.dim_type.set, depth, len(fresh))
                            .set_tuple_name(space.tuple_name))
    try:
        value = to_pw_aff(expr, wide)
        if wrapping_operation(expr, wide, where) is not None:
            return None
    except NotAffineError:
        return None
    # On every instance, not only those of ``domain``: the caller restricts the relation.
    graph = isl.Map.from_pw_aff(value.intersect_domain(loads))
    return graph.project_out(isl.dim_type.in_, depth, len(fresh)).set_tuple_name(
        isl.dim_type.in_, space.tuple_name)


__all__ = ["any_element", "value_range"]
