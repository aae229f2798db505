"""Script expressions (Python ``ast`` nodes) to IR expressions.

Literals stay *weak* while an expression is built: a Python ``int``,
``float`` or ``bool``, or :data:`UNDEF` for ``T.undef()`` written without a
dtype.  A weak value takes the dtype of the typed operand it meets (``i64 +
1`` adds an int64 one; ``A[i] == T.undef()`` compares with an undef of A's
dtype) and otherwise becomes ``int32``, ``float32`` or ``bool``.  The
printer relies on exactly these rules to leave dtypes unwritten where the
text already implies them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import dtypes, intrinsics
from ..ir import operators as ops
from ..ir.deep import guarded
from ..ir.nodes import And, Buffer, BufferLoad, Cast, Expr, FloatImm, Let, Or, Select, Var
from ..ir.ranges import dtype_limits
from .literal_arith import LiteralTooLarge, fold, is_int_literal
from .parse_alloc import Pointer
from .parse_lowered import OPAQUE_NAMES, LoweredExprs
from .parse_region import View
from .parse_thread import EnvThread
from .source import Source, bind_args, call_name, check_dtype, describe, dtype_arg, t_attr
from .unsupported import refusal


class _WeakUndef:
    """``T.undef()`` before it has met a dtype."""

    def __repr__(self) -> str:
        return "UNDEF"


UNDEF = _WeakUndef()


@dataclass(eq=False)
class Handle:
    """A ``T.handle`` parameter, waiting for its ``T.match_buffer``.

    One that no ``T.match_buffer`` matches is a pointer (a packed function's
    ``args``): used as a value, it is the variable :meth:`pointer` makes.
    """

    name: str
    var: Var | None = None
    matched: bool = False

    def pointer(self) -> Var:
        """The parameter as a ``handle`` variable (made once)."""
        if self.var is None:
            self.var = Var(self.name, "handle")
        return self.var


Env = dict  # name -> Var | Buffer | Handle

BINOPS = {
    ast.Add: ops.add, ast.Sub: ops.sub, ast.Mult: ops.mul, ast.Div: ops.truediv,
    ast.FloorDiv: ops.floordiv, ast.Mod: ops.floormod,
}
_COMPARES = {
    ast.Eq: ops.eq, ast.NotEq: ops.ne, ast.Lt: ops.lt, ast.LtE: ops.le,
    ast.Gt: ops.gt, ast.GtE: ops.ge,
}
_SYMBOLS = {
    ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
    ast.RShift: ">>", ast.MatMult: "@", ast.Invert: "~", ast.Is: "is", ast.IsNot: "is not",
    ast.In: "in", ast.NotIn: "not in",
}
BITWISE_OPS = {ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
               ast.LShift: "shift_left", ast.RShift: "shift_right"}
# On bools TVMScript's `&`, `|`, `^` and `~` are logic, which the IR already has.
_BOOL_BITWISE = {"bitwise_and": And, "bitwise_or": Or, "bitwise_xor": ops.ne,
                 "bitwise_not": ops.logical_not}
_THREAD_STATEMENTS = {
    "T.thread_binding": 'it makes a loop, for i in T.thread_binding(n, thread="threadIdx.x")',
    "T.env_thread": 'it declares a thread axis, tx = T.env_thread("threadIdx.x")',
    "T.launch_thread": "it runs the rest of its statement list, T.launch_thread(tx, n)",
}
_BINARY_T = {"min": ops.min_, "max": ops.max_, "floordiv": ops.floordiv,
             "floormod": ops.floormod, "eq": ops.eq, "ne": ops.ne,
             # TVM's node names, which it prints for an operator on two literals
             # (`T.Sub(0, 5)`; dlight's GEMV: T.where(T.Mul(0, 16) + ...)): written as
             # `0 - 5`, Python would fold it
             "Add": ops.add, "Sub": ops.sub, "Mul": ops.mul, "FloorDiv": ops.floordiv,
             "FloorMod": ops.floormod, "Min": ops.min_, "Max": ops.max_}


def resolve(a, b):
    """Give a weak ``T.undef()`` the dtype of the other operand (float32 if none)."""
    if a is UNDEF:
        a = intrinsics.undef(b.dtype if isinstance(b, Expr) else "float32")
    if b is UNDEF:
        b = intrinsics.undef(a.dtype if isinstance(a, Expr) else "float32")
    return a, b


class ExprParser(LoweredExprs):
    """Turns expression nodes into IR, resolving names through an environment."""

    def __init__(self, src: Source):
        self.src = src

    # ------------------------------------------------------------ entry points

    @guarded
    def value(self, node: ast.expr, env: Env):
        """The IR for ``node``, or a weak literal (see the module docstring)."""
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            hint = "; use T.if_then_else" if isinstance(node, ast.IfExp) else ""
            raise self.src.error(node, f"{describe(node)} is not supported in polypad "
                                       f"script{hint}")
        return method(node, env)

    def _resolved(self, a: ast.expr, b: ast.expr, env: Env):
        """The values of ``a`` and ``b``, a weak ``T.undef()`` given the other's dtype."""
        return resolve(self.value(a, env), self.value(b, env))

    def expr(self, node: ast.expr, env: Env, dtype: str | None = None) -> Expr:
        """The IR for ``node``; a weak literal becomes a constant of ``dtype``."""
        return self.strong(self.value(node, env), node, dtype)

    def cond(self, node: ast.expr, env: Env) -> Expr:
        """A boolean condition."""
        e = self.expr(node, env, "bool")
        if not dtypes.is_bool(e.dtype):
            raise self.src.error(node, f"a condition must be bool, not {e.dtype}")
        return e

    def cond_any(self, node: ast.expr, env: Env) -> Expr:
        """A condition of one lane or several (the condition of a vector select)."""
        e = self.expr(node, env, "bool")
        if not dtypes.is_bool(dtypes.element(e.dtype)):
            raise self.src.error(node, f"a condition must be bool, not {e.dtype}")
        return e

    def index(self, node: ast.expr, env: Env) -> Expr:
        """An integer expression: a loop extent, a buffer index."""
        v = self.value(node, env)
        if v is UNDEF:
            raise self.src.error(node, "T.undef() may not appear in an index or extent")
        if isinstance(v, float) or (isinstance(v, Expr)
                                    and not dtypes.is_int(dtypes.element(v.dtype))):
            dtype = v.dtype if isinstance(v, Expr) else "float"
            raise self.src.error(node, f"an index or extent must be an integer, not {dtype}")
        return self.strong(v, node, "int32")

    def strong(self, v, node: ast.AST, dtype: str | None = None) -> Expr:
        """``v`` as an expression; weak literals become constants of ``dtype``."""
        if isinstance(v, Expr):
            return v
        if v is UNDEF:
            return intrinsics.undef(dtype or "float32")
        if dtype is None:
            return ops.as_expr(v)
        if isinstance(v, bool) != dtypes.is_bool(dtype):
            raise self.src.error(node, f"cannot use {v!r} as a {dtype} value")
        return self.build(node, ops.const, v, dtype)

    def build(self, node: ast.AST, fn, *args):
        """Call an IR builder; its TypeError becomes a ParseError at ``node``."""
        try:
            return fn(*args)
        except TypeError as e:
            raise self.src.error(node, str(e)) from None

    # ------------------------------------------------------------ leaves

    def _Constant(self, node: ast.Constant, env: Env):
        if isinstance(node.value, (bool, int, float)):
            return node.value
        if isinstance(node.value, str):
            raise self.src.error(node, "a string is not an expression")
        raise self.src.error(node, f"the constant {node.value!r} is not supported")

    def _Name(self, node: ast.Name, env: Env):
        bound = env.get(node.id)
        if bound is None:
            raise self.src.error(node, f"undefined name {node.id!r}")
        if isinstance(bound, (Buffer, View)):
            raise self.src.error(node, f"buffer {node.id!r} is used as a value; "
                                       f"index it, as in {node.id}[i]")
        if isinstance(bound, Pointer):
            raise self.src.error(node, f"{node.id!r} is the data of T.allocate; declare a "
                                       f"buffer on it: T.decl_buffer(shape, dtype, "
                                       f"data={node.id})")
        if isinstance(bound, EnvThread):
            raise self.src.error(node, f"{node.id!r} is a thread axis of T.env_thread; launch "
                                       f"it first: T.launch_thread({node.id}, extent)")
        if isinstance(bound, Handle):
            if bound.matched:
                raise self.src.error(node, f"{node.id!r} is a T.handle; use the buffer "
                                           "that T.match_buffer makes of it")
            return bound.pointer()
        return bound

    def _Attribute(self, node: ast.Attribute, env: Env):
        attr = t_attr(node)
        if attr is not None:
            raise self.src.error(node, f"T.{attr} is not an expression")
        found = self.attribute(node, env)
        if found is not None:
            return found
        raise self.src.error(node, "attribute access is not supported (only T.<name>, "
                                   "A.data and A.elem_offset)")

    def _Subscript(self, node: ast.Subscript, env: Env):
        return BufferLoad(*self.access(node, env))

    def _Slice(self, node: ast.Slice, env: Env):
        raise self.src.error(node, "a slice is not supported as a value: a slice is a "
                                   "buffer region, which polypad reads in T.reads, "
                                   "T.writes and T.match_buffer only")

    def access(self, node: ast.Subscript, env: Env,
               slices: bool = False) -> tuple[Buffer, tuple[Expr, ...]]:
        """The buffer and indices of ``A[i, j]``; through a view, those of the viewed buffer.

        ``slices`` reads a slice as a vector index (a store's ``C[b:b + 4]``).
        """
        base = self.buffer(node.value, env)
        indices = self.indices(node, base, env, slices)
        if isinstance(base, View):
            return base.buffer, base.indices(indices)
        return base, indices

    def buffer(self, node: ast.expr, env: Env) -> Buffer | View:
        """The buffer (or view of a region, T.match_buffer in a block) a subscript's base names."""
        if isinstance(node, ast.Name):
            bound = env.get(node.id)
            if isinstance(bound, (Buffer, View)):
                return bound
            if bound is None:
                raise self.src.error(node, f"undefined name {node.id!r}")
            raise self.src.error(node, f"{node.id!r} is not a buffer and cannot be indexed")
        raise self.src.error(node, "only buffers can be indexed")

    def indices(self, node: ast.Subscript, buffer: Buffer | View, env: Env,
                slices: bool = False) -> tuple[Expr, ...]:
        """The indices of ``buffer[...]``, checked against its rank."""
        key = node.slice
        parts = key.elts if isinstance(key, ast.Tuple) else [key]
        out = tuple(self.ramp_slice(p, env) if slices and isinstance(p, ast.Slice)
                    else self.index(p, env) for p in parts)
        if len(out) != buffer.ndim:
            raise self.src.error(node, f"buffer {buffer.name} has {buffer.ndim} "
                                       f"dimension{'s' if buffer.ndim != 1 else ''} "
                                       f"but is indexed with {len(out)}")
        return out

    # ------------------------------------------------------------ operators

    def _BinOp(self, node: ast.BinOp, env: Env):
        left, right = self.value(node.left, env), self.value(node.right, env)
        if is_int_literal(left) and is_int_literal(right):
            try:
                folded = fold(node.op, left, right)  # as TVMScript does, in Python
            except LiteralTooLarge as error:
                raise self.src.error(node, str(error)) from None
            if folded is not None:
                return folded
        fn = BINOPS.get(type(node.op))
        if type(node.op) in BITWISE_OPS:
            a, b = resolve(left, right)
            return self.bitwise(node, BITWISE_OPS[type(node.op)], a, b)
        if fn is None:
            hint = "; use T.pow" if isinstance(node.op, ast.Pow) else ""
            raise self.src.error(node, f"the operator '{_SYMBOLS[type(node.op)]}' "
                                       f"is not supported{hint}")
        a, b = resolve(left, right)
        return self.build(node, fn, a, b)

    def _UnaryOp(self, node: ast.UnaryOp, env: Env):
        if isinstance(node.op, ast.Not):
            return self.build(node, ops.logical_not, self.cond(node.operand, env))
        v = self.value(node.operand, env)
        if isinstance(node.op, ast.Invert):
            return self.bitwise(node, "bitwise_not", v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(v, bool):
            raise self.src.error(node, "cannot negate a bool")
        if isinstance(v, (int, float)):
            return -v  # a negative literal stays one constant
        return self.build(node, lambda e: -e, self.strong(v, node))

    def _Compare(self, node: ast.Compare, env: Env):
        # `a < b < c` is `a < b and b < c`, left-nested like `and`.
        left = self.value(node.left, env)
        result = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            fn = _COMPARES.get(type(op))
            if fn is None:
                raise self.src.error(node, f"the comparison '{_SYMBOLS[type(op)]}' "
                                           "is not supported")
            right = self.value(right_node, env)
            c = self.build(node, fn, *resolve(left, right))
            result = c if result is None else And(result, c)
            left = right
        return result

    def _BoolOp(self, node: ast.BoolOp, env: Env):
        cls = And if isinstance(node.op, ast.And) else Or
        out = self.cond(node.values[0], env)
        for v in node.values[1:]:
            out = cls(out, self.cond(v, env))
        return out

    def bitwise(self, node: ast.AST, op: str, *args):
        """``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` or their ``T.`` spelling, on ``args``.

        Integers give the bitwise intrinsic (numpy's meaning, docs/semantics.md);
        bools give logic; floats are refused.
        """
        if args and all(isinstance(a, bool) or (isinstance(a, Expr) and dtypes.is_bool(a.dtype))
                        for a in args) and op in _BOOL_BITWISE:
            return self.build(node, _BOOL_BITWISE[op], *(ops.as_expr(a) for a in args))
        if any(a is UNDEF for a in args):
            raise self.src.error(node, f"T.{op} of T.undef() is not supported")
        if any(isinstance(a, (bool, float)) for a in args):
            bad = next(a for a in args if isinstance(a, (bool, float)))
            raise self.src.error(node, f"T.{op} takes integers, not {bad!r}")
        return self.build(node, intrinsics.bitwise, op, *args)

    # ------------------------------------------------------------ T.* calls

    def _Call(self, node: ast.Call, env: Env):
        name = call_name(node)
        refused = refusal(name)
        if refused is not None:
            raise self.src.error(node, refused)
        if name is not None and name.startswith("T.axis."):
            raise self.src.error(node, f"{name} declares a block variable: write it as a "
                                       f"statement, vi = {name}(...), inside a block")
        if name is not None and name.count(".") > 1:
            raise self.src.error(node, f"{name} is not supported in polypad script")
        if name == "T.evaluate":
            raise self.src.error(node, "T.evaluate is a statement, not a value")
        if name in _THREAD_STATEMENTS:
            raise self.src.error(node, f"{name} is not a value: {_THREAD_STATEMENTS[name]}")
        if name is None or not name.startswith("T."):
            if name is None:
                raise self.src.error(node, "only calls of T.<function> are supported")
            raise self.src.error(node, f"unknown function {name!r}")
        # TVM's float absolute value (what it prints for T.abs of a float): abs.
        fname = "abs" if name == "T.fabs" else name[2:]
        if dtypes.is_valid(fname):
            return self._typed_const(node, fname, env)
        if fname in OPAQUE_NAMES:
            return self.opaque(node, fname, env)
        if fname in (intrinsics.MATH_UNARY + intrinsics.NUMERIC_UNARY + intrinsics.MATH_BINARY
                     + intrinsics.FLOAT_PREDICATES):
            names = ("a", "b") if fname in intrinsics.MATH_BINARY else ("x",)
            *args, d = bind_args(self.src, node, name, names + ("dtype",), len(names))
            # dtype= (older TVM): literal arguments take it, the result must have it.
            dtype = None if d is None else dtype_arg(self.src, d)
            vals = [self.value(a, env) for a in args]
            vals = [self.strong(v, a, dtype) if v is UNDEF or not isinstance(v, Expr) and dtype
                    else v for v, a in zip(vals, args, strict=True)]
            out = self.build(node, intrinsics.math, fname, *vals)
            return self._with_dtype(out, dtype, d, name)
        if fname in intrinsics.BITWISE:
            names = ("x",) if fname == "bitwise_not" else ("a", "b")
            *args, d = bind_args(self.src, node, name, names + ("dtype",), len(names))
            dtype = None if d is None else dtype_arg(self.src, d)
            vals = [self.value(a, env) for a in args]
            if dtype is not None:
                vals = [v if isinstance(v, Expr) or v is UNDEF else self.strong(v, a, dtype)
                        for v, a in zip(vals, args, strict=True)]
            return self._with_dtype(self.bitwise(node, fname, *vals), dtype, d, name)
        if fname in _BINARY_T:
            a, b = bind_args(self.src, node, name, ("a", "b"), 2)
            return self.build(node, _BINARY_T[fname],
                              *resolve(self.value(a, env), self.value(b, env)))
        method = getattr(self, "_t_" + fname, None)
        if method is None:
            if fname.split("x")[0] in dtypes.ALL_TYPES:
                check_dtype(self.src, node, fname)
            raise self.src.error(node, f"T.{fname} is not supported in polypad script")
        return method(node, name, env)

    def _with_dtype(self, out: Expr, dtype: str | None, node, name: str) -> Expr:
        if dtype is not None and out.dtype != dtype:
            raise self.src.error(node, f"{name}(..., dtype={dtype!r}) computes {out.dtype}")
        return out

    def _typed_const(self, node: ast.Call, dtype: str, env: Env):
        (arg,) = bind_args(self.src, node, f"T.{dtype}", ("value",), 1)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            # T.float32("inf"): the printer's spelling of non-finite constants.
            if not dtypes.is_float(dtype) or arg.value not in ("inf", "-inf", "nan"):
                raise self.src.error(arg, f"T.{dtype} of a string must be 'inf' or 'nan'")
            return FloatImm(float(arg.value), dtype)
        v = self.value(arg, env)
        if isinstance(v, Expr) or v is UNDEF:
            return self.build(node, ops.cast, dtype, self.strong(v, arg))
        return self.strong(v, arg, dtype)

    def _t_if_then_else(self, node, name, env):
        c, a, b, d = bind_args(self.src, node, name,
                               ("cond", "true_value", "false_value", "dtype"), 3)
        cond = self.cond(c, env)
        a_node, b_node = a, b
        a, b = resolve(self.value(a, env), self.value(b, env))
        if d is not None:  # TVM's dtype=: literals take it, typed branches must have it
            dtype = dtype_arg(self.src, d)
            a, b = self.strong(a, a_node, dtype), self.strong(b, b_node, dtype)
            for v, where in ((a, a_node), (b, b_node)):
                if v.dtype != dtype:
                    raise self.src.error(where, f"T.if_then_else(..., dtype={dtype!r}) has a "
                                                f"{v.dtype} branch")
        a, b = self.build(node, ops.promote, a, b)
        if a.dtype != b.dtype:
            raise self.src.error(node, f"T.if_then_else branches differ: {a.dtype}, {b.dtype}")
        return Select(cond, a, b)

    def _t_min_value(self, node, name, env):
        return self._limit(node, name, 0)

    def _t_max_value(self, node, name, env):
        return self._limit(node, name, 1)

    def _limit(self, node, name, which: int):
        """``T.min_value(dtype)`` / ``T.max_value(dtype)``: a constant, as TVM folds them
        (for a float the most negative or largest finite value, not an infinity)."""
        (d,) = bind_args(self.src, node, name, ("dtype",), 1)
        dtype = dtype_arg(self.src, d)
        return ops.const(dtype_limits(dtype)[which], dtype)

    def _t_likely(self, node, name, env):
        (c,) = bind_args(self.src, node, name, ("cond",), 1)
        return intrinsics.likely(self.cond(c, env))

    def _t_assume(self, node, name, env):
        (c,) = bind_args(self.src, node, name, ("cond",), 1)
        return intrinsics.assume(self.cond(c, env))

    def _t_undef(self, node, name, env):
        (d,) = bind_args(self.src, node, name, ("dtype",), 0)
        return UNDEF if d is None else intrinsics.undef(dtype_arg(self.src, d))

    def _t_Cast(self, node, name, env):
        d, v = bind_args(self.src, node, name, ("dtype", "value"), 2)
        return Cast(dtype_arg(self.src, d, value=True), self.expr(v, env))

    def _t_cast(self, node, name, env):
        v, d = bind_args(self.src, node, name, ("value", "dtype"), 2)
        return Cast(dtype_arg(self.src, d, value=True), self.expr(v, env))

    def _t_And(self, node, name, env):
        return self._logical(node, name, env, And)

    def _t_Or(self, node, name, env):
        return self._logical(node, name, env, Or)

    def _logical(self, node, name, env, cls):
        if node.keywords or not node.args:
            raise self.src.error(node, f"{name} takes one or more conditions")
        out = self.cond(node.args[0], env)
        for a in node.args[1:]:
            out = cls(out, self.cond(a, env))
        return out

    def _t_Not(self, node, name, env):
        (c,) = bind_args(self.src, node, name, ("cond",), 1)
        return ops.logical_not(self.cond(c, env))

    def _t_let(self, node, name, env):
        target, value, body = bind_args(self.src, node, name, ("var", "value", "body"), 3)
        if not isinstance(target, ast.Name):
            raise self.src.error(target, "the first argument of T.let must be a name")
        value = self.expr(value, env)
        var = Var(target.id, value.dtype)
        return Let(var, value, self.expr(body, {**env, target.id: var}))
