"""An index shifted to a box's corner, in a form that does not wrap where it runs.

``store_at`` and the caches placed at a loop (:mod:`.location_box`) rewrite
``B[i]`` as ``B_local[i - corner]``, in isl's reader form of the difference
(``T.min(i, i + 4 * i_0 - n + 4)`` where the box is clipped at an edge).  The
exact value lies in the box, so in the index's dtype; a ``+``, ``-`` or ``*``
that wraps on the way to the index's root is harmless (the executed index is
the exact one wrapped, :mod:`polypad.model.overflow`), but an operand of
``min``, ``max``, ``//``, ``%`` or a condition that leaves the dtype picks the
wrong value, where the original's own index computed the right one.  isl
decides it over the instances of the statement that run (every counter and
parameter in its dtype, the ``T.assume`` facts before it holding): where the
reader's form may wrap, the index is written over int64 copies of its
variables and cast back (its value fits); where even that may wrap -- an int64
index, which has no wider form -- the primitive is refused with the instance,
the parameters and the operation.
"""

from __future__ import annotations

import islpy as isl

from analyses.evidence import Counterexample
from analyses.instances import instance, point_coordinates
from polypad.errors import IllegalTransformError, NotAffineError
from polypad.ir import nodes as n
from polypad.ir.ranges import dtype_range
from polypad.model.affine import to_pw_aff
from polypad.model.exact_forms import WIDE, wide_form
from polypad.model.overflow import point_outside, within_dtypes, wrapping_operation
from polypad.script import script


def exact_index(index: n.Expr, s, model, runs: isl.Set, where: str) -> n.Expr:
    """``index`` (a shifted index of statement ``s`` of ``model``), or its form over
    int64 cast back, where ``index`` may wrap at a point of ``runs`` (:func:`runs_of`);
    refused where no form is exact there."""
    culprit = _wrapping(index, s, runs)
    if culprit is None:
        return index
    try:
        wide = wide_form(to_pw_aff(index, s.space), list(s.loop_vars), model.names,
                         s.domain)
    except NotAffineError:
        wide = None
    if wide is not None and _wrapping(wide, s, runs) is None:
        return wide if index.dtype == WIDE else n.Cast(index.dtype, wide)
    raise _refusal(index, culprit, s, model, runs, where)


def runs_of(s, known: isl.Set | None) -> isl.Set:
    """The instances of ``s`` that run: every counter and parameter in its dtype, and
    the parameter facts ``known`` (:func:`.exact_bounds.assumed`) holding."""
    ran = within_dtypes(s.domain, s.space)
    if known is None:
        return ran
    return ran.intersect_params(known)  # ISL's error rises (polypad.isl_failure)


def _wrapping(e: n.Expr, s, runs: isl.Set) -> n.Expr | None:
    # ISL's error rises (polypad.isl_failure): counted as "may wrap", its
    # operation limit made a refusal claiming a wrap instead of "out of budget".
    return wrapping_operation(e, s.space, runs, modular_root=True)


def _refusal(index: n.Expr, culprit: n.Expr, s, model, runs: isl.Set,
             where: str) -> IllegalTransformError:
    try:
        point = point_outside(to_pw_aff(culprit, s.space), culprit.dtype, runs)
    except NotAffineError:
        point = None
    at, params = "", {}
    instances = ()
    if point is not None:
        indices, params = point_coordinates(point)
        found = instance(model, s, indices)
        instances = (found,)
        at = f" at {found}" + (f" with {', '.join(f'{k}={v}' for k, v in params.items())}"
                              if params else "")
    lo, hi = dtype_range(culprit.dtype)
    message = (f"{where}: the new index {script(index)} computes {script(culprit)} outside "
               f"the range [{lo}, {hi}] of its {culprit.dtype}{at}, where the original "
               "runs; no wider form of it is exact there (int64 has none)")
    return IllegalTransformError(message, evidence=Counterexample(
        message, instances=instances, params=params))
