"""The integer points of an isl set, ready to draw.

A panel has at most two axes, so :func:`set_points` fixes every symbolic
parameter to the value the caller gives (``params={"n": 6}``) and every set
dimension beyond two to a value (a ``slice={"k": 0}``, or a small multiple's
panel), then enumerates what is left.  isl enumerates the points exactly;
:func:`extent` gives a set's bounding box without enumerating, so that a
large set can be summarised (:mod:`polypad.viz.density`) instead of drawn
point by point.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl

from polypad.arguments import expect
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.isl_failure import rise_if_exhausted

MAX_POINTS = 4096  # points drawn one by one in a panel; beyond, a density picture
MAX_ENUMERATED = 1 << 18  # points enumerated at all (a touched region, a density's bins)


@dataclass(frozen=True)
class Points:
    """The points of one tuple (``S0[i, j]``) of a set, on at most two axes."""

    name: str  # the tuple name, "" when the set has none
    axes: tuple[str, ...]  # the names of the drawn dimensions (zero to two)
    points: tuple[tuple[int, ...], ...]  # sorted, one coordinate per axis
    fixed: tuple[tuple[str, int], ...] = ()  # the sliced dimensions and their values
    params: tuple[tuple[str, int], ...] = ()  # the parameters and the values they were given


def as_union_set(value, where: str) -> isl.UnionSet:
    """``value`` (an isl set of any kind, or its text) as an ``isl.UnionSet``."""
    if isinstance(value, str):
        try:
            return isl.UnionSet(value)
        except isl.Error as err:
            rise_if_exhausted(err)  # the budget ran out, not the user's typo
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


def fix_dims(s: isl.Set, fixed: Mapping, where: str) -> tuple[isl.Set, list[int],
                                                               list[tuple[str, int]]]:
    """``s`` with the dimensions named (or numbered) in ``fixed`` fixed; the positions
    left free, and the (name, value) of those fixed."""
    names = dim_names(s)
    kept, sliced = [], []
    for k, dim in enumerate(names):
        value = fixed.get(dim, fixed.get(k))
        if value is None:
            kept.append(k)
        else:
            sliced.append((dim, int(value)))
            s = s.fix_val(isl.dim_type.set, k, isl.Val(str(int(value))))
    return s, kept, sliced


def count(s: isl.Set, name: str, where: str) -> int:
    """The number of points of ``s`` (parameters fixed); unbounded sets are refused."""
    if not s.is_bounded():
        raise ArgumentValueError(f"{where}: {name or 'the set'} is unbounded once the "
                                 "parameters are fixed; nothing finite to draw")
    return s.count_val().to_python()


def extent(s: isl.Set, dims: list[int]) -> list[tuple[int, int]]:
    """The smallest and largest value of each of ``dims`` over ``s`` (not empty,
    bounded, without parameters)."""
    return [(s.dim_min_val(k).to_python(), s.dim_max_val(k).to_python()) for k in dims]


def coordinates(s: isl.Set, dims: list[int] | None = None) -> list[tuple[int, ...]]:
    """Every point of ``s`` (bounded, without parameters) as the tuple of its
    coordinates on ``dims`` (all by default), sorted."""
    raw: list[isl.Point] = []
    s.foreach_point(raw.append)
    dims = list(range(s.dim(isl.dim_type.set))) if dims is None else dims
    return sorted(tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in dims)
                  for p in raw)


def enumerate_points(s: isl.Set, params: Mapping[str, int], where: str
                     ) -> list[tuple[int, ...]]:
    """Every point of ``s`` with the parameters fixed, on all its dimensions."""
    name = s.get_tuple_name() or ""
    s = fix_params(s, params, where)
    total = count(s, name, where)
    if total > MAX_ENUMERATED:
        raise ArgumentValueError(f"{where}: {name or 'the set'} has {total} points, more "
                                 f"than the {MAX_ENUMERATED} a picture enumerates; fix "
                                 "smaller parameters")
    return coordinates(s)


def panel_values(s: isl.Set, dims: list[int]) -> list[tuple[int, ...]]:
    """The values ``dims`` take over ``s`` (bounded, without parameters): one small
    multiple's panel each."""
    keep = set(dims)
    projected = s
    for k in reversed(range(s.dim(isl.dim_type.set))):
        if k not in keep:
            projected = projected.project_out(isl.dim_type.set, k, 1)
    return coordinates(projected)


def set_points(s: isl.Set, params: Mapping[str, int], fixed: Mapping, where: str) -> Points:
    """The points of ``s`` with parameters and slice dimensions fixed.

    ``fixed`` maps a dimension (its name or position) to a value; the other
    dimensions, at most two, are drawn.
    """
    expect(params, Mapping, "params", where, what="a dict of parameter values")
    expect(fixed, Mapping, "slice", where, what="a dict of dimension values")
    name = s.get_tuple_name() or ""
    given = tuple((p, int(params[p])) for p in param_names(s) if p in params)
    s = fix_params(s, params, where)
    names = dim_names(s)
    s, kept, sliced = fix_dims(s, fixed, where)
    if len(kept) > 2:
        free = ", ".join(names[k] for k in kept)
        raise ArgumentValueError(
            f"{where}: a panel has two axes but {name or 'the set'} has {len(kept)} free "
            f"dimensions ({free}); fix the others with slice={{name: value}}")
    total = count(s, name, where)
    if total > MAX_ENUMERATED:
        raise ArgumentValueError(
            f"{where}: {name or 'the set'} has {total} points, more than the "
            f"{MAX_ENUMERATED} a picture enumerates; fix smaller parameters or slice it")
    return Points(name, tuple(names[k] for k in kept), tuple(coordinates(s, kept)),
                  tuple(sliced), given)


def param_names(s) -> list[str]:
    """The names of the parameters of ``s`` (a Set or Map)."""
    kind = isl.dim_type.param
    return [s.get_dim_name(kind, k) for k in range(s.dim(kind))]
