"""What a float means in Z3: the reals, or IEEE 754 floats.

One value, a :class:`FloatSemantics`, says it for a whole question: the
converter (:mod:`polypad.model.z3conv`) asks it for every float sort,
constant, operation, comparison and cast; the prover asks it what "the same
value" is, which solver suits it, and how to name its proofs.  Passing this
one value replaces a ``strict_ieee`` flag threaded through every caller.

* :data:`REALS` -- the fast-math view TVM and Halide take, and the prover's
  default: a float is a real number, so ``x * 0.0 == 0.0`` and
  ``(a + b) + c == a + (b + c)``.  Infinities and NaN do not exist (a
  literal ``inf`` cannot be stated).
* :data:`STRICT_IEEE` -- a ``float32`` is a Z3 ``Float32`` (likewise 16 and 64
  bits): arithmetic rounds to nearest-even, ``inf``, ``nan`` and ``-0.0``
  exist, comparisons are IEEE comparisons (``nan != nan``, ``-0.0 == 0.0``),
  and :meth:`~FloatSemantics.same_value` is bit-level (``-0.0`` and ``0.0``
  differ, all NaNs are one), the identity a store that must not change
  memory needs.  ``T.undef()`` is a fresh *finite* value: RFC 0077 lets
  ``0 * undef`` be 0 for floats too, which holds only for finite values.

Integers are the same in both: their executed, fixed-width meaning.

>>> float_semantics(strict_ieee=True) is STRICT_IEEE
True
"""

from __future__ import annotations

import math
from collections.abc import Callable

import z3

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.show import show

#: Converts a subexpression (the converter's own recursion, handed to the semantics).
Convert = Callable[[n.Expr], z3.ExprRef]

_COMPARE = {n.Eq: lambda a, b: a == b, n.Ne: lambda a, b: a != b,
            n.Lt: lambda a, b: a < b, n.Le: lambda a, b: a <= b,
            n.Gt: lambda a, b: a > b, n.Ge: lambda a, b: a >= b}


class FloatSemantics:
    """What floats mean in a Z3 question; see the module docstring.

    ``name`` reads in messages, ``method`` names the proofs made under it
    (``"z3"``, ``"z3-ieee"``), and ``bit_precise`` says whether two floats
    are the same only bit for bit (callers skip shortcuts that hold only
    over the reals).
    """

    name: str = ""
    method: str = ""
    bit_precise: bool = False

    def sort(self, dtype: str, ctx: z3.Context) -> z3.SortRef:
        """The Z3 sort of float ``dtype``."""
        raise NotImplementedError

    def constant(self, e: n.FloatImm, ctx: z3.Context) -> z3.ExprRef:
        """A float literal."""
        raise NotImplementedError

    def arith(self, e: n.BinaryOp, c: Convert, ctx: z3.Context) -> z3.ExprRef:
        """``+ - * / // %`` whose result is a float (or ``/`` of integers)."""
        raise NotImplementedError

    def min_max(self, e: n.Min | n.Max, c: Convert, ctx: z3.Context) -> z3.ExprRef:
        """``T.min`` / ``T.max`` of any dtype."""
        raise NotImplementedError

    def compare(self, e: n.Compare, c: Convert, ctx: z3.Context) -> z3.BoolRef:
        """A comparison of any operands."""
        raise NotImplementedError

    def cast(self, t: z3.ExprRef, src: str, dst: str, ctx: z3.Context) -> z3.ExprRef:
        """``t`` of dtype ``src`` as ``dst``, where one of them is a float or a bool."""
        raise NotImplementedError

    def intrinsic(self, op: str, args: list[z3.ExprRef], dtype: str,
                  ctx: z3.Context) -> z3.ExprRef | None:
        """A math intrinsic the semantics states exactly, or None (the env decides)."""
        return None

    def undef_facts(self, term: z3.ExprRef, dtype: str) -> list[z3.BoolRef]:
        """What is known of a ``T.undef()`` of ``dtype``, beside its dtype's range."""
        return []

    def same_value(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        """``a`` and ``b`` are the same value (a store of one over the other changes nothing)."""
        raise NotImplementedError

    def solver(self, ctx: z3.Context) -> z3.Solver:
        """A solver in ``ctx`` suited to this semantics' questions."""
        # simplify + smt as a tactic: several times faster than z3.Solver() on the
        # small one-shot queries a prover asks (no incremental machinery to set up).
        return z3.Then("simplify", "smt", ctx=ctx).solver()

    def __repr__(self) -> str:
        return f"<FloatSemantics {self.name}>"


class Reals(FloatSemantics):
    """Floats as real numbers (fast-math)."""

    name, method, bit_precise = "reals", "z3", False

    def sort(self, dtype, ctx):
        return z3.RealSort(ctx)

    def constant(self, e, ctx):
        if not math.isfinite(e.value):
            raise PolypadError(f"{e.value} has no value over the reals (in {show(e)})")
        return z3.RealVal(repr(e.value), ctx)  # "0.1" is 1/10, as the author wrote it

    def arith(self, e, c, ctx):
        match e:
            case n.Add(a=n.Add()):
                # A chain of float additions is one n-ary sum: equal over the reals,
                # and built in one call instead of one Python operator per term.
                terms = [e.b]
                while isinstance(e.a, n.Add) and e.a.dtype == e.dtype:
                    e = e.a
                    terms.append(e.b)
                terms.append(e.a)
                return z3.Sum(*[c(x) for x in reversed(terms)])
            case n.Add(a=a, b=b):
                return c(a) + c(b)
            case n.Sub(a=a, b=b):
                return c(a) - c(b)
            case n.Mul(a=a, b=b):
                return c(a) * c(b)
            case n.Div(a=a, b=b):
                return _real(c(a)) / _real(c(b))
            case n.FloorDiv(a=a, b=b):
                return _real_floordiv(c(a), c(b))
            case n.FloorMod(a=a, b=b):
                ta, tb = c(a), c(b)
                return ta - tb * _real_floordiv(ta, tb)
        raise PolypadError(f"cannot express {show(e)} ({type(e).__name__}) in Z3")

    def min_max(self, e, c, ctx):
        ta, tb = c(e.a), c(e.b)
        if isinstance(e, n.Min):
            return z3.If(ta <= tb, ta, tb)
        return z3.If(ta >= tb, ta, tb)

    def compare(self, e, c, ctx):
        return _COMPARE[type(e)](c(e.a), c(e.b))

    def cast(self, t, src, dst, ctx):
        if dtypes.is_bool(dst):
            return t if dtypes.is_bool(src) else t != 0
        if dtypes.is_bool(src):
            one, zero = ((z3.RealVal(1, ctx), z3.RealVal(0, ctx)) if dtypes.is_float(dst)
                         else (z3.IntVal(1, ctx), z3.IntVal(0, ctx)))
            return z3.If(t, one, zero)
        if dtypes.is_float(dst):
            return _real(t)
        if dtypes.is_float(src):
            # Float to int conversion truncates toward zero; ToInt is floor.
            return z3.If(t >= 0, z3.ToInt(t), -z3.ToInt(-t))
        return t

    def same_value(self, a, b):
        if z3.is_int(a) != z3.is_int(b):
            a, b = _real(a), _real(b)
        return a == b


_SORTS = {"float16": z3.Float16, "float32": z3.Float32, "float64": z3.Float64}


class StrictIEEE(FloatSemantics):
    """Floats as IEEE 754 values, rounded to nearest-even."""

    name, method, bit_precise = "strict IEEE", "z3-ieee", True

    def sort(self, dtype, ctx):
        return _SORTS[dtype](ctx)

    def constant(self, e, ctx):
        return z3.FPVal(e.value, self.sort(e.dtype, ctx), ctx=ctx)

    def operands(self, a: n.Expr, b: n.Expr, c: Convert, ctx) -> tuple[z3.ExprRef, z3.ExprRef]:
        ta, tb = c(a), c(b)
        # Mixed operands (an int beside a float) meet in the float's format.
        if z3.is_fp(ta) and not z3.is_fp(tb):
            tb = self.cast(tb, b.dtype, a.dtype, ctx)
        elif z3.is_fp(tb) and not z3.is_fp(ta):
            ta = self.cast(ta, a.dtype, b.dtype, ctx)
        return ta, tb

    def arith(self, e, c, ctx):
        ta, tb = self.operands(e.a, e.b, c, ctx)
        if not z3.is_fp(ta):
            if isinstance(e, n.Div):
                return z3.ToReal(ta) / z3.ToReal(tb)
            raise PolypadError(f"cannot express {show(e)} ({type(e).__name__}) in Z3")
        rne = z3.RNE(ctx)
        if isinstance(e, (n.FloorDiv, n.FloorMod)):
            q = z3.fpRoundToIntegral(z3.RTN(ctx), z3.fpDiv(rne, ta, tb, ctx), ctx)
            if isinstance(e, n.FloorDiv):
                return q
            return z3.fpSub(rne, ta, z3.fpMul(rne, tb, q, ctx), ctx)
        op = {n.Add: z3.fpAdd, n.Sub: z3.fpSub, n.Mul: z3.fpMul, n.Div: z3.fpDiv}[type(e)]
        return op(rne, ta, tb, ctx)

    def min_max(self, e, c, ctx):
        # As the reference executor's Python min/max: the first operand unless the
        # second compares strictly smaller (larger).
        ta, tb = self.operands(e.a, e.b, c, ctx)
        better = tb < ta if isinstance(e, n.Min) else tb > ta
        return z3.If(better, tb, ta)

    def compare(self, e, c, ctx):
        ta, tb = self.operands(e.a, e.b, c, ctx)
        if z3.is_fp(ta):
            op = {n.Eq: z3.fpEQ, n.Ne: z3.fpNEQ, n.Lt: z3.fpLT, n.Le: z3.fpLEQ,
                  n.Gt: z3.fpGT, n.Ge: z3.fpGEQ}[type(e)]
            return op(ta, tb, ctx)
        return _COMPARE[type(e)](ta, tb)

    def cast(self, t, src, dst, ctx):
        if src == dst:
            return t
        if dtypes.is_float(dst):
            sort, rne = self.sort(dst, ctx), z3.RNE(ctx)
            if dtypes.is_float(src):
                return z3.fpFPToFP(rne, t, sort, ctx)
            if dtypes.is_bool(src):
                return z3.If(t, z3.FPVal(1.0, sort, ctx=ctx), z3.FPVal(0.0, sort, ctx=ctx))
            return z3.fpRealToFP(rne, z3.ToReal(t), sort, ctx)
        if dtypes.is_float(src):
            whole = z3.fpToReal(z3.fpRoundToIntegral(z3.RTZ(ctx), t, ctx), ctx)
            return whole != 0 if dtypes.is_bool(dst) else z3.ToInt(whole)
        if dtypes.is_bool(dst):
            return t if dtypes.is_bool(src) else t != 0
        if dtypes.is_bool(src):
            return z3.If(t, z3.IntVal(1, ctx), z3.IntVal(0, ctx))
        return t

    def intrinsic(self, op, args, dtype, ctx):
        if not dtypes.is_float(dtype) or op not in ("abs", "floor", "ceil"):
            return None
        (x,) = args
        if op == "abs":
            return z3.fpAbs(x, ctx)
        mode = z3.RTN(ctx) if op == "floor" else z3.RTP(ctx)
        return z3.fpRoundToIntegral(mode, x, ctx)

    def undef_facts(self, term, dtype):
        if not dtypes.is_float(dtype):
            return []
        ctx = term.ctx
        return [z3.Not(z3.Or(z3.fpIsInf(term, ctx), z3.fpIsNaN(term, ctx)))]

    def same_value(self, a, b):
        return a == b  # on Z3 floats, identity: -0.0 is not 0.0, a NaN is itself

    def solver(self, ctx):
        # IEEE floats: "qffp" bit-blasts them up front (fpa2bv, then SAT, or the
        # SMT core where integers or functions remain).  The SMT core's lazy
        # float theory takes some ten times as long on a float32 product and
        # varies as much again from run to run (0.1 s to 1.8 s on one query),
        # which left strict questions near their timeout on a busy machine.
        return z3.Tactic("qffp", ctx).solver()


#: Floats are real numbers: the prover's default.
REALS = Reals()
#: Floats are IEEE 754 values, compared bit for bit where a store must not change memory.
STRICT_IEEE = StrictIEEE()


def float_semantics(strict_ieee: bool) -> FloatSemantics:
    """The semantics a public ``strict_ieee=`` keyword asks for."""
    return STRICT_IEEE if strict_ieee else REALS


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


def _real_floordiv(ta: z3.ExprRef, tb: z3.ExprRef) -> z3.ExprRef:
    """Floor division of floats, read as reals."""
    return z3.ToReal(z3.ToInt(_real(ta) / _real(tb)))


def _real(t: z3.ExprRef) -> z3.ExprRef:
    return z3.ToReal(t) if z3.is_int(t) else t
