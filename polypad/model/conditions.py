"""Conditions over quasi-affine operands as ISL sets.

:func:`to_set` turns a boolean expression — comparisons of quasi-affine
integer expressions combined with ``and``, ``or``, ``not``, constants,
``T.likely`` and ``T.if_then_else`` — into the :class:`isl.Set` of points
of the space where it holds.  Anything else (a comparison of floats, a
buffer load, a boolean parameter) raises :class:`NotAffineError`.

The conversion itself, :func:`condition_set`, is in :mod:`.affine`: a
condition's sides are quasi-affine expressions and an expression's
``T.if_then_else`` holds a condition, so the two recurse into each other.

>>> to_set(4 * io + ii < 14, [io, ii])   # { [io, ii] : ii <= 13 - 4io }
"""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl

from polypad.ir import nodes as n

from .affine import AffineSpace, as_space, condition_set

__all__ = ["condition_set", "to_set"]


def to_set(cond: n.Expr, space: AffineSpace | Sequence[n.Var] = ()) -> isl.Set:
    """The set of points of ``space`` where the boolean ``cond`` holds.

    ``space`` is an :class:`AffineSpace` or the variables to use as set
    dims; other variables become parameters.
    """
    return condition_set(cond, as_space(space))
