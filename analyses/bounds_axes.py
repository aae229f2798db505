"""Which axes of an access the bounds analysis cannot prove inside: each axis on
its own.

An access the analysis leaves to run time (:func:`analyses.bounds_precondition`)
is often undecided on one axis only.  The embedding lookup::

    for i, j in T.grid(n, 64):
        C[i, j] = A[B[i], j]              # A: T.Buffer((v, 64), "float32")

reads a row ``B[i]`` nothing bounds, but its column ``j`` runs over A's
second extent by its loop.  Checking both axes at run time costs a compare
pair per element for nothing.  Each axis ``k`` of an access is decided
alone: isl builds the instances at which the access may run (those of
:meth:`~analyses.bounds.Checker.running`: its statement's domain, the lazy
operands around it, the integer assumptions before it -- a superset where a
condition could not be modelled) and the one index function of that axis,
``{ S[y] -> e : e = index_k(y) }`` (the access relation projected onto that
output dimension, wrapped around its dtype where ``+ - *`` may leave it),
and asks for the parameter values at which some instance has ``e < 0`` or
``e >= extent_k``.  The axis is proved where none of those values is
allowed by the precondition the call is checked against.  An axis whose
index isl cannot read (``B[i]``, ``i * j``, a ``//`` of a wrapped operand)
stays undecided.

An element is inside its buffer exactly when it is inside on every axis, so
checking only the undecided axes at run time rejects exactly the accesses
the full check rejects, wherever the precondition holds.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.lanes import lane_count
from polypad.ir.views import is_view
from polypad.model.affine import to_pw_aff
from polypad.model.overflow import wrapped_pw_aff, wrapping_operation
from polypad.model.ranges import dtype_range

from .bounds import Checker


def undecided_axes(checker: Checker, access, allowed: isl.Set) -> tuple[int, ...]:
    """The axes of ``access`` (an access of :func:`~analyses.bounds.site_accesses`)
    that may leave their extent at some parameter value of ``allowed``: every axis
    of a vector or view access (checked through lanes or the memory a view
    shares, not axis by axis), else those :func:`axis_outside` cannot clear."""
    node = access.node
    axes = tuple(range(len(node.indices)))
    if is_view(node.buffer) or any(lane_count(i) != 1 for i in node.indices):
        return axes
    out = []
    for axis in axes:
        outside = axis_outside(checker, access, axis)
        if outside is None or not outside.intersect(allowed).is_empty():
            out.append(axis)
    return tuple(out)


def axis_outside(checker: Checker, access, axis: int) -> isl.Set | None:
    """The parameter values at which axis ``axis`` of ``access``'s index leaves
    ``0 <= index < extent`` at an instance that may run; None where that index is
    not quasi-affine or may wrap inside a ``//``, ``%``, ``min`` or ``max``."""
    node = access.node
    index = node.indices[axis]
    extent = node.buffer.shape[axis]
    extent = extent if isinstance(extent, n.Expr) else n.IntImm(int(extent))
    space, where, _ = checker.running(access)
    try:
        value = to_pw_aff(index, space)
        bound = to_pw_aff(extent, space)
    except NotAffineError:
        return None
    if wrapping_operation(index, space, where, modular_root=True) is not None:
        return None
    if not (where.is_subset(value.domain()) and where.is_subset(bound.domain())):
        return None  # not defined at every instance: no claim about the others
    lo, hi = dtype_range(index.dtype)
    fits = value.ge_set(_constant(value, lo)).intersect(value.le_set(_constant(value, hi)))
    if not where.is_subset(fits):
        # Only `+ - *` wrap (checked above): the executed index is the exact one
        # wrapped around its dtype.
        value = wrapped_pw_aff(value, index.dtype)
    below = value.lt_set(_constant(value, 0))
    above = value.ge_set(bound)
    return below.union(above).intersect(where).params()


def _constant(like: isl.PwAff, value: int) -> isl.PwAff:
    """The constant ``value`` on the domain of ``like``."""
    return isl.PwAff.val_on_domain(like.domain(), isl.Val(str(value), context=like.get_ctx()))
