"""New loop counters must hold the values their loops take.

A band maps instances to new loop counters (``{ S[i] -> [-i] }``), and the
regenerated loops count in the dtype of the counters they replace, the widest
of them (:func:`counter_dtype`: ``int64`` for the int64 loops TVM prints for
large shapes, ``int32`` by default).  Where the original ran with its own
counters inside their dtypes, the new counters may leave that dtype (``-i`` at
``i = -2**31`` for int32 counters): the rebuilt function would then fail, or
wrap, where the original ran.  ISL decides it: the band's image of the domain,
with every parameter and original counter inside its dtype, must lie in the
new counters' range; otherwise the primitive is refused with the instance,
the parameters and the value.
"""

from __future__ import annotations

import islpy as isl

from analyses.evidence import Counterexample
from analyses.instances import instance, point_coordinates
from polypad.errors import IllegalTransformError
from polypad.ir import dtypes
from polypad.ir.ranges import dtype_range
from polypad.model.overflow import within_dtypes

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


def check_counters_fit(model, placements, names: tuple[str, ...], primitive: str,
                       dtype: str = COUNTER_DTYPE) -> None:
    """Refuse when a new loop counter of ``placements`` (band placements of statements
    of ``model``) leaves ``dtype`` (:func:`counter_dtype`) at an instance the original
    runs; ``names`` are the new loops' names."""
    lo, hi = dtype_range(dtype)
    for p in placements:
        s = p.statement
        ran = within_dtypes(s.domain, s.space)
        for k, pa in enumerate(p.band):
            value = pa.intersect_domain(ran)
            ctx = value.get_ctx()
            low = isl.PwAff.val_on_domain(ran, isl.Val(str(lo), context=ctx))
            high = isl.PwAff.val_on_domain(ran, isl.Val(str(hi), context=ctx))
            outside = value.lt_set(low).union(value.gt_set(high))
            if outside.is_empty():
                continue
            point = outside.sample_point()
            indices, params = point_coordinates(point)
            where = instance(model, s, indices)
            at = pa.eval(point)
            message = (f"{primitive}: the new loop {names[k]!r} would count to {at.to_python()} "
                       f"at {where}" + (f" with {_show(params)}" if params else "")
                       + f", outside the range [{lo}, {hi}] of its {dtype} counter, "
                       "where the original runs")
            raise IllegalTransformError(message, evidence=Counterexample(
                message, instances=(where,), params=params))


def _show(params: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())
