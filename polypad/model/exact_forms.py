"""Integer functions read back from isl in forms that do not wrap where they are used.

isl computes over mathematical integers; the IR computes in its variables' dtype.
The reader's form of an isl function (``(n + 3) // 4``, ``(n - 1) // 3 + 1``) is
exact wherever no operation of it leaves its dtype, nearly always.  Where one may
(``n + 3`` at ``n = 2**31 - 1``), :func:`exact_form` writes the function over
``int64`` copies of its variables, exact there, and casts it back to its dtype where
its value fits that (``T.Cast("int32", (T.Cast("int64", n) + 3) // 4)``), else leaves
it in ``int64``.  isl decides every "may wrap" question
(:func:`.overflow.wraps_somewhere`).
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import IllegalTransformError, NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.ranges import dtype_range
from polypad.ir.show import show
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter, walk

from .affine import AffineSpace, to_pw_aff
from .overflow import point_outside, wrapping_operation, wraps_somewhere
from .to_ir import pw_aff_to_expr

WIDE = "int64"


def exact_form(pa: isl.PwAff, vars: list[n.Var], names, space: AffineSpace, where: isl.Set,
               runs: isl.Set | None = None, dtype: str | None = None) -> n.Expr:
    """``pa`` over ``vars`` (parameters named by ``names``) as the reader's form under
    ``where``, in ``dtype`` where it is a constant; where that form may wrap at a point
    of ``runs`` (default ``where``), computed in int64 and cast back to its dtype when
    the exact value fits it there, or left in int64 where it may not; or with the
    constants of its quotients split off (``n // 4 + (n % 4 + 3) // 4`` for
    ``(n + 3) // 4``), which int64 needs, having no wider form.  Where no form is exact
    at every point of ``runs``, an :class:`IllegalTransformError` names one where the
    reader's form wraps: a form that wraps there would compute another value."""
    runs = where if runs is None else runs
    try:
        out = pw_aff_to_expr(pa, vars, names, context=where, dtype=dtype)
    except NotAffineError:
        # A constant or coefficient of isl's form that the variables' dtype cannot hold
        # (``(n + 99) // 200`` over an int8 ``n``): only int64 copies of them can.
        return _wide_only(pa, vars, names, space, where, runs, dtype)
    if not may_wrap(out, space, runs):
        return out
    candidates = []
    if out.dtype != WIDE:
        try:
            wide = wide_form(pa, vars, names, where)
        except NotAffineError:
            wide = None
        if wide is not None:
            candidates += [n.Cast(out.dtype, wide), wide]
    candidates += [split_quotients(c) for c in (out, *candidates)]
    for form in candidates:
        # Where the exact value may not fit the dtype (an int8 counter's box is short,
        # and T.assume or an empty loop may keep it in), the int64 form is the value:
        # exact, and a loop or shape whose value leaves its dtype is refused where it is
        # used.
        if not may_wrap(form, space, runs):
            return form
    raise no_exact_form(out, space, runs)


def _wide_only(pa: isl.PwAff, vars: list[n.Var], names, space: AffineSpace, where: isl.Set,
               runs: isl.Set, dtype: str | None) -> n.Expr:
    """:func:`exact_form` of ``pa`` whose reader form cannot be written in its variables'
    dtype: the form over int64 copies, cast back to that dtype (the widest of the
    variables ``pa`` uses) or else to ``dtype`` where its value fits it at every point
    of ``runs``, else left in int64.  Raises :class:`NotAffineError` where isl's form
    does not fit even int64, and :func:`no_exact_form`'s error where the int64 form
    wraps."""
    wide = wide_form(pa, vars, names, where)
    if wide is None:  # a constant past its dtype, or a variable that is no integer one
        return pw_aff_to_expr(pa, vars, names, context=where, dtype=WIDE)
    targets = dict.fromkeys(t for t in (_widest_dtype(wide), dtype) if t not in (None, WIDE))
    candidates = [*(n.Cast(t, wide) for t in targets), wide]
    candidates += [split_quotients(c) for c in candidates]
    for form in candidates:
        if not may_wrap(form, space, runs):
            return form
    raise no_exact_form(wide, space, runs)


def _widest_dtype(wide: n.Expr) -> str | None:
    """The widest dtype of the variables :func:`wide_form` casts to int64 in ``wide``."""
    out = None
    for node in walk(wide):
        if isinstance(node, n.Cast) and isinstance(node.value, n.Var):
            kind = node.value.dtype
            out = kind if out is None else dtypes.wider(out, kind)
        elif isinstance(node, n.Var) and node.dtype == WIDE:
            out = WIDE
    return out


def split_quotients(e: n.Expr) -> n.Expr:
    """``e`` with every ``(x + c) // d`` (constants ``c``, ``d > 0``) written as
    ``x // d + (x % d + c) // d``, equal for every ``x`` (``x = d * q + r``), which
    leaves the dtype only where ``x`` does: ``(n - 1) // 4 + 1`` wraps at the least
    ``n``, ``n // 4 + (n % 4 - 1) // 4 + 1`` nowhere."""

    class _Split(Rewriter):
        def visit_FloorDiv(self, node: n.FloorDiv):
            node = self.generic_visit(node)
            a, d = node.a, node.b
            if not (isinstance(a, n.Add | n.Sub) and isinstance(a.b, n.IntImm)
                    and isinstance(d, n.IntImm) and d.value > 0 and a.b.value != 0):
                return node
            x = a.a
            rest = type(a)(n.FloorMod(x, d), a.b)
            return n.Add(n.FloorDiv(x, d), n.FloorDiv(rest, d))

    return _Split().visit(e)


def no_exact_form(e: n.Expr, space: AffineSpace, runs: isl.Set) -> IllegalTransformError:
    """The refusal of ``e``, which may wrap at a point of ``runs`` and has no exact form:
    the operation, and a point (its loop counters, and its parameters, also held in the
    error's ``params``) where it wraps."""
    culprit = wrapping_operation(e, space, runs) or e
    params, counters = _wrap_point(culprit, space, runs)
    lo, hi = dtype_range(culprit.dtype)
    at = ", ".join(f"{k}={v}" for k, v in {**counters, **params}.items())
    message = (f"{show(e)} computes {show(culprit)} outside the range [{lo}, {hi}] "
               f"of its {culprit.dtype}" + (f" at {at}" if at else "")
               + ", a point where it is evaluated, and no form of it computes the exact "
               "value there (int64 has no wider form); bound the parameters with T.assume")
    # The model layer sits below analyses: a schedule primitive attaches the
    # Counterexample (:func:`polypad.schedule.exact_bounds.with_evidence`).
    error = IllegalTransformError(message)
    error.params = params
    return error


def _wrap_point(e: n.Expr, space: AffineSpace, runs: isl.Set) -> tuple[dict, dict]:
    """The parameters and the counters of a point of ``runs`` where ``e`` leaves its dtype
    (empty where isl cannot say)."""
    try:
        pa = to_pw_aff(e, space)
    except NotAffineError:
        return {}, {}
    # ISL's error rises (polypad.isl_failure): a refusal naming no point because
    # ISL ran out of operations would hide that the budget ran out.
    point = point_outside(pa, e.dtype, runs, space)
    if point is None:
        return {}, {}
    psp = point.get_space()
    params = {psp.get_dim_name(isl.dim_type.param, k):
              point.get_coordinate_val(isl.dim_type.param, k).to_python()
              for k in range(psp.dim(isl.dim_type.param))}
    counters = {} if runs.is_params() else {
        v.name: point.get_coordinate_val(isl.dim_type.set, k).to_python()
        for k, v in enumerate(space.dims)}
    return params, counters


def wide_form(pa: isl.PwAff, vars: list[n.Var], names, where: isl.Set) -> n.Expr | None:
    """``pa`` written over int64 copies of its variables, each the cast of the original
    (``None`` where a variable is not an integer one, or ``pa`` is a constant)."""
    copies: dict[n.Var, n.Var] = {}
    for var in vars:
        copies[var] = n.Var(var.name, WIDE)
    params: dict[str, n.Var] = {}
    for k in range(pa.dim(isl.dim_type.param)):
        name = pa.get_dim_name(isl.dim_type.param, k)
        var = names.lookup(name)
        if not isinstance(var, n.Var) or not dtypes.is_int(var.dtype):
            return None
        params[name] = copies.setdefault(var, n.Var(var.name, WIDE))
    expr = pw_aff_to_expr(pa, [copies[v] for v in vars], params, context=where)
    if expr.dtype != WIDE:
        return None  # a constant: no variable to widen
    return substitute(expr, {copy: (var if var.dtype == WIDE else n.Cast(WIDE, var))
                             for var, copy in copies.items()})


def may_wrap(e: n.Expr, space: AffineSpace, where: isl.Set) -> bool:
    """Whether an operation of ``e`` may leave its dtype at a point of ``where``.

    ISL's error rises (:mod:`polypad.isl_failure`): answering ``True`` on it made
    a form that ISL could not judge, its budget spent or its check failed, a
    refusal claiming the form wraps."""
    return wraps_somewhere(e, space, where)
