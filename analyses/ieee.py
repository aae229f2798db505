"""IR expressions as Z3 terms with IEEE 754 floats, for ``prove(..., strict_ieee=True)``.

:func:`polypad.model.to_z3` reads floats as reals, the fast-math view in
which ``x * 0.0 == 0.0``.  Here a ``float32`` is a Z3 ``Float32`` (likewise
16 and 64 bits): arithmetic rounds to nearest-even, ``inf``, ``nan`` and
``-0.0`` exist, and comparisons are IEEE comparisons (``nan != nan``,
``-0.0 == 0.0``).  :func:`same_value` is the stricter identity a store that
must not change memory needs: ``-0.0`` and ``0.0`` differ, all NaNs are one.

``T.undef()`` is a fresh *finite* value per occurrence: RFC 0077 lets
``0 * undef`` be 0 for floats too, which holds only for finite values.
Integers have their executed, fixed-width meaning, as in
:mod:`polypad.model.z3conv`.
"""

from __future__ import annotations

import math

import z3

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.show import show
from polypad.model import Z3Env
from polypad.model.z3conv import int_binary, int_cast

_SORTS = {"float16": z3.Float16, "float32": z3.Float32, "float64": z3.Float64}


class IEEEEnv(Z3Env):
    """A :class:`Z3Env` whose float variables, buffers and undefs are IEEE floats."""

    def __init__(self, ranges=None, *, ctx: z3.Context | None = None) -> None:
        super().__init__(ranges, ctx=ctx)

    def sort(self, dtype: str) -> z3.SortRef:
        if dtypes.is_float(dtype):
            return _SORTS[dtype](self.ctx)
        return super().sort(dtype)

    def rne(self) -> z3.FPRMRef:
        """Round to nearest, ties to even, in this env's context."""
        return z3.RNE(self.ctx)

    def undef(self, dtype: str) -> z3.ExprRef:
        term = super().undef(dtype)
        if dtypes.is_float(dtype):
            ctx = self.ctx
            self.side.append(z3.Not(z3.Or(z3.fpIsInf(term, ctx), z3.fpIsNaN(term, ctx))))
        return term


def to_z3_ieee(expr: n.Expr, env: IEEEEnv) -> z3.ExprRef:
    """``expr`` as a Z3 term with IEEE floats (see the module docstring)."""
    return _Converter(env).convert(expr)


def same_value(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    """``a`` and ``b`` are the same value: bit-level for floats (up to NaN payloads)."""
    return a == b


def py_value(term: z3.ExprRef):
    """A Z3 model value as a Python ``int``, ``float`` or ``bool``."""
    if z3.is_fp_value(term):
        if term.isNaN():
            return math.nan
        if term.isInf():
            return -math.inf if term.isNegative() else math.inf
        if term.isZero():
            return -0.0 if term.isNegative() else 0.0
        term = z3.simplify(z3.fpToReal(term, term.ctx))
    if z3.is_int_value(term):
        return term.as_long()
    if z3.is_rational_value(term):
        return float(term.as_fraction())
    if z3.is_true(term) or z3.is_false(term):
        return z3.is_true(term)
    if z3.is_algebraic_value(term):
        return float(term.approx(20).as_fraction())
    return str(term)


class _Converter:
    def __init__(self, env: IEEEEnv) -> None:
        self.env = env
        self.ctx = env.ctx

    @guarded  # a step of a recursive walk (polypad.ir.deep), as z3conv's is
    def convert(self, e: n.Expr) -> z3.ExprRef:
        env, c = self.env, self.convert
        match e:
            case n.Var():
                return env.var(e)
            case n.IntImm(value=v):
                return z3.IntVal(v, self.ctx)
            case n.FloatImm(value=v, dtype=dt):
                return z3.FPVal(v, env.sort(dt), ctx=self.ctx)
            case n.BoolImm(value=v):
                return z3.BoolVal(v, self.ctx)
            case n.Add() | n.Sub() | n.Mul() | n.Div():
                return self.arith(e)
            case n.FloorDiv(a=a, b=b) | n.FloorMod(a=a, b=b) if dtypes.is_int(e.dtype):
                return int_binary(e, c(a), c(b), env)
            case n.FloorDiv(a=a, b=b) | n.FloorMod(a=a, b=b):
                ta, tb = self.operands(a, b)
                rne = env.rne()
                ctx = self.ctx
                q = z3.fpRoundToIntegral(z3.RTN(ctx), z3.fpDiv(rne, ta, tb, ctx), ctx)
                if isinstance(e, n.FloorDiv):
                    return q
                return z3.fpSub(rne, ta, z3.fpMul(rne, tb, q, ctx), ctx)
            case n.Min(a=a, b=b) | n.Max(a=a, b=b):
                # As the reference executor's Python min/max: the first operand
                # unless the second compares strictly smaller (larger).
                ta, tb = self.operands(a, b)
                better = tb < ta if isinstance(e, n.Min) else tb > ta
                return z3.If(better, tb, ta)
            case n.Compare(a=a, b=b):
                return self.compare(e, *self.operands(a, b))
            case n.And(a=a, b=b):
                return z3.And(c(a), c(b))
            case n.Or(a=a, b=b):
                return z3.Or(c(a), c(b))
            case n.Not(a=a):
                return z3.Not(c(a))
            case n.Select(condition=cond, true_value=t, false_value=f):
                return z3.If(c(cond), c(t), c(f))
            case n.Cast(dtype=dt, value=v) if dtypes.is_int(dt) and dtypes.is_int(v.dtype):
                return int_cast(c(v), dt, e, env)
            case n.Cast(dtype=dt, value=v):
                return self.cast(c(v), v.dtype, dt)
            case n.BufferLoad(buffer=buf, indices=idx):
                return env.in_range(env.buffer(buf)(*[c(env.index(i)) for i in idx]), buf.dtype)
            case n.Call(op="assume" | "likely", args=(arg,)):
                return c(arg)
            case n.Call(op="undef"):
                return env.undef(e.dtype)
            case n.Call(op="abs", args=(x,)) if dtypes.is_float(e.dtype):
                return z3.fpAbs(c(x), self.ctx)
            case n.Call(op="floor" | "ceil", args=(x,)) if dtypes.is_float(e.dtype):
                mode = z3.RTN(self.ctx) if e.op == "floor" else z3.RTP(self.ctx)
                return z3.fpRoundToIntegral(mode, c(x), self.ctx)
            case n.Call(op=op, args=args, dtype=dtype):
                return env.math(op, [c(a) for a in args], dtype)
            case n.Let(var=var, value=value, body=body):
                outer = env._bound.get(var)
                env.bind(var, c(value))
                try:
                    return c(body)
                finally:
                    env.bind(var, outer)
        raise PolypadError(f"cannot express {show(e)} ({type(e).__name__}) in Z3")

    def operands(self, a: n.Expr, b: n.Expr) -> tuple[z3.ExprRef, z3.ExprRef]:
        ta, tb = self.convert(a), self.convert(b)
        # Mixed operands (an int beside a float) meet in the float's format.
        if z3.is_fp(ta) and not z3.is_fp(tb):
            tb = self.cast(tb, b.dtype, a.dtype)
        elif z3.is_fp(tb) and not z3.is_fp(ta):
            ta = self.cast(ta, a.dtype, b.dtype)
        return ta, tb

    def arith(self, e: n.BinaryOp) -> z3.ExprRef:
        ta, tb = self.operands(e.a, e.b)
        if z3.is_fp(ta):
            op = {n.Add: z3.fpAdd, n.Sub: z3.fpSub, n.Mul: z3.fpMul, n.Div: z3.fpDiv}[type(e)]
            return op(self.env.rne(), ta, tb, self.ctx)
        if isinstance(e, n.Div):
            return z3.ToReal(ta) / z3.ToReal(tb)
        return int_binary(e, ta, tb, self.env)

    def compare(self, e: n.Compare, ta, tb) -> z3.BoolRef:
        if z3.is_fp(ta):
            op = {n.Eq: z3.fpEQ, n.Ne: z3.fpNEQ, n.Lt: z3.fpLT, n.Le: z3.fpLEQ,
                  n.Gt: z3.fpGT, n.Ge: z3.fpGEQ}[type(e)]
            return op(ta, tb, self.ctx)
        op = {n.Eq: lambda a, b: a == b, n.Ne: lambda a, b: a != b, n.Lt: lambda a, b: a < b,
              n.Le: lambda a, b: a <= b, n.Gt: lambda a, b: a > b, n.Ge: lambda a, b: a >= b}
        return op[type(e)](ta, tb)

    def cast(self, t: z3.ExprRef, src: str, dst: str) -> z3.ExprRef:
        if src == dst:
            return t
        if dtypes.is_float(dst):
            sort = self.env.sort(dst)
            rne = self.env.rne()
            if dtypes.is_float(src):
                return z3.fpFPToFP(rne, t, sort, self.ctx)
            if dtypes.is_bool(src):
                return z3.If(t, z3.FPVal(1.0, sort, ctx=self.ctx),
                             z3.FPVal(0.0, sort, ctx=self.ctx))
            return z3.fpRealToFP(rne, z3.ToReal(t), sort, self.ctx)
        if dtypes.is_float(src):
            whole = z3.fpToReal(z3.fpRoundToIntegral(z3.RTZ(self.ctx), t, self.ctx), self.ctx)
            return whole != 0 if dtypes.is_bool(dst) else z3.ToInt(whole)
        if dtypes.is_bool(dst):
            return t if dtypes.is_bool(src) else t != 0
        if dtypes.is_bool(src):
            return z3.If(t, z3.IntVal(1, self.ctx), z3.IntVal(0, self.ctx))
        return t
