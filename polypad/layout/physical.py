"""Axis separators and the physical shape (RFC 0039).

A transformed buffer of N axes with axis separators at positions
``s1 < s2 < ...`` is stored as ``len(separators) + 1`` physical axes: each
group of transformed axes between two separators is flattened row-major.
With no separators a buffer is flat (one physical axis), as in TVM.
"""

from __future__ import annotations

from collections.abc import Sequence

from polypad.ir import Expr, as_expr


def groups(ndim: int, separators: Sequence[int]) -> list[range]:
    """The transformed axes of each physical axis, in order."""
    bounds = [0, *separators, ndim]
    return [range(lo, hi) for lo, hi in zip(bounds, bounds[1:])]


def _product(values):
    out = 1
    for v in values:
        out = out * v if isinstance(out, int) and isinstance(v, int) else \
            as_expr(out, "int32") * v
    return out


def group_shape(shape: Sequence, separators: Sequence[int]) -> tuple:
    """The physical shape: the product of the extents in each group."""
    return tuple(_product(shape[k] for k in axes) for axes in groups(len(shape), separators))


def flatten_indices(indices: Sequence[Expr], shape: Sequence, separators: Sequence[int]
                    ) -> tuple[Expr, ...]:
    """Physical indices of transformed ``indices``: row-major within each group."""
    out = []
    for axes in groups(len(shape), separators):
        flat = None
        for k in axes:
            term = as_expr(indices[k], "int32")
            flat = term if flat is None else flat * shape[k] + term
        out.append(flat if flat is not None else as_expr(0, "int32"))
    return tuple(out)
