"""Axis separators and the physical shape (RFC 0039).

A transformed buffer of N axes with axis separators at positions
``s1 < s2 < ...`` is stored as ``len(separators) + 1`` physical axes: each
group of transformed axes between two separators is flattened row-major.
With no separators a buffer is flat (one physical axis), as in TVM.

A group's extent is the product of its extents, which may leave their dtype
where each of them fits it (``n * m`` for int32 ``n`` and ``m`` near
``2**16``).  TVM's flattening computes it in the shape's dtype (int64 for the
large shapes it prints in int64) and lets it wrap.  Here interval arithmetic
over every parameter value the shape allows (each extent ``>= 0``, each
parameter in its dtype) decides it: the product is written in its factors'
dtype where it fits, else over int64 (``T.Cast("int64", n) * T.Cast("int64",
m)``), as TVM widens large shapes (over int32 for narrower factors whose
product it holds).  int64 has no wider form, and needs none
here: no buffer of ``2**63`` elements or more can be allocated, so the extent
of every physical buffer that exists fits int64 (``n * m`` over int64 ``n`` and
``m`` leaves int64 only for sizes no buffer has, and is written as it is).  A
flattened index is computed in its group's dtype: its exact value lies below
the group's extent, so the ``+`` and ``*`` that build it give the exact value.
"""

from __future__ import annotations

from collections.abc import Sequence

from polypad.ir import Expr, Var, as_expr, dtypes
from polypad.ir import nodes as n
from polypad.ir.ranges import Ranges, dtype_range

WIDE = "int64"


def groups(ndim: int, separators: Sequence[int]) -> list[range]:
    """The transformed axes of each physical axis, in order."""
    bounds = [0, *separators, ndim]
    return [range(lo, hi) for lo, hi in zip(bounds, bounds[1:])]


def group_shape(shape: Sequence, separators: Sequence[int], logical: Sequence = ()) -> tuple:
    """The physical shape: the product of the extents in each group, in a dtype that
    holds it for every parameter value the shape allows (``logical``: the logical shape,
    whose symbolic extents are taken to be ``>= 0``, as each of ``shape``'s)."""
    bounds = {v: (0, dtype_range(v.dtype)[1]) for v in (*logical, *shape)
              if isinstance(v, Var) and dtypes.is_int(v.dtype)}
    return tuple(_product([shape[k] for k in axes], bounds)
                 for axes in groups(len(shape), separators))


def _product(values: list, bounds: dict):
    """``values``' product: an int for constants, else an expression that does not wrap."""
    exprs = [v for v in values if not isinstance(v, int)]
    if not exprs:
        out = 1
        for v in values:
            out *= v
        return out
    dtype = exprs[0].dtype
    for e in exprs[1:]:
        dtype = dtypes.wider(dtype, e.dtype)
    ranges = Ranges(bounds)
    hi = 1
    for v in values:
        hi *= v if isinstance(v, int) else max(ranges.of(v)[1], 0)
    if hi > dtype_range(dtype)[1]:
        # The narrowest of int32 and int64 that holds it.  int64 has no wider form, and
        # needs none: a buffer of 2**63 elements or more cannot be allocated, so every
        # physical extent that exists fits int64.
        dtype = "int32" if hi <= dtype_range("int32")[1] and dtypes.bits(dtype) < 32 \
            else WIDE
    out = None
    for v in values:
        if isinstance(v, n.Cast) and v.value.dtype == dtype and _fits(ranges, v):
            v = v.value  # an exact cast down from the wide form (exact_form): undo it
        term = as_expr(v, dtype) if isinstance(v, int) else (
            v if v.dtype == dtype else n.Cast(dtype, v))
        out = term if out is None else out * term
    return out


def _fits(ranges: Ranges, cast: n.Cast) -> bool:
    lo, hi = dtype_range(cast.dtype)
    inner = ranges.of(cast.value)
    return inner is not None and lo <= inner[0] and inner[1] <= hi


def flatten_indices(indices: Sequence[Expr], shape: Sequence, separators: Sequence[int]
                    ) -> tuple[Expr, ...]:
    """Physical indices of transformed ``indices``: row-major within each group."""
    out = []
    physical = group_shape(shape, separators)
    for axes, extent in zip(groups(len(shape), separators), physical, strict=True):
        if isinstance(extent, int):  # a constant group over int32's range counts in int64
            dtype = "int32" if extent - 1 <= dtype_range("int32")[1] else "int64"
        else:
            dtype = extent.dtype
        group = [as_expr(indices[k], "int32") for k in axes]
        # No narrower than the widest index (an int64 index of a group of constant size).
        for index in group:
            if dtypes.bits(index.dtype) > dtypes.bits(dtype):
                dtype = index.dtype
        flat = None
        for k, index in zip(axes, group, strict=True):
            term = _in(index, dtype)
            flat = term if flat is None else flat * _in(as_expr(shape[k], dtype), dtype) + term
        out.append(flat if flat is not None else as_expr(0, dtype))
    return tuple(out)


def _in(e: Expr, dtype: str) -> Expr:
    """``e`` cast up to ``dtype`` where it is narrower."""
    if e.dtype == dtype or dtypes.bits(e.dtype) >= dtypes.bits(dtype):
        return e
    return n.Cast(dtype, e)
