"""New loop counters must hold the values their loops take.

A band maps instances to new loop counters (``{ S[i] -> [-i] }``), and the
regenerated loops count in the dtype of the counters they replace, the widest
of them (:func:`counter_dtype`: ``int64`` for the int64 loops TVM prints for
large shapes, ``int32`` by default).  Where the original ran with its own
counters inside their dtypes, the new counters may leave that dtype (``-i`` at
``i = -2**31`` for int32 counters): the rebuilt function would then fail, or
wrap, where the original ran.  ISL decides it: the band's image of the domain,
with every parameter and original counter inside its dtype and the
``T.assume`` facts before the statement's item holding
(:func:`.exact_bounds.assumed`: a program that breaks one has no meaning),
must lie in the new counters' range; otherwise the primitive is refused with
the instance, the parameters and the value.  Counters narrower than int32 are
widened first (:func:`widened`), as ``fuse`` widens past its dtype.
"""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl

from analyses.evidence import Counterexample
from analyses.instances import instance, point_coordinates
from polypad.errors import IllegalTransformError
from polypad.ir import dtypes
from polypad.ir.ranges import dtype_range
from polypad.model.overflow import point_outside, within_dtypes

#: The dtype of the loops a band regenerates over statements without loops of their own.
COUNTER_DTYPE = "int32"


def counter_dtype(placements) -> str:
    """The dtype the new loops of ``placements`` count in: the widest of the statements'
    loop counters (those the band replaces, and those around a block rebuilt inside
    loops, which its band may map), or :data:`COUNTER_DTYPE` when there are none."""
    out = None
    for p in placements:
        for var in p.statement.loop_vars:
            out = var.dtype if out is None else dtypes.wider(out, var.dtype)
    return out or COUNTER_DTYPE


def widened(model, placements, dtype: str,
            known: Mapping[str, isl.Set] | None = None) -> str:
    """``dtype`` (:func:`counter_dtype`), or, for counters narrower than
    :data:`COUNTER_DTYPE` whose new values would leave it where the original runs
    (``-i`` at ``i = -128`` for int8), the narrowest wider one up to
    :data:`COUNTER_DTYPE` that holds them (the old counters are cast back);
    :data:`COUNTER_DTYPE` where none does (:func:`check_counters_fit` then refuses,
    naming its range)."""
    if not dtypes.is_int(dtype) or dtypes.bits(dtype) >= dtypes.bits(COUNTER_DTYPE):
        return dtype
    for candidate in dict.fromkeys((dtype, "int16", COUNTER_DTYPE)):
        if dtypes.bits(candidate) < dtypes.bits(dtype) or (
                candidate.startswith("int") != dtype.startswith("int")
                and dtypes.bits(candidate) == dtypes.bits(dtype)):
            continue  # never narrower, and no same-width change of signedness
        if _first_outside(placements, candidate, known) is None:
            return candidate
    return COUNTER_DTYPE


def check_counters_fit(model, placements, names: tuple[str, ...], primitive: str,
                       dtype: str = COUNTER_DTYPE,
                       known: Mapping[str, isl.Set] | None = None) -> None:
    """Refuse when a new loop counter of ``placements`` (band placements of statements
    of ``model``) leaves ``dtype`` (:func:`counter_dtype`) at an instance the original
    runs; ``names`` are the new loops' names.  ``known`` maps a statement's name to
    what holds of the parameters where it runs (:func:`.exact_bounds.assumed`)."""
    found = _first_outside(placements, dtype, known)
    if found is None:
        return
    s, k, pa, point = found
    lo, hi = dtype_range(dtype)
    indices, params = point_coordinates(point)
    where = instance(model, s, indices)
    at = pa.eval(point)
    message = (f"{primitive}: the new loop {names[k]!r} would count to {at.to_python()} "
               f"at {where}" + (f" with {_show(params)}" if params else "")
               + f", outside the range [{lo}, {hi}] of its {dtype} counter, "
               "where the original runs")
    raise IllegalTransformError(message, evidence=Counterexample(
        message, instances=(where,), params=params))


def _first_outside(placements, dtype: str, known: Mapping[str, isl.Set] | None):
    """``(statement, band member, its function, a point)`` where a new counter leaves
    ``dtype`` at an instance the original runs, or ``None``."""
    for p in placements:
        s = p.statement
        ran = within_dtypes(s.domain, s.space)
        if known is not None and s.name in known:
            ran = _assuming(ran, known[s.name])
        for k, pa in enumerate(p.band):
            point = point_outside(pa, dtype, ran)
            if point is not None:
                return s, k, pa, point
    return None


def _assuming(ran: isl.Set, facts: isl.Set) -> isl.Set:
    """``ran`` where the parameter facts ``facts`` hold, those of them over parameters
    ``ran`` does not have projected out (knowing less is safe: it refuses more)."""
    param = isl.dim_type.param
    have = {ran.get_dim_name(param, k) for k in range(ran.dim(param))}
    for k in reversed(range(facts.dim(param))):
        if facts.get_dim_name(param, k) not in have:
            facts = facts.project_out(param, k, 1)
    return ran.intersect_params(facts)  # ISL's error rises (polypad.isl_failure)


def _show(params: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())
