"""Quasi-affine integer expressions as ISL piecewise affine functions.

A quasi-affine expression is built from integer variables and constants with
``+``, ``-``, multiplication by a constant, ``//`` and ``%`` by a nonzero
constant, ``min``, ``max`` and ``T.if_then_else`` on an affine condition.
:func:`to_pw_aff` turns one into an :class:`isl.PwAff` over an
:class:`AffineSpace`:

* the space's ``dims`` (usually loop counters, outer to inner) are the set
  dimensions of the domain;
* let-bound variables are replaced by their values;
* every other integer variable (scalar parameters, buffer shape variables,
  loop counters of loops outside the space) becomes an ISL *parameter*
  named by :class:`polypad.ir.naming.Names`.

``//`` and ``%`` keep floor semantics for either sign of the divisor, as in
the IR, Python and :mod:`polypad.model.z3conv`.  Anything else (``i * j``, a
buffer load, a float) raises :class:`NotAffineError` naming the smallest
offending sub-expression.

Conditions are converted here too (:func:`condition_set`; their public face
is :mod:`polypad.model.conditions`), since the two recurse into each other.

>>> to_pw_aff((i - 5) // 4, [i])    # equal to isl.PwAff("{ [i] -> [floor((i - 5)/4)] }")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.naming import Names, fresh_name
from polypad.ir.show import show


class AffineSpace:
    """Where quasi-affine expressions are converted: dims, lets, parameter names.

    ``dims`` are the IR variables that become the set dimensions, in order;
    ``tuple_name`` names the set tuple (``S0`` in ``{ S0[i, j] }``); ``lets``
    maps let-bound variables to their values; ``names`` gives parameters
    their ISL names and should be shared by every space of one model, so that
    the same parameter has the same name everywhere.
    """

    def __init__(
        self,
        dims: Sequence[n.Var] = (),
        *,
        tuple_name: str | None = None,
        lets: Mapping[n.Var, n.Expr] | None = None,
        names: Names | None = None,
        ctx: isl.Context | None = None,
    ) -> None:
        self.dims: tuple[n.Var, ...] = tuple(dims)
        self.tuple_name = tuple_name
        self.lets: dict[n.Var, n.Expr] = dict(lets or {})
        self.names = names if names is not None else Names()
        self.ctx = ctx if ctx is not None else isl.DEFAULT_CONTEXT
        self._positions = {id(v): k for k, v in enumerate(self.dims)}
        self.space = _set_space(self.ctx, self.dims, tuple_name)
        self.universe = isl.Set.universe(self.space)

    def position(self, var: n.Var) -> int | None:
        """The set dimension of ``var``, or ``None`` when it is not a dim."""
        return self._positions.get(id(var))

    def with_lets(self, lets: Mapping[n.Var, n.Expr]) -> AffineSpace:
        """This space with more let bindings (the same dims and names)."""
        return AffineSpace(
            self.dims, tuple_name=self.tuple_name, lets={**self.lets, **lets},
            names=self.names, ctx=self.ctx,
        )

    def val(self, value: int) -> isl.Val:
        """``value`` as an ISL value in this space's context."""
        return isl.Val(str(int(value)), context=self.ctx)

    def const(self, value: int) -> isl.PwAff:
        """The constant function ``value`` on this space."""
        return isl.PwAff.val_on_domain(self.universe, self.val(value))

    def var(self, var: n.Var) -> isl.PwAff:
        """``var`` as a function on this space: a set dim, or else a parameter."""
        pos = self.position(var)
        if pos is not None:
            ls = isl.LocalSpace.from_space(self.space)
            return isl.PwAff.var_on_domain(ls, isl.dim_type.set, pos)
        # Name the param through the space, not isl.Id(...): islpy's Id carries a
        # Python user object, and ISL would then not match it with a parsed "n".
        space = self.space.add_dims(isl.dim_type.param, 1)
        space = space.set_dim_name(isl.dim_type.param, 0, self.names.name(var))
        ls = isl.LocalSpace.from_space(space)
        return isl.PwAff.var_on_domain(ls, isl.dim_type.param, 0)

    def __repr__(self) -> str:
        return f"AffineSpace({self.space})"


def as_space(space: AffineSpace | Sequence[n.Var]) -> AffineSpace:
    """``space`` itself, or a fresh :class:`AffineSpace` over the given dims."""
    if isinstance(space, AffineSpace):
        return space
    return AffineSpace(tuple(space))


def to_pw_aff(expr: n.Expr, space: AffineSpace | Sequence[n.Var] = ()) -> isl.PwAff:
    """The quasi-affine integer expression ``expr`` as an ``isl.PwAff``.

    ``space`` is an :class:`AffineSpace` or just the variables to use as set
    dims; other variables become parameters.  Raises :class:`NotAffineError`
    (with the offending sub-expression in ``.expr``) for anything that is not
    quasi-affine.
    """
    return _Converter(as_space(space)).pw_aff(expr)


def not_affine(expr: n.Expr, reason: str) -> NotAffineError:
    """The error for a sub-expression outside the quasi-affine fragment."""
    return NotAffineError(f"{show(expr)} is not quasi-affine: {reason}", expr)


def equal_everywhere(a: n.Expr, b: n.Expr) -> bool:
    """Whether ``a == b`` for every value of their variables: both quasi-affine and equal
    as isl functions (False where either is not quasi-affine).  The parser asks this of
    a ``T.match_buffer`` region's extents (:mod:`polypad.script.checks`)."""
    space = AffineSpace()
    try:
        pa, pb = to_pw_aff(a, space), to_pw_aff(b, space)
    except NotAffineError:
        return False
    return bool(isinstance(pa, isl.PwAff) and pa.is_equal(pb))


class _Converter:
    """Integer expressions to ``PwAff``; conditions to ``Set`` (:func:`condition_set`)."""

    def __init__(self, space: AffineSpace) -> None:
        self.space = space

    @guarded
    def pw_aff(self, e: n.Expr) -> isl.PwAff:
        if isinstance(e, n.Var) and e in self.space.lets:
            return self.pw_aff(self.space.lets[e])
        if not dtypes.is_int(e.dtype):
            raise not_affine(e, f"it has dtype {e.dtype}, not an integer type")
        sp = self.space
        match e:
            case n.Var():
                return sp.var(e)
            case n.IntImm(value=v):
                return sp.const(v)
            case n.Add(a=a, b=b):
                return self.pw_aff(a).add(self.pw_aff(b))
            case n.Sub(a=a, b=b):
                return self.pw_aff(a).sub(self.pw_aff(b))
            case n.Mul(a=a, b=b):
                pa, pb = self.pw_aff(a), self.pw_aff(b)
                if not (pa.is_cst() or pb.is_cst()):
                    raise not_affine(e, "neither factor is a constant")
                return pa.mul(pb)
            case n.FloorDiv(a=a, b=b):
                return floor_div(self.pw_aff(a), self.divisor(e, b))
            case n.FloorMod(a=a, b=b):
                return floor_mod(self.pw_aff(a), self.divisor(e, b))
            case n.Min(a=a, b=b):
                return self.pw_aff(a).min(self.pw_aff(b))
            case n.Max(a=a, b=b):
                return self.pw_aff(a).max(self.pw_aff(b))
            case n.Select(condition=c, true_value=t, false_value=f):
                where = self.set(c)
                pt = self.pw_aff(t).intersect_domain(where)
                pf = self.pw_aff(f).intersect_domain(where.complement())
                return pt.union_add(pf)
            case n.Cast(value=v) if dtypes.is_int(v.dtype):
                # Widths are ignored: the model reasons over mathematical integers.
                return self.pw_aff(v)
            case n.Cast(value=v) if dtypes.is_bool(v.dtype):
                return self.set(v).indicator_function()
            case n.Let(var=var, value=value, body=body):
                inner = _Converter(self.space.with_lets({var: value}))
                return inner.pw_aff(body)
            case n.BufferLoad():
                raise not_affine(e, "it reads a buffer (a data-dependent value)")
        raise not_affine(e, f"{type(e).__name__} is outside the quasi-affine fragment")

    def divisor(self, e: n.Expr, b: n.Expr) -> int:
        """The constant divisor of ``//`` or ``%`` node ``e``."""
        pb = self.pw_aff(b)
        values = set()
        if pb.is_cst():
            for _, aff in pb.get_pieces():
                values.add(aff.get_constant_val().to_python())
        if len(values) != 1:
            raise not_affine(e, "the divisor is not a constant")
        (value,) = values
        if value == 0:
            raise not_affine(e, "division by zero")
        return int(value)

    def set(self, cond: n.Expr) -> isl.Set:
        return condition_set(cond, self.space)


# ---------------------------------------------------------------- conditions
# An expression holds conditions (``T.if_then_else``) and a condition holds
# expressions (its comparisons' sides): the two conversions recurse into each
# other, so they live together; :mod:`.conditions` is the conditions' public face.

_COMPARE = {
    n.Eq: "eq_set", n.Ne: "ne_set", n.Lt: "lt_set", n.Le: "le_set", n.Gt: "gt_set",
    n.Ge: "ge_set",
}


@guarded
def condition_set(cond: n.Expr, space: AffineSpace) -> isl.Set:
    """The set of points of ``space`` where the boolean ``cond`` holds
    (:func:`~polypad.model.conditions.to_set` on an :class:`AffineSpace`)."""
    if isinstance(cond, n.Var) and cond in space.lets:
        return condition_set(space.lets[cond], space)
    match cond:
        case n.BoolImm(value=True):
            return space.universe
        case n.BoolImm(value=False):
            return isl.Set.empty(space.space)
        case n.And(a=a, b=b):
            return condition_set(a, space).intersect(condition_set(b, space))
        case n.Or(a=a, b=b):
            return condition_set(a, space).union(condition_set(b, space))
        case n.Not(a=a):
            return condition_set(a, space).complement()
        case n.Compare(a=a, b=b) if dtypes.is_bool(a.dtype) and isinstance(cond, (n.Eq, n.Ne)):
            sa, sb = condition_set(a, space), condition_set(b, space)
            same = sa.intersect(sb).union(sa.complement().intersect(sb.complement()))
            return same if isinstance(cond, n.Eq) else same.complement()
        case n.Compare(a=a, b=b) if (bound := _dim_bound(cond, space)) is not None:
            return bound
        case n.Compare(a=a, b=b):
            conv = _Converter(space)
            pa, pb = conv.pw_aff(a), conv.pw_aff(b)
            return getattr(pa, _COMPARE[type(cond)])(pb)
        case n.Call(op="likely", args=(arg,)):
            return condition_set(arg, space)
        case n.Select(condition=c, true_value=t, false_value=f):
            where = condition_set(c, space)
            then = where.intersect(condition_set(t, space))
            return then.union(where.complement().intersect(condition_set(f, space)))
        case n.Cast(value=v) if dtypes.is_int(v.dtype):
            return _Converter(space).pw_aff(v).non_zero_set()
        case n.Let(var=var, value=value, body=body):
            return condition_set(body, space.with_lets({var: value}))
    if not dtypes.is_bool(cond.dtype):
        raise not_affine(cond, f"it has dtype {cond.dtype}, not bool")
    raise not_affine(cond, f"{type(cond).__name__} is not an affine condition")


# `i < 8` as `var <op> constant`: (lower bound offset, upper bound offset), or a fix.
_BOUND_OPS = {n.Ge: (0, None), n.Gt: (1, None), n.Le: (None, 0), n.Lt: (None, -1),
              n.Eq: (0, 0)}
_MIRRORED = {n.Ge: n.Le, n.Gt: n.Lt, n.Le: n.Ge, n.Lt: n.Gt, n.Eq: n.Eq}


def _dim_bound(cond: n.Compare, space: AffineSpace) -> isl.Set | None:
    """``cond`` when it bounds one integer set dim by a constant (``i < 8``, ``0 <= i``),
    built as a bound of the universe: the most common condition, at a tenth of the cost
    of comparing two affine functions."""
    kind, a, b = type(cond), cond.a, cond.b
    if isinstance(a, n.IntImm) and isinstance(b, n.Var):
        kind, a, b = _MIRRORED.get(kind), b, a
    if kind not in _BOUND_OPS or not (isinstance(a, n.Var) and isinstance(b, n.IntImm)):
        return None
    pos = space.position(a)
    if pos is None or a in space.lets or not dtypes.is_int(a.dtype):
        return None
    low, high = _BOUND_OPS[kind]
    out = space.universe
    if low is not None:
        out = out.lower_bound_val(isl.dim_type.set, pos, space.val(b.value + low))
    if high is not None:
        out = out.upper_bound_val(isl.dim_type.set, pos, space.val(b.value + high))
    return out


def to_map(space: AffineSpace, pw_affs: Sequence[isl.PwAff], range_name: str | None) -> isl.Map:
    """The map ``space -> range_name[pw_affs...]`` (one output dim per function)."""
    if not pw_affs:
        rng = isl.Space.set_alloc(space.ctx, 0, 0)
        if range_name is not None:
            rng = rng.set_tuple_name(isl.dim_type.set, range_name)
        return isl.Map.from_domain_and_range(space.universe, isl.Set.universe(rng))
    out = _from_affs(pw_affs)
    if out is None:
        out = isl.Map.from_pw_aff(pw_affs[0])
        for pa in pw_affs[1:]:
            out = out.flat_range_product(isl.Map.from_pw_aff(pa))
    if range_name is not None:
        out = out.set_tuple_name(isl.dim_type.out, range_name)
    return out


def _from_affs(pw_affs: Sequence[isl.PwAff]) -> isl.Map | None:
    """The map of ``pw_affs`` built at once when each is one affine piece on the whole
    domain (as loop counters and constants are), else ``None``.

    A product of one-output maps, one at a time, costs a copy of the growing
    map per output: the schedule of a 64-deep nest has 129.
    """
    affs = isl.AffList.alloc(pw_affs[0].get_ctx(), len(pw_affs))
    for pa in pw_affs:
        if not pa.isa_aff():  # one piece, on the universe
            return None
        affs = affs.add(pa.as_aff())
    domain = pw_affs[0].get_domain_space()
    values = domain.params().set_from_params().add_dims(isl.dim_type.set, len(pw_affs))
    space = isl.Space.map_from_domain_and_range(domain, values)
    return isl.Map.from_multi_aff(isl.MultiAff.from_aff_list(space, affs))


def floor_div(pa: isl.PwAff, divisor: int) -> isl.PwAff:
    """``floor(pa / divisor)`` for a nonzero integer ``divisor`` of either sign."""
    ctx = pa.get_ctx()
    if divisor < 0:
        # floor(a / c) == floor(-a / -c); ISL only scales down by positive values.
        pa, divisor = pa.neg(), -divisor
    return pa.scale_down_val(isl.Val(str(divisor), context=ctx)).floor()


def floor_mod(pa: isl.PwAff, divisor: int) -> isl.PwAff:
    """Python's ``pa % divisor``: the result has the sign of ``divisor``."""
    ctx = pa.get_ctx()
    if divisor < 0:
        # a mod c == -((-a) mod -c) for c < 0.
        return pa.neg().mod_val(isl.Val(str(-divisor), context=ctx)).neg()
    return pa.mod_val(isl.Val(str(divisor), context=ctx))


def _set_space(ctx: isl.Context, dims: Sequence[n.Var], tuple_name: str | None) -> isl.Space:
    taken: set[str] = set()
    names = [fresh_name(taken, var.name) for var in dims]
    space = isl.Space.create_from_names(ctx, set=names)
    if tuple_name is not None:
        space = space.set_tuple_name(isl.dim_type.set, tuple_name)
    return space
