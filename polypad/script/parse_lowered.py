"""Expressions of TVM's lowered and packed text: vectors, pointers, opaque intrinsics.

Mixed into :class:`~.parse_expr.ExprParser`, whose ``_Call`` dispatches
``T.<name>`` to the ``_t_<name>`` methods here:

- ``T.Ramp(base, stride, lanes)``, ``T.Broadcast(value, lanes)`` (and the
  older ``T.broadcast``): vector values; :meth:`ramp_slice` reads the slice
  of a vector store, ``C[b:b + 4] = ...`` or ``C[b:b + 16:4] = ...``;
- ``T.Select(c, a, b)``: TVM's select, which evaluates both branches; read
  as ``T.if_then_else`` (marked ``eager``, so it prints back as ``T.Select``),
  which evaluates the one it takes -- the same value
  wherever both branches are defined, which TVM requires of ``T.Select``;
- ``T.Div(a, b)``: C's division, truncating toward zero on integers,
  spelled with floor division (``a // b``, plus one where the exact
  quotient is negative and not whole) so the analyses read it; on floats,
  ``a / b``; ``T.truncdiv(a, b)`` the same on integers, ``T.truncmod(a, b)``
  C's remainder (of the sign of ``a``), spelled with ``a % b`` alike;
- the opaque intrinsics of :mod:`polypad.ir.opaque` (``T.tvm_struct_get``,
  ``T.call_extern``, ``T.tvm_fill_fragment`` ...), whose arguments may be
  strings, ``A.data`` and types (``T.handle("float32").ty``);
- ``A.data`` and ``A.elem_offset``.
"""

from __future__ import annotations

import ast

from ..ir import dtypes
from ..ir import operators as ops
from ..ir.nodes import (
    Broadcast,
    Buffer,
    BufferData,
    Call,
    Expr,
    IntImm,
    Ramp,
    Select,
    StringImm,
)
from ..ir.opaque import OPAQUE, implied_dtype
from ..ir.truncation import truncated_div, truncated_mod
from ..ir.views import flat_offset
from .parse_region import View, span_extent
from .source import bind_args, dtype_arg, t_attr


class LoweredExprs:
    """The ``_t_`` methods for TVM's lowered expressions (a mixin of ExprParser)."""

    # ------------------------------------------------------------ vectors

    def _t_Ramp(self, node, name, env):
        base, stride, lanes = bind_args(self.src, node, name, ("base", "stride", "lanes"), 3)
        b, s = ops.promote(self.index(base, env), self.index(stride, env))
        return Ramp(b, s, self._lanes(lanes, name))

    def _t_Broadcast(self, node, name, env):
        value, lanes = bind_args(self.src, node, name, ("value", "lanes"), 2)
        v = self.expr(value, env)
        if dtypes.lanes(v.dtype) > 1:
            raise self.src.error(value, f"{name} takes a scalar, not a {v.dtype} vector")
        return Broadcast(v, self._lanes(lanes, name))

    _t_broadcast = _t_Broadcast  # the older spelling

    def _lanes(self, node: ast.expr, name: str) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 1:
            return node.value
        raise self.src.error(node, f"the lanes of {name} must be a positive integer literal")

    def ramp_slice(self, node: ast.Slice, env) -> Ramp:
        """``b:b + 16:4`` in a store: ``T.Ramp(b, 4, 4)`` (TVM's printing of a vector store)."""
        if node.lower is None or node.upper is None:
            raise self.src.error(node, "a vector store's slice needs a start and a stop, "
                                       "as in C[b:b + 4]")
        lo = self.index(node.lower, env)
        step = IntImm(1, lo.dtype) if node.step is None else self.index(node.step, env)
        length = span_extent(lo, self.index(node.upper, env))
        if not (isinstance(length, IntImm) and isinstance(step, IntImm) and step.value > 0
                and length.value > 0 and length.value % step.value == 0):
            raise self.src.error(node, "a vector store's slice spans a constant number of "
                                       "lanes: b:b + 4, or b:b + 16:4 with a step")
        lanes = length.value // step.value
        return Ramp(lo, ops.cast(lo.dtype, step), lanes)

    # ------------------------------------------------------------ selects and division

    def _t_Select(self, node, name, env):
        c, a, b = bind_args(self.src, node, name, ("condition", "true_value", "false_value"), 3)
        cond = self.cond_any(c, env)
        a, b = self.build(node, ops.promote, *self._resolved(a, b, env))
        return Select(cond, a, b, eager=True)

    def _t_Div(self, node, name, env):
        a, b = bind_args(self.src, node, name, ("a", "b"), 2)
        x, y = self.build(node, ops.promote, *self._resolved(a, b, env))
        if dtypes.is_float(dtypes.element(x.dtype)):
            return self.build(node, ops.truediv, x, y)
        if not dtypes.is_int(x.dtype):
            raise self.src.error(node, f"T.Div takes numbers, not {x.dtype}")
        return truncated_div(x, y)

    def _t_truncdiv(self, node, name, env):
        return truncated_div(*self._integer_pair(node, name, env))

    def _t_truncmod(self, node, name, env):
        return truncated_mod(*self._integer_pair(node, name, env))

    def _integer_pair(self, node, name, env) -> tuple[Expr, Expr]:
        a, b = bind_args(self.src, node, name, ("a", "b"), 2)
        x, y = self.build(node, ops.promote, *self._resolved(a, b, env))
        if not dtypes.is_int(x.dtype):
            raise self.src.error(node, f"{name} takes integers, not {x.dtype}")
        return x, y

    # ------------------------------------------------------------ pointers

    def attribute(self, node: ast.Attribute, env):
        """``A.data``, ``A.elem_offset``, ``T.handle("float32").ty``, or None."""
        if node.attr == "ty" and isinstance(node.value, ast.Call) \
                and t_attr(node.value.func) == "handle":
            args = tuple(StringImm(self._string(a)) for a in node.value.args)
            return Call("type_annotation", args, "handle")
        bound = env.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if isinstance(bound, View):  # T.match_buffer of a region, in a block
            if node.attr == "data":
                return BufferData(bound.buffer)
            if node.attr == "elem_offset":
                return bound.elem_offset if bound.elem_offset is not None else flat_offset(
                    bound.starts, bound.buffer.shape)
        if isinstance(bound, Buffer):
            if node.attr == "data":
                return BufferData(bound)
            if node.attr == "elem_offset":
                # A buffer's own memory starts at its first element: a view says where.
                return bound.elem_offset if bound.elem_offset is not None else IntImm(0)
        return None

    def _string(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        raise self.src.error(node, "a type's arguments are strings, as in "
                                   'T.handle("float32", "global").ty')

    # ------------------------------------------------------------ opaque intrinsics

    def opaque(self, node: ast.Call, op: str, env) -> Call:
        """``T.<op>(...)`` for an intrinsic of :data:`OPAQUE`: a call polypad keeps."""
        dtype = None
        for kw in node.keywords:
            if kw.arg != "dtype":
                raise self.src.error(kw, f"T.{op} has no argument {kw.arg!r}")
            dtype = dtype_arg(self.src, kw.value, value=True)
        args = tuple(self._opaque_arg(a, env) for a in node.args)
        dtype = dtype or implied_dtype(op, args)
        if dtype is None:
            raise self.src.error(node, f"T.{op} needs its dtype: dtype=\"int32\" or the "
                                       "dtype as its first argument")
        return Call(op, args, dtype)

    def _opaque_arg(self, node: ast.expr, env) -> Expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return StringImm(node.value)
        return self.expr(node, env)


OPAQUE_NAMES = frozenset(OPAQUE)
