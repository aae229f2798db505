"""The integer points of an isl set, ready to draw.

A picture has at most two axes, so :func:`set_points` fixes every symbolic
parameter to the value the caller gives (``params={"n": 6}``) and every set
dimension beyond two to a slice value (``slice={"k": 0}``), then enumerates
what is left.  isl enumerates the points exactly; the count is checked first
so that a large set is refused with a message instead of drawn for minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError

MAX_POINTS = 4096  # beyond this an SVG is too large to read, and slow to render


@dataclass(frozen=True)
class Points:
    """The points of one tuple (``S0[i, j]``) of a set, on at most two axes."""

    name: str  # the tuple name, "" when the set has none
    axes: tuple[str, ...]  # the names of the drawn dimensions (zero to two)
    points: tuple[tuple[int, ...], ...]  # sorted, one coordinate per axis
    fixed: tuple[tuple[str, int], ...] = ()  # the sliced dimensions and their values


def as_union_set(value, where: str) -> isl.UnionSet:
    """``value`` (an isl set of any kind, or its text) as an ``isl.UnionSet``."""
    if isinstance(value, str):
        try:
            return isl.UnionSet(value)
        except isl.Error as err:
            raise ArgumentValueError(f"{where}: cannot read {value!r} as an isl set: {err}") \
                from None
    if isinstance(value, isl.BasicSet):
        value = value.to_set()
    if isinstance(value, isl.Set):
        return isl.UnionSet.from_set(value)
    if isinstance(value, isl.UnionSet):
        return value
    raise ArgumentTypeError(f"{where}: parameter set takes an isl Set, BasicSet, UnionSet or "
                            f"its text, not {type(value).__name__}")


def split(union: isl.UnionSet) -> list[isl.Set]:
    """The sets of each tuple of ``union``, sorted by tuple name (isl's order is a hash's)."""
    out: list[isl.Set] = []
    union.foreach_set(out.append)
    return sorted(out, key=lambda s: (s.get_tuple_name() or "", s.dim(isl.dim_type.set)))


def dim_names(s: isl.Set) -> list[str]:
    """The names of the set dimensions, ``x0, x1, ...`` where isl has none."""
    return [s.get_dim_name(isl.dim_type.set, k) or f"x{k}" for k in range(s.dim(isl.dim_type.set))]


def fix_params(s, params: Mapping[str, int], where: str):
    """``s`` (an isl Set or Map) with every parameter fixed and then projected out."""
    kind = isl.dim_type.param
    for k in range(s.dim(kind)):
        name = s.get_dim_name(kind, k)
        if name not in params:
            known = ", ".join(s.get_dim_name(kind, j) for j in range(s.dim(kind)))
            raise ArgumentValueError(
                f"{where}: the set has the symbolic parameter {name!r}; fix every one with "
                f"params={{...}} (parameters: {known})")
        s = s.fix_val(kind, k, isl.Val(str(int(params[name]))))
    return s.project_out(kind, 0, s.dim(kind))


def set_points(s: isl.Set, params: Mapping[str, int], fixed: Mapping, where: str) -> Points:
    """The points of ``s`` with parameters and slice dimensions fixed.

    ``fixed`` maps a dimension (its name or position) to a value; the other
    dimensions, at most two, are drawn.
    """
    expect(params, Mapping, "params", where, what="a dict of parameter values")
    expect(fixed, Mapping, "slice", where, what="a dict of dimension values")
    name = s.get_tuple_name() or ""
    s = fix_params(s, params, where)
    names = dim_names(s)
    kept, sliced = [], []
    for k, dim in enumerate(names):
        value = fixed.get(dim, fixed.get(k))
        if value is None:
            kept.append(k)
        else:
            sliced.append((dim, int(value)))
            s = s.fix_val(isl.dim_type.set, k, isl.Val(str(int(value))))
    if len(kept) > 2:
        free = ", ".join(names[k] for k in kept)
        raise ArgumentValueError(
            f"{where}: a picture has two axes but {name or 'the set'} has {len(kept)} free "
            f"dimensions ({free}); fix the others with slice={{name: value}}")
    if not s.is_bounded():
        raise ArgumentValueError(f"{where}: {name or 'the set'} is unbounded once the "
                                 "parameters are fixed; nothing finite to draw")
    count = s.count_val().to_python()
    if count > MAX_POINTS:
        raise ArgumentValueError(
            f"{where}: {name or 'the set'} has {count} points, more than the {MAX_POINTS} a "
            "picture can show; fix smaller parameters or slice it")
    raw: list[isl.Point] = []
    s.foreach_point(raw.append)
    coords = sorted(tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in kept)
                    for p in raw)
    return Points(name, tuple(names[k] for k in kept), tuple(coords), tuple(sliced))
