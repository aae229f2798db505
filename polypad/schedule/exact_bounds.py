"""Loop bounds and guards read back from an ISL AST, in forms that do not wrap where
the loops run.

ISL builds the loops of a rescheduled nest (:mod:`.reschedule_ast`,
:mod:`.location_ast`) over mathematical integers; the IR computes in the
counters' dtype.  The reader's form ISL gives back (``(n - 1) // 3 + 1``,
``3 * io + ii < n``) is exact wherever no operation of it leaves its dtype, and
that holds nearly always.  Where it does not -- ``n - 1`` at ``n = -2**31`` makes
the loop above run 715827883 times where it ran none, ``3 * io + ii`` at the last
``io`` for ``n = 2**31 - 1`` wraps to a negative and lets an instance through that
the original never ran -- the bound or guard is written over ``int64`` copies of
its variables, exact there, and a bound is cast back to its dtype, which its exact
value fits.  ISL decides both "may wrap" questions over the points where the
expression runs (:func:`polypad.model.overflow.wraps_somewhere`): the enclosing
loops' box and guards, and the context of the parameters.
"""

from __future__ import annotations

import islpy as isl

from analyses.evidence import Counterexample
from polypad.errors import IllegalTransformError, NotAffineError
from polypad.ir import nodes as n
from polypad.model import AffineSpace, set_to_condition, to_set
from polypad.model.affine import to_pw_aff
from polypad.model.exact_forms import exact_form, no_exact_form
from polypad.model.exact_forms import may_wrap as _may_wrap
from polypad.transform.facts_at import facts_at


def guard(cond: n.Expr, vars: list[n.Var], names, space: AffineSpace,
          where: isl.Set, known: isl.Set | None = None) -> n.Expr:
    """``cond`` (an AST condition over ``vars``) as ISL's reader form under ``where``,
    or, where that form may wrap at a point of ``where`` (and of the parameter set
    ``known``: :func:`assumed`), with its constraints written over int64
    (``set_to_condition(..., exact=True)``); refused (:class:`IllegalTransformError`,
    with the parameters) where even that may wrap, over int64 variables."""
    s = to_set(cond, space)
    out = set_to_condition(s, vars, names, context=where)
    runs = _within(where, known)
    if _may_wrap(out, space, runs):
        try:
            out = set_to_condition(s, vars, names, context=where, exact=True)
        except NotAffineError:
            # int64 has no wider form: a guard that may wrap where it runs is refused.
            raise with_evidence(no_exact_form(out, space, runs)) from None
    return out


def bound(e: n.Expr, vars: list[n.Var], names, space: AffineSpace, where: isl.Set,
          known: isl.Set | None = None) -> n.Expr:
    """The integer ``e`` (a loop's min or extent over ``vars``) as ISL's reader form under
    ``where``; where that form may wrap at a point of ``where``, computed in int64 and
    cast back to its dtype (``T.Cast("int32", (T.Cast("int64", n) - 1) // 3 + 1)``),
    when the exact value fits it there, or left in int64 where it may not.  Where isl
    cannot write one (a constant past int64), ``e`` itself if it cannot wrap there;
    otherwise refused (:class:`IllegalTransformError`, with the parameters).  ``known``
    is :func:`guard`'s.  Never raises :class:`NotAffineError`: a bound is never left in
    a form that was not checked."""
    if isinstance(e, n.IntImm):
        return e
    runs = _within(where, known)
    try:
        return exact_form(to_pw_aff(e, space), vars, names, space, where, runs,
                          dtype=e.dtype)
    except IllegalTransformError as err:
        raise with_evidence(err) from None
    except NotAffineError:
        if not _may_wrap(e, space, runs):
            return e
        raise with_evidence(no_exact_form(e, space, runs)) from None


def with_evidence(err: IllegalTransformError) -> IllegalTransformError:
    """``err`` (:func:`~polypad.model.exact_forms.no_exact_form`) with its parameters as
    a :class:`~analyses.evidence.Counterexample`."""
    if err.evidence is None:
        err.evidence = Counterexample(str(err), params=getattr(err, "params", {}))
    return err


def fits(e: n.Expr, space: AffineSpace, where: isl.Set, known: isl.Set | None = None) -> bool:
    """Whether no operation of ``e`` leaves its dtype at a point of ``where`` where
    ``known`` holds: ``False`` also where ISL cannot tell."""
    return not _may_wrap(e, space, _within(where, known))


def assumed(func: n.PrimFunc, stmt: n.Stmt, names) -> isl.Set:
    """What holds just before ``stmt`` of ``func`` runs -- its enclosing loops and
    branches, and the ``T.assume``\\ s before it (:func:`.facts_at`) -- as a parameter
    set named as ``names`` names the variables; variables ``names`` does not know are
    projected out.  A program that breaks an assumption has no meaning, so a bound
    that wraps only there wraps nowhere that counts."""
    facts = facts_at(func, stmt, assumptions=True)
    ctx = facts.ctx
    param = isl.dim_type.param
    targets = []
    for k in reversed(range(ctx.dim(param))):
        var = facts.facts.names.lookup(ctx.get_dim_name(param, k))
        if var is None or var not in names:
            ctx = ctx.project_out(param, k, 1)
        else:
            targets.append(var)
    targets.reverse()
    # Through names of their own first: the two namings may swap two names.
    for k in range(len(targets)):
        ctx = ctx.set_dim_name(param, k, f"_assumed{k}")
    for k, var in enumerate(targets):
        ctx = ctx.set_dim_name(param, k, names.name(var))
    return ctx


def _within(where: isl.Set, known: isl.Set | None) -> isl.Set:
    if known is None:
        return where
    # ISL's error rises (polypad.isl_failure): its operation limit is the budget's,
    # and a failure leaves nothing of this computation to go on with.
    return where.intersect_params(known)
