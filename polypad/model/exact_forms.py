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

from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.substitute import substitute

from .affine import AffineSpace
from .overflow import wraps_somewhere
from .to_ir import pw_aff_to_expr

WIDE = "int64"


def exact_form(pa: isl.PwAff, vars: list[n.Var], names, space: AffineSpace, where: isl.Set,
               runs: isl.Set | None = None, dtype: str | None = None) -> n.Expr:
    """``pa`` over ``vars`` (parameters named by ``names``) as the reader's form under
    ``where``, in ``dtype`` where it is a constant; where that form may wrap at a point
    of ``runs`` (default ``where``), computed in int64 and cast back to its dtype when
    the exact value fits it there, or left in int64 where it may not.  Otherwise (no
    wider form can be written) the reader's form."""
    runs = where if runs is None else runs
    out = pw_aff_to_expr(pa, vars, names, context=where, dtype=dtype)
    if not may_wrap(out, space, runs) or out.dtype == WIDE:
        return out
    try:
        wide = wide_form(pa, vars, names, where)
    except NotAffineError:
        return out
    if wide is None:
        return out
    narrow = n.Cast(out.dtype, wide)
    if not may_wrap(narrow, space, runs):
        return narrow
    # Where the exact value may not fit the dtype (an int8 counter's box is short, and
    # T.assume or an empty loop may keep it in), the int64 form is the value: exact,
    # and a loop or shape whose value leaves its dtype is refused where it is used.
    return out if may_wrap(wide, space, runs) else wide


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
    """Whether an operation of ``e`` may leave its dtype at a point of ``where``
    (``True`` also where isl cannot tell)."""
    try:
        return wraps_somewhere(e, space, where)
    except isl.Error:
        return True
