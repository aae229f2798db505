"""IR expressions as Z3 terms.

Integers become Z3 ``Int`` with the executed, fixed-width meaning: an
``int32`` value lies in ``[-2**31, 2**31)`` (a side constraint on every
variable, load and undef of that dtype, in :attr:`Z3Env.side`), and an
operation whose exact result may leave that range wraps around as numpy's
does, ``((t + 2**31) mod 2**32) - 2**31``.  Which operations may wrap is
decided by interval arithmetic (:mod:`polypad.model.ranges`) over the
variable ranges the env knows, so ``4 * i + 1`` inside a loop of extent 8
stays plain linear arithmetic.  Nor do the ``+ - *`` that lead straight to a
buffer index: they agree with exact arithmetic modulo ``2**width``, so the
executed index is the exact one whenever the exact one is inside the buffer,
which the model (:mod:`polypad.model.accesses`) and the bounds check assume
of every index.  A zero divisor gives 0 for ``//`` and ``%``,
as numpy (and the kernels, under ``error_model="numpy"``) do.  Floats
become ``Real`` (the fast-math view the prover takes by default) and bools
``Bool``; the env's :class:`~polypad.model.float_semantics.FloatSemantics`
says so, and :data:`~polypad.model.float_semantics.STRICT_IEEE` makes them
IEEE floats instead (one converter for both).  ``//`` and ``%`` are floor division
and floor modulo, as everywhere in polypad; Z3's own ``/`` and ``%`` on
``Int`` are Euclidean and differ from floor for negative divisors, so they
are never used directly.

A :class:`Z3Env` owns the mapping from IR identities to Z3 symbols: one
constant per ``Var``, one uninterpreted function ``Int^rank -> sort`` per
``Buffer``, one uninterpreted function per math intrinsic and sort, and a
fresh unconstrained constant for every occurrence of ``T.undef()``.

Each env also owns a ``z3.Context`` of its own, and every term, sort, solver
and tactic of its question is made in it.  Z3's global context is never
used: a context may not be shared between threads (the Python API releases
the GIL around each call), and a shared one would carry the terms and
solver state of earlier questions, on which Z3's models -- and so the
counterexamples polypad reports -- would then depend.  A new context costs
about a millisecond.

>>> env = Z3Env()
>>> to_z3((i - 5) // 4, env)      # If(4 >= 0, (i - 5)/4, ...) simplified to (i - 5)/4
"""

from __future__ import annotations

import z3

from polypad.errors import PolypadError
from polypad.ir import dtypes, intrinsics
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.naming import fresh_name
from polypad.ir.opaque import OPAQUE
from polypad.ir.ranges import Range, Ranges, dtype_range
from polypad.ir.show import show
from polypad.ir.views import through_view
from polypad.ir.visitor import walk

from .float_semantics import REALS, FloatSemantics

# Math intrinsics with an exact meaning over the reals; the rest stay uninterpreted.
_INTERPRETED = ("floor", "ceil", "abs")
_BITWISE = {"bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
            "bitwise_xor": lambda a, b: a ^ b, "bitwise_not": lambda a: ~a}


class Z3Env:
    """The Z3 symbols standing for the IR variables, buffers and intrinsics of a query,
    and what its floats mean (``floats``: :data:`~polypad.model.float_semantics.REALS`
    unless given)."""

    def __init__(self, ranges: dict[n.Var, Range] | None = None, *,
                 ctx: z3.Context | None = None, floats: FloatSemantics = REALS) -> None:
        #: The Z3 context every term of this env lives in (a new one unless given).
        self.ctx = ctx if ctx is not None else z3.Context()
        #: What floats mean in this env's terms (:mod:`polypad.model.float_semantics`).
        self.floats = floats
        #: Facts about the symbols: each integer lies in its dtype's range.
        self.side: list[z3.BoolRef] = []
        #: Known ranges of variables (loop counters), for deciding what may wrap.
        self.ranges = Ranges(ranges)
        self._ranged: set[int] = set()
        self._index_ring: dict[int, n.Expr] = {}
        self.vars: dict[n.Var, z3.ExprRef] = {}
        self.buffers: dict[n.Buffer, z3.FuncDeclRef] = {}
        self.undefs: list[z3.ExprRef] = []
        #: The terms ``let`` variables stand for while their body is converted.
        self.bound: dict[n.Var, z3.ExprRef] = {}
        self._math: dict[tuple, z3.FuncDeclRef] = {}
        #: Uninterpreted math applications: (op, args, term, the known points' conditions).
        self.applications: list[tuple] = []
        self._names: set[str] = set()
        #: Terms of the expressions :func:`to_z3` converted, by structure (see there),
        #: and of the loads converted outside any let.
        self._terms: dict[n.Expr, z3.ExprRef] = {}
        self._loads: dict[n.BufferLoad, z3.ExprRef] = {}

    # ------------------------------------------------------------ symbols

    def sort(self, dtype: str) -> z3.SortRef:
        """The Z3 sort of an IR dtype."""
        if dtypes.is_bool(dtype):
            return z3.BoolSort(self.ctx)
        if dtypes.is_float(dtype):
            return self.floats.sort(dtype, self.ctx)
        if dtypes.is_int(dtype):
            return z3.IntSort(self.ctx)
        raise PolypadError(f"no Z3 sort for dtype {dtype!r}")

    def fresh_name(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... — a name no other symbol of this env has."""
        return fresh_name(self._names, base)

    def var(self, var: n.Var) -> z3.ExprRef:
        """The term for ``var``: its binding, or its own constant (created on first use)."""
        bound = self.bound.get(var)
        if bound is not None:
            return bound
        term = self.vars.get(var)
        if term is None:
            term = z3.Const(self.fresh_name(var.name), self.sort(var.dtype))
            self.vars[var] = term
            self.in_range(term, var.dtype, self.ranges.bounds.get(var))
        return term

    def in_range(self, term: z3.ExprRef, dtype: str, bounds: Range | None = None) -> z3.ExprRef:
        """``term``, with the side fact that it lies in ``dtype``'s range (or ``bounds``)."""
        if dtypes.is_int(dtype) and z3.is_int(term) and term.get_id() not in self._ranged:
            self._ranged.add(term.get_id())
            lo, hi = bounds if bounds is not None else dtype_range(dtype)
            self.side.append(z3.And(term >= lo, term <= hi))
        return term

    def wrapped(self, term: z3.ArithRef, e: n.Expr) -> z3.ArithRef:
        """``term``, the exact result of integer operation ``e``, wrapped like numpy's."""
        if self._index_ring.get(id(e)) is e or not self.ranges.may_wrap(e):
            return term
        return wrap_term(term, e.dtype)

    def index(self, e: n.Expr) -> n.Expr:
        """Mark the ``+ - *`` chain at the top of buffer index ``e`` as needing no wrap."""
        stack = [e]
        while stack:
            node = stack.pop()
            if isinstance(node, (n.Add, n.Sub, n.Mul)) and dtypes.is_int(node.dtype):
                self._index_ring[id(node)] = node
                stack += [x for x in (node.a, node.b) if x.dtype == node.dtype]
        return e

    def exact(self, e: n.Expr) -> n.Expr:
        """Mark every integer operation in ``e`` as exact: it never wraps.

        For conditions ISL wrote (:func:`polypad.model.set_to_condition`), which hold
        over the integers: ``i < n + 2`` of a loop's domain says ``i <= n + 1`` even
        where ``n + 2`` leaves int32."""
        for node in walk(e):
            if dtypes.is_int(node.dtype) and isinstance(node, (n.BinaryOp, n.Cast)):
                self._index_ring[id(node)] = node
        return e

    def bind(self, var: n.Var, term: z3.ExprRef | None) -> None:
        """Make ``var`` stand for ``term`` (``None`` removes the binding)."""
        if term is None:
            self.bound.pop(var, None)
        else:
            self.bound[var] = term

    def buffer(self, buffer: n.Buffer) -> z3.FuncDeclRef:
        """The uninterpreted function ``Int^rank -> sort`` holding ``buffer``'s contents."""
        f = self.buffers.get(buffer)
        if f is None:
            args = [z3.IntSort(self.ctx)] * buffer.ndim
            f = z3.Function(self.fresh_name(buffer.name), *args, self.sort(buffer.dtype))
            self.buffers[buffer] = f
        return f

    def undef(self, dtype: str) -> z3.ExprRef:
        """A fresh, unconstrained constant: one ``T.undef()`` occurrence."""
        term = z3.Const(self.fresh_name(f"undef{len(self.undefs)}"), self.sort(dtype))
        self.undefs.append(term)
        self.side += self.floats.undef_facts(term, dtype)
        return self.in_range(term, dtype)

    def math(self, op: str, args: list[z3.ExprRef], dtype: str) -> z3.ExprRef:
        """A math intrinsic: exact for floor/ceil/abs and the bitwise ones, else uninterpreted."""
        if op in intrinsics.BITWISE:
            return bitwise_term(op, args, dtype)
        if op == "abs":
            (x,) = args
            return z3.If(x >= 0, x, -x)
        if op == "isnan":  # a real has no NaN; an IEEE float may
            (x,) = args
            return z3.fpIsNaN(x, x.ctx) if z3.is_fp(x) else z3.BoolVal(False, x.ctx)
        if op in ("floor", "ceil") and z3.is_real(args[0]):
            (x,) = args
            return z3.ToReal(z3.ToInt(x)) if op == "floor" else -z3.ToReal(z3.ToInt(-x))
        sorts = tuple(a.sort() for a in args)
        key = (op, sorts, dtype)
        f = self._math.get(key)
        if f is None:
            f = z3.Function(self.fresh_name(op), *sorts, self.sort(dtype))
            self._math[key] = f
        app = f(*args)
        points = known_points(op, args)
        for at, value in points:
            self.side.append(z3.Implies(at, app == value))
        self.applications.append((op, args, app, [at for at, _ in points]))
        return app

    def lookup(self, name: str) -> n.Var | n.Buffer | None:
        """The IR variable or buffer whose Z3 symbol is called ``name``."""
        for var, term in self.vars.items():
            if str(term) == name:
                return var
        for buf, f in self.buffers.items():
            if f.name() == name:
                return buf
        return None


def to_z3(expr: n.Expr, env: Z3Env | None = None) -> z3.ExprRef:
    """``expr`` as a Z3 term over the symbols of ``env`` (a fresh env when omitted).

    An expression converted again in the same env is the same term, looked up
    instead of rebuilt: a prover converts a stored value for its goal, for the
    model's value and for the counterexample, and a 10,000-term sum costs a
    tenth of a second each time.  Not one holding ``T.undef()`` (each
    occurrence is a fresh constant), nor while a ``let`` is bound, nor under a
    bit-precise semantics (where ``-0.0`` and ``0.0``, equal nodes, differ).
    """
    if env is None:
        return _convert(expr, Z3Env())
    if env.bound or env.floats.bit_precise:
        # Bit for bit, FloatImm(-0.0) is not FloatImm(0.0), though the two nodes are
        # equal (as Python's floats are): a term looked up by structure could be the
        # other zero's.
        return _convert(expr, env)
    term = env._terms.get(expr)
    if term is None:
        term = _convert(expr, env)
        if not any(isinstance(x, n.Call) and x.op == "undef" for x in walk(expr)):
            env._terms[expr] = term
    return term


def to_z3_exact(expr: n.Expr, env: Z3Env) -> z3.ExprRef:
    """``expr``, a condition over the integers (as ISL writes them), as a Z3 term in
    which no integer operation wraps (:meth:`Z3Env.exact`).

    Never looked up or kept by structure: the same text in a program's own
    arithmetic wraps, and must convert to its own term."""
    return _convert(env.exact(expr), env)


# Exact values of math functions at a few points (exp(0) = 1, ...): Z3 leaves the
# functions uninterpreted, so a counterexample is real only where these pin them.
_POINTS = {"exp": ((0, 1),), "cos": ((0, 1),), "log": ((1, 0),), "sin": ((0, 0),),
           "tanh": ((0, 0),), "sqrt": ((0, 0), (1, 1)), "sigmoid": ((0, "1/2"),)}
# With IEEE floats only points where -0.0 and +0.0 give the same value.
_IEEE_POINTS = ("exp", "cos")


def known_points(op: str, args: list[z3.ExprRef]) -> list[tuple[z3.BoolRef, z3.ExprRef]]:
    """``(argument is the point, value there)`` for the exact values of ``op`` Z3 may use."""
    if len(args) != 1:
        return []
    (x,) = args
    out = []
    ctx = x.ctx
    for at, value in _POINTS.get(op, ()):
        if z3.is_real(x):
            out.append((x == z3.RealVal(at, ctx), z3.RealVal(value, ctx)))
        elif z3.is_fp(x) and op in _IEEE_POINTS:
            sort = x.sort()
            out.append((z3.fpEQ(x, z3.FPVal(float(at), sort, ctx=ctx), ctx),
                        z3.FPVal(float(value), sort, ctx=ctx)))
    return out


def bitwise_term(op: str, args: list[z3.ArithRef], dtype: str) -> z3.ArithRef:
    """A bitwise intrinsic on integer terms, exactly: through bit-vectors of ``dtype``'s width.

    ``Int2BV`` takes its argument modulo ``2**bits`` (two's complement), and
    SMT-LIB's shifts give 0 (``bvshl``, ``bvlshr``) or the sign (``bvashr``)
    for an amount of ``bits`` or more, where a negative amount reads as a huge
    unsigned one: numpy's meaning, which both executors share
    (docs/semantics.md).  No guess is involved, so no answer can be wrong;
    a query Z3 cannot finish with them is Unknown, as any other.
    """
    bits = dtypes.bits(dtype)
    signed = dtype[0] != "u"
    vs = [z3.Int2BV(a, bits) for a in args]
    if op == "shift_left":
        t = vs[0] << vs[1]
    elif op == "shift_right":
        t = vs[0] >> vs[1] if signed else z3.LShR(vs[0], vs[1])
    else:
        t = _BITWISE[op](*vs)
    return z3.BV2Int(t, is_signed=signed)


def wrap_term(t: z3.ArithRef, dtype: str) -> z3.ArithRef:
    """``t`` reduced into integer ``dtype``'s range the way fixed-width integers wrap."""
    lo, hi = dtype_range(dtype)
    return z3.If(z3.And(t >= lo, t <= hi), t, (t - lo) % (hi - lo + 1) + lo)


def int_binary(e: n.BinaryOp, ta: z3.ArithRef, tb: z3.ArithRef, env: Z3Env) -> z3.ArithRef:
    """Integer ``+ - * // %`` of ``e`` on the terms of its operands, with the executed meaning.

    Floor division and modulo; a zero divisor gives 0; the result wraps at
    the dtype's width where it may leave the range.
    """
    match e:
        case n.Add():
            t = ta + tb
        case n.Sub():
            t = ta - tb
        case n.Mul():
            t = ta * tb
        case n.FloorDiv() | n.FloorMod():
            divisor = e.b.value if isinstance(e.b, n.IntImm) else None
            if divisor == 0:
                return z3.IntVal(0, env.ctx)
            q = floor_div(ta, divisor if divisor is not None else tb)
            t = q if isinstance(e, n.FloorDiv) else ta - tb * q
            if divisor is None:
                t = z3.If(tb == 0, 0, t)
        case _:
            raise PolypadError(f"{show(e)} is not integer arithmetic")
    return env.wrapped(t, e)


def int_cast(t: z3.ArithRef, dst: str, e: n.Expr, env: Z3Env) -> z3.ArithRef:
    """An integer ``t`` converted to integer ``dst`` (``e`` is the cast): it wraps if narrower."""
    return env.wrapped(t, e)


def floor_div(a: z3.ArithRef, b: z3.ArithRef | int) -> z3.ArithRef:
    """Floor division on Z3 integers: ``floor(a / b)`` for either sign of ``b``."""
    # Z3's Int division is Euclidean, which is floor division for b > 0;
    # for b < 0, floor(a / b) == floor(-a / -b).
    if isinstance(b, int):
        return a / b if b > 0 else (-a) / (-b)
    return z3.If(b >= 0, a / b, (-a) / (-b))


def floor_mod(a: z3.ArithRef, b: z3.ArithRef | int) -> z3.ArithRef:
    """Floor modulo on Z3 integers: ``a - b * floor(a / b)``, with the sign of ``b``."""
    return a - b * floor_div(a, b)


@guarded
def _convert(e: n.Expr, env: Z3Env) -> z3.ExprRef:
    floats, ctx = env.floats, env.ctx

    def c(x: n.Expr) -> z3.ExprRef:
        return _convert(x, env)

    match e:
        case n.Var():
            return env.var(e)
        case n.IntImm(value=v):
            return z3.IntVal(v, ctx)
        case n.BinaryOp() if dtypes.is_int(e.dtype) and not isinstance(e, (n.Min, n.Max)):
            return int_binary(e, c(e.a), c(e.b), env)
        case n.FloatImm():
            return floats.constant(e, ctx)
        case n.BoolImm(value=v):
            return z3.BoolVal(v, ctx)
        case n.Min() | n.Max():
            return floats.min_max(e, c, ctx)
        case n.BinaryOp():
            return floats.arith(e, c, ctx)
        case n.Compare():
            return floats.compare(e, c, ctx)
        case n.And(a=a, b=b):
            return z3.And(c(a), c(b))
        case n.Or(a=a, b=b):
            return z3.Or(c(a), c(b))
        case n.Not(a=a):
            return z3.Not(c(a))
        case n.Select(condition=cond, true_value=t, false_value=f):
            return z3.If(c(cond), c(t), c(f))
        case n.Cast(dtype=dtype, value=v):
            if dtypes.is_int(dtype) and dtypes.is_int(v.dtype):
                return int_cast(c(v), dtype, e, env)
            return floats.cast(c(v), v.dtype, dtype, ctx)
        case n.BufferLoad(buffer=buf, indices=idx):
            buf, idx = through_view(buf, idx)  # a view reads its memory owner's elements
            # A long expression reads the same element many times: one term each.
            term = None if env.bound else env._loads.get(e)
            if term is None:
                term = env.in_range(env.buffer(buf)(*[c(env.index(i)) for i in idx]),
                                    buf.dtype)
                if not env.bound:
                    env._loads[e] = term
            return term
        case n.Call(op=op) if op in OPAQUE:
            raise PolypadError(f"T.{op} is an opaque TVM intrinsic, with no value in Z3")
        case n.Call(op="assume" | "likely", args=(arg,)):
            return c(arg)
        case n.Call(op="undef"):
            return env.undef(e.dtype)
        case n.Call(op=op, args=args, dtype=dtype):
            terms = [c(a) for a in args]
            exact = floats.intrinsic(op, terms, dtype, ctx)
            return exact if exact is not None else env.math(op, terms, dtype)
        case n.Let(var=var, value=value, body=body):
            outer = env.bound.get(var)
            env.bind(var, c(value))
            try:
                return c(body)
            finally:
                env.bind(var, outer)
    raise PolypadError(f"cannot express {show(e)} ({type(e).__name__}) in Z3")
