"""ISL sets and piecewise affine functions back to IR expressions.

The way back from :mod:`.affine` and :mod:`.conditions`.  ISL objects are
read through their constraint and coefficient API — never by parsing ISL's
C-flavoured strings, whose ``/`` and ``%`` are not floor operations.  ISL's
integer divisions ``floor(f / d)`` become ``FloorDiv``; a division that only
appears as ``f - d * floor(f / d)`` is written as ``f % d``, so
``{ [i] : i mod 4 = 0 }`` comes back as ``i % 4 == 0``.

>>> set_to_condition(isl.Set("{ [i] : 0 <= i < 14 }"), [i])   # i >= 0 and i < 14
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import islpy as isl

from polypad.errors import DTypeError, NotAffineError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.ir.operators import cast, logical_and, logical_or
from polypad.ir.ranges import dtype_range, wrapping_operations

from .isl_helpers import involved_positions

# A linear form: coordinate key -> integer coefficient; key None is the constant.
# Keys are ("dim", p), ("param", p) and ("div", k).
_Form = dict


def set_to_condition(
    s: isl.Set | isl.BasicSet,
    vars: Sequence[n.Var],
    params: Mapping[str, n.Var] | Iterable[n.Var] | Names = (),
    *,
    context: isl.Set | None = None,
    exact: bool = False,
) -> n.Expr:
    """A boolean IR expression that holds exactly at the points of ``s``.

    ``vars`` are the IR variables for the set dims, in order; ``params``
    resolves ISL parameter names (a name -> Var mapping, Vars matched by
    name, or the model's :class:`Names`).  With ``context``, constraints
    implied by it are left out (``s.gist(context)``).

    ISL's constraints hold over the integers, and the IR's int32 arithmetic
    wraps: ``i < n + 2`` is not ``i <= n + 1`` at ``n = 2**31 - 2``.  With
    ``exact``, a constraint whose arithmetic may leave its dtype for some
    values of the variables' dtypes is written over int64 copies of them
    (``T.Cast("int64", n) + 2``), so that it means ISL's set wherever it is
    evaluated: for a condition handed to Z3, or run.  Without it, the
    reader's form (the one a user reads in a rewritten program) is kept.

    Raises :class:`NotAffineError` when a constant, coefficient or divisor of
    ISL's form does not fit the IR's integers even in int64.
    """
    s = isl.Set.from_basic_set(s) if isinstance(s, isl.BasicSet) else s
    _check_dims(s.dim(isl.dim_type.set), vars)
    if context is not None:
        s = s.gist(context)
    s = s.coalesce().compute_divs()
    reader = _Reader(vars, params)
    wide = _Reader(vars, params, wide=True) if exact else None
    disjuncts = []
    for bs in s.get_basic_sets():
        bs = bs.remove_redundancies()
        try:
            divs = reader.local(bs)
            conjuncts = []
            for c in bs.get_constraints():
                if reader.implied_by_dtype(c):
                    continue
                cond = reader.constraint(c, divs)
                if wide is not None and wrapping_operations(cond):
                    cond = _exactly(wide, c, divs)
                conjuncts.append(cond)
        except DTypeError as err:  # a divisor past int32 (a mod 2**31), for one
            raise NotAffineError(f"ISL's form of {bs} cannot be written in IR: {err}") \
                from None
        disjuncts.append(logical_and(*conjuncts) if conjuncts else n.BoolImm(True))
    if not disjuncts:
        return n.BoolImm(False)
    if any(isinstance(d, n.BoolImm) for d in disjuncts):
        return n.BoolImm(True)
    return logical_or(*disjuncts)


def pw_aff_to_expr(
    pa: isl.PwAff | isl.Aff,
    vars: Sequence[n.Var],
    params: Mapping[str, n.Var] | Iterable[n.Var] | Names = (),
    *,
    context: isl.Set | None = None,
    dtype: str | None = None,
) -> n.Expr:
    """An integer IR expression equal to ``pa`` on its domain.

    Pieces that make up the minimum (or maximum) of their functions become
    ``T.min`` (``T.max``): ``{ [4] : n >= 4; [n] : n < 4 }`` is ``T.min(n, 4)``.
    Other pieces become nested ``T.if_then_else``; the last piece's
    condition is implied (outside the domain of ``pa`` the expression's value
    is unspecified).  ``vars``/``params``/``context`` are as in
    :func:`set_to_condition`.  The expression has the widest dtype of the
    variables it uses, its constants too (``T.min(n, T.int64(4))`` for an
    int64 ``n``); ``dtype`` (default int32) is the dtype of a constant result.

    Raises :class:`NotAffineError` when a coefficient or constant of ISL's
    form does not fit the variables' dtype (``2147483648 * n`` in ``int32``):
    the caller keeps the expression it had.
    """
    try:
        return _pw_aff_to_expr(pa, vars, params, context, dtype)
    except DTypeError as err:
        raise NotAffineError(f"ISL's form of {pa} cannot be written in IR: {err}") from None


def _pw_aff_to_expr(pa, vars, params, context, dtype) -> n.Expr:
    pa = isl.PwAff.from_aff(pa) if isinstance(pa, isl.Aff) else pa
    _check_dims(pa.dim(isl.dim_type.in_), vars)
    if context is not None:
        pa = pa.gist(context)
    pa = _single_piece(pa) or pa.coalesce()
    reader = _Reader(vars, params)
    pieces = pa.get_pieces()
    if not pieces:
        raise PolypadError(f"cannot convert the function with an empty domain {pa} to IR")
    folded = _extremum(pa, [aff for _, aff in pieces])
    if folded is not None:
        node, affs = folded
        exprs = _render(reader, affs, dtype)
        out = exprs[0]
        for e in exprs[1:]:
            out = node(out, e)
        return out
    exprs = _render(reader, [aff for _, aff in pieces], dtype)
    out = exprs[-1]
    for (where, _), e in zip(reversed(pieces[:-1]), reversed(exprs[:-1]), strict=True):
        cond = set_to_condition(where, vars, params)
        out = n.Select(cond, e, out)
    return out


def _single_piece(pa: isl.PwAff) -> isl.PwAff | None:
    """``pa.coalesce()`` for a ``pa`` of one piece with a domain free of floor
    divisions, computed without coalescing the domain; ``None`` for any other ``pa``.

    Of one piece only its function is written out (the domain is implied), and
    coalescing changes that function only by substituting the equalities of the
    domain's affine hull (ISL's ``exploit_equalities``), which the hull gives as
    well: on a 64-deep nest's instance domains (unions of basic sets in 64
    dimensions) the coalesce took some 2 ms a call, the hull a tenth of that.
    The domain of the answer is the hull (a superset), which nothing reads.
    """
    if pa.n_piece() != 1:
        return None
    ((domain, aff),) = pa.get_pieces()
    if any(bs.dim(isl.dim_type.div) for bs in domain.get_basic_sets()):
        return None  # the hull of a set with existentials: left to coalesce
    hull = isl.Set.from_basic_set(domain.affine_hull())
    out = isl.PwAff.from_aff(aff).intersect_domain(hull)
    return out if out.n_piece() == 1 else None  # an empty domain: coalesce says so


def _render(reader: _Reader, affs: list[isl.Aff], dtype: str | None) -> list[n.Expr]:
    """``affs`` as IR of one dtype: the widest of their variables' (a narrower piece is
    cast to it), or ``dtype`` (int32 when ``None``) when all of them are constants,
    so that ``T.min(n, 4)`` of an int8 ``n`` is ``T.min(n, T.int8(4))``."""
    exprs: list[n.Expr | None] = [None if aff.is_cst() else reader.aff(aff) for aff in affs]
    target = _widest([e.dtype for e in exprs if e is not None], dtype or "int32")
    return [reader.aff(aff, target) if e is None else cast(target, e)
            for aff, e in zip(affs, exprs, strict=True)]


def _widest(found: list[str], default: str) -> str:
    """The widest of the integer dtypes ``found``, or ``default`` when there are none."""
    out = None
    for dtype in found:
        out = dtype if out is None else dtypes.wider(out, dtype)
    return default if out is None else out


def extremum_candidates(affs: list[isl.Aff]) -> list[isl.Aff] | None:
    """The distinct functions of ``affs``, constants last, where a min or max of them
    is worth asking about (two or three, none with a floor division); else ``None``."""
    distinct: list[isl.Aff] = []
    for aff in affs:
        if not any(aff.plain_is_equal(d) for d in distinct):
            distinct.append(aff)
    # Extents are the min or max of two or three plain functions; trying every
    # combination of many pieces, or of pieces with floor divisions, costs
    # seconds on the prover's hot path and never folds.
    if not 2 <= len(distinct) <= 3 or any(aff.dim(isl.dim_type.div) for aff in distinct):
        return None
    distinct.sort(key=lambda aff: aff.is_cst())
    return distinct


def _extremum(pa: isl.PwAff, affs: list[isl.Aff]) -> tuple[type, list[isl.Aff]] | None:
    """``(Min or Max, affs)`` when ``pa`` is, on its domain, the minimum (maximum) of
    its pieces' distinct functions, constants last; else ``None``.  ISL decides it."""
    distinct = extremum_candidates(affs)
    if distinct is None:
        return None
    # pa is their minimum where, on each piece, no function lies below the piece's
    # own (which is one of them).  The same question as pa.is_equal(min of them),
    # piece by piece: on a 64-deep nest's domains 0.001 s where that took 0.08 s.
    pieces = pa.get_pieces()
    for node, beats in ((n.Min, isl.Aff.lt_set), (n.Max, isl.Aff.gt_set)):
        if all(beats(other, aff).intersect(where).is_empty()
               for where, aff in pieces for other in distinct):
            return node, distinct
    return None


def _exactly(wide: _Reader, c: isl.Constraint, divs: list) -> n.Expr:
    """Constraint ``c`` over int64 copies of its variables, checked not to wrap; ``divs``
    from :meth:`_Reader.local` (linear forms, the same for either reader)."""
    cond = wide.constraint(c, divs)
    if wrapping_operations(cond):
        raise NotAffineError(f"ISL's constraint {c} may leave int64 on the variables' "
                             "ranges: it cannot be written exactly in IR")
    return cond


def _check_dims(count: int, vars: Sequence[n.Var]) -> None:
    if count != len(vars):
        raise PolypadError(f"the ISL object has {count} dims but {len(vars)} variables were given")


class _Reader:
    """Reads constraints and affs of one dim/param naming into IR."""

    def __init__(self, vars: Sequence[n.Var], params, *, wide: bool = False) -> None:
        self.vars = list(vars)
        self.params = params
        # Read every integer variable narrower than int64 as an int64 copy of itself.
        self.wide = wide

    # ------------------------------------------------------------ coordinates

    def param(self, name: str) -> n.Var:
        params = self.params
        if isinstance(params, Names):
            found = params.lookup(name)
        elif isinstance(params, Mapping):
            found = params.get(name)
        else:
            found = next((v for v in params if v.name == name), None)
        if found is None:
            raise PolypadError(f"no IR variable was given for the ISL parameter {name!r}")
        return found

    def form(self, obj, dim_type: isl.dim_type, scale: int = 1) -> _Form:
        """The linear form of a constraint or aff, times ``scale``, with integer coefficients."""
        form: _Form = {}
        for kind, dt in (("dim", dim_type), ("param", isl.dim_type.param),
                         ("div", isl.dim_type.div)):
            positions = range(obj.dim(dt)) if kind == "div" else involved_positions(obj, dt)
            for p in positions:
                c = _frac(obj.get_coefficient_val(dt, p)) * scale
                if c:
                    # Params are keyed by name: a div's aff may order them differently.
                    key = obj.get_dim_name(dt, p) if kind == "param" else p
                    form[(kind, key)] = _integer(c)
        const = _frac(obj.get_constant_val()) * scale
        if const:
            form[None] = _integer(const)
        return form

    def local(self, obj) -> list:
        """For each div of ``obj``'s local space: (numerator form, denominator)."""
        divs = []
        for k in range(obj.dim(isl.dim_type.div)):
            d = obj.get_div(k)
            den = int(_frac(d.get_denominator_val()))
            divs.append((self.form(d, isl.dim_type.in_, den), den))
        return divs

    # ------------------------------------------------------------ rendering

    def constraint(self, c: isl.Constraint, divs: list) -> n.Expr:
        """``c`` (``form >= 0`` or ``form == 0``) as a comparison; ``divs`` from :meth:`local`.

        A constant or coefficient outside the variables' dtype (``n + 2147483648 >= i``
        for an int32 ``n``, which isl writes for ``n``, ``i`` near the end of int32) is
        written in int64, every term cast: exact where the int32 sum would wrap.
        Raises :class:`NotAffineError` when even that cannot hold it.
        """
        terms, const = self.terms(self.form(c, isl.dim_type.set), divs)
        try:
            return self._comparison(c, terms, const)
        except DTypeError:
            pass
        wide = [(k, t if t.dtype == "int64" else n.Cast("int64", t)) for k, t in terms]
        try:
            return self._comparison(c, wide, const)
        except DTypeError as err:
            raise NotAffineError(f"ISL's constraint {c} cannot be written in IR: {err}") \
                from None

    def _comparison(self, c: isl.Constraint, terms: list, const: int) -> n.Expr:
        pos = [(k, t) for k, t in terms if k > 0]
        neg = [(-k, t) for k, t in terms if k < 0]
        # A side without terms is a constant of the other side's dtype.
        dtype = _widest([t.dtype for _, t in terms], "int32")
        if _has_var(neg, self.vars) and not _has_var(pos, self.vars):
            # Keep the set's own variables on the left: ``i < n``, not ``n >= i + 1``.
            if c.is_equality():
                return _sum(neg, 0, dtype).equal(_sum(pos, const, dtype))
            return _sum(neg, 0, dtype) < _sum(pos, const + 1, dtype)
        if c.is_equality():
            if not pos:
                return _sum(neg, 0, dtype).equal(const)
            return _sum(pos, 0, dtype).equal(_sum(neg, -const, dtype))
        if not pos:
            # -N + c >= 0, an upper bound: N < c + 1 reads like a loop bound.
            return _sum(neg, 0, dtype) < const + 1
        if not neg:
            return _sum(pos, 0, dtype) >= -const
        return _sum(pos, 0, dtype) >= _sum(neg, -const, dtype)

    def implied_by_dtype(self, c: isl.Constraint) -> bool:
        """Whether ``c`` bounds one integer variable by no more than its dtype does
        (``n <= 2147483647`` for an int32 ``n``): true wherever the expression is
        evaluated, and its constant may not even fit the dtype."""
        if c.is_equality():
            return False
        form = self.form(c, isl.dim_type.set)
        keys = [k for k in form if k is not None]
        if len(keys) != 1 or keys[0][0] == "div":
            return False
        var = self.coordinate(keys[0], [])
        if not dtypes.is_int(var.dtype):
            return False
        lo, hi = dtype_range(var.dtype)
        coef, const = form[keys[0]], form.get(None, 0)
        return min(coef * lo, coef * hi) + const >= 0

    def aff(self, aff: isl.Aff, dtype: str = "int32") -> n.Expr:
        """``aff`` as IR; ``dtype`` is the dtype of a constant ``aff``."""
        den = int(_frac(aff.get_denominator_val()))
        divs = self.local(aff)
        terms, const = self.terms(self.form(aff, isl.dim_type.in_, den), divs)
        value = _value(terms, const, dtype)
        # An aff with a denominator is integral on its domain, so floor is exact.
        return value if den == 1 else n.FloorDiv(value, n.IntImm(den, value.dtype))

    def terms(self, form: _Form, divs: list) -> tuple[list, int]:
        """``form`` as (coefficient, term) pairs plus a constant, with mods recognised."""
        form = dict(form)
        mods: list = []
        for k, (num, den) in enumerate(divs):
            c = form.get(("div", k), 0)
            if c == 0 or c % den:
                continue
            m = -c // den
            # c * floor(f/d) == m * (f mod d) - m * f: worth it when -m*f cancels terms.
            rest = _axpy(form, num, -m)
            rest.pop(("div", k), None)
            if _support(rest) < _support(form) - 1:
                form = rest
                mods.append((m, k))
        terms = []
        for key in sorted((k for k in form if k is not None), key=_key_order):
            terms.append((form[key], self.coordinate(key, divs)))
        for m, k in mods:
            num, den = divs[k]
            f_terms, f_const = self.terms(num, divs)
            f = _value(f_terms, f_const)
            terms.append((m, n.FloorMod(f, n.IntImm(den, f.dtype))))
        return terms, form.get(None, 0)

    def coordinate(self, key, divs: list) -> n.Expr:
        kind, p = key
        if kind in ("dim", "param"):
            var = self.vars[p] if kind == "dim" else self.param(p)
            if self.wide and dtypes.is_int(var.dtype) and dtypes.bits(var.dtype) < 64:
                return n.Cast("int64", var)
            return var
        num, den = divs[p]
        f_terms, f_const = self.terms(num, divs)
        f = _value(f_terms, f_const)
        return n.FloorDiv(f, n.IntImm(den, f.dtype))


def _has_var(terms: list, vars: list) -> bool:
    return any(any(t is v for v in vars) for _, t in terms)


def _key_order(key) -> tuple:
    kind, p = key
    return ({"dim": 0, "param": 1, "div": 2}[kind], str(p) if kind == "param" else p)


def _frac(val: isl.Val) -> Fraction | int:
    if val.is_int():  # nearly always: parsing the text is the slow way
        return val.to_python()
    return Fraction(val.to_str())


def _integer(x: Fraction) -> int:
    if x.denominator != 1:
        raise AssertionError(f"non-integral coefficient {x}")  # caller scaled by the denominator
    return int(x)


def _axpy(form: _Form, other: _Form, scale: int) -> _Form:
    out = dict(form)
    for key, c in other.items():
        v = out.get(key, 0) + scale * c
        if v:
            out[key] = v
        else:
            out.pop(key, None)
    return out


def _support(form: _Form) -> int:
    return sum(1 for k in form if k is not None)


def _term(coef: int, t: n.Expr) -> n.Expr:
    return t if coef == 1 else n.IntImm(coef, t.dtype) * t


def _sum(terms: list, const: int, dtype: str = "int32") -> n.Expr:
    """The sum of positive-coefficient ``terms`` plus ``const`` (of ``dtype`` alone)."""
    if not terms:
        return n.IntImm(const, dtype)
    out = _term(*terms[0])
    for coef, t in terms[1:]:
        out = out + _term(coef, t)
    if const > 0:
        out = out + const
    elif const < 0:
        out = out - (-const)
    return out


def _value(terms: list, const: int, dtype: str = "int32") -> n.Expr:
    """``sum(terms) + const`` written with subtraction for negative coefficients;
    ``dtype`` is the dtype of a constant (no ``terms``)."""
    pos = [(k, t) for k, t in terms if k > 0]
    neg = [(-k, t) for k, t in terms if k < 0]
    if not pos:
        if not neg:
            return n.IntImm(const, dtype)
        if const > 0:
            out: n.Expr = n.IntImm(const, _widest([t.dtype for _, t in neg], dtype))
            for coef, t in neg:
                out = out - _term(coef, t)
            return out
        (coef, t), rest = neg[0], neg[1:]
        out = _term(-coef, t)
        for coef, t in rest:
            out = out - _term(coef, t)
        return _add_const(out, const)
    out = _sum(pos, 0)
    for coef, t in neg:
        out = out - _term(coef, t)
    return _add_const(out, const)


def _add_const(e: n.Expr, const: int) -> n.Expr:
    if const > 0:
        return e + const
    if const < 0:
        return e - (-const)
    return e
