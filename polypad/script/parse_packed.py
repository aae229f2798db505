"""Statements of TVM's lowered and packed text, mixed into the statement parser.

- ``T.attr(node, key, value)`` (for the rest of its list) and ``with
  T.attr(...):`` (TVM 0.27 also writes ``with T.attr({"compute_scope":
  "f_compute_"}):``, whose node is 0): an :class:`~polypad.ir.nodes.AttrStmt`;
- ``assert cond, ("TypeError", [...])``: an :class:`~polypad.ir.nodes.Assert`
  keeping the message as text; ``return 0``: a :class:`~polypad.ir.nodes.Return`;
- a vector store, ``C[b:b + 4] = v`` or ``C[T.Ramp(b, 1, 4)] = v``;
- ``T.match_buffer`` of a region in a block whose ``elem_offset=`` names a
  variable declared further up (``off = T.int32()``): the variable is bound
  to where the region starts;
- the annotation of a typed let: ``x: T.let[T.int32] = v`` (TVM 0.27),
  ``x: T.int32 = v`` and ``p: T.handle("int32") = v`` (older TVM).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from ..ir import dtypes
from ..ir import operators as ops
from ..ir.nodes import (
    Assert,
    AttrStmt,
    Broadcast,
    Buffer,
    BufferStore,
    Expr,
    IntImm,
    LetStmt,
    Return,
    StringImm,
    Var,
)
from ..ir.views import flat_offset
from .parse_attrs import attr_value
from .parse_region import View, match_region
from .source import Source, bind_args, call_name, string_arg, t_attr


def let_annotation(src: Source, node: ast.expr) -> str:
    """The dtype of ``T.let[T.int32]``, ``T.int32``, ``T.handle`` or ``T.handle("int32")``."""
    if isinstance(node, ast.Subscript) and t_attr(node.value) == "let":
        node = node.slice
    if isinstance(node, ast.Call) and t_attr(node.func) == "handle":
        return "handle"  # the pointee type only steers TVM's code generation
    name = t_attr(node)
    if name is not None and (dtypes.is_valid(name) or dtypes.is_vector(name)
                             or name == "handle"):
        return name
    raise src.error(node, "a typed let is written x: T.let[T.int32] = value (or x: T.int32, "
                          "x: T.handle)")


class PackedStmts:
    """Statement handlers for TVM's lowered and packed text (a mixin of StmtParser)."""

    def attr(self, call: ast.Call, env: dict, span):
        """``make(rest)`` for ``T.attr(node, key, value)`` or ``T.attr({key: value, ...})``."""
        if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict):
            pairs = []
            for k, v in zip(call.args[0].keys, call.args[0].values, strict=True):
                pairs.append((string_arg(self.src, k, "an attribute key"),
                              self._attr_expr(v, env)))
            node = IntImm(0)
        else:
            node_arg, key_arg, value_arg = bind_args(self.src, call, "T.attr",
                                                     ("node", "attr_key", "value"), 3)
            node = self._attr_node(node_arg, env)
            pairs = [(string_arg(self.src, key_arg, "an attribute key"),
                      self._attr_expr(value_arg, env))]

        def make(rest):
            for key, value in reversed(pairs):
                rest = AttrStmt(node, key, value, rest, span=span)
            return rest
        return make

    def _attr_expr(self, node: ast.expr, env: dict) -> Expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return StringImm(node.value)
        return self.exprs.expr(node, env)

    def _attr_node(self, node: ast.expr, env: dict):
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), (Buffer, View)):
            bound = env[node.id]
            return bound.buffer if isinstance(bound, View) else bound
        if isinstance(node, (ast.List, ast.Tuple)):
            return tuple(self._attr_node(e, env) for e in node.elts)
        if call_name(node) == "T.target":
            return attr_value(self.src, node)
        return self._attr_expr(node, env)

    def _Assert(self, node: ast.Assert, env: dict):
        cond = self.exprs.cond(node.test, env)
        message = "" if node.msg is None else ast.unparse(node.msg)
        return Assert(cond, message, span=self.src.span(node))

    def _Return(self, node: ast.Return, env: dict):
        if node.value is None:
            raise self.src.error(node, "return needs a value (a packed function's status)")
        return Return(self.exprs.expr(node.value, env), span=self.src.span(node))

    def vector_store(self, node: ast.stmt, buffer: Buffer, indices, lanes: int, value,
                     value_node: ast.expr) -> BufferStore:
        """``C[b:b + 4] = v``: ``v`` must have the store's lanes (a literal is broadcast)."""
        for index in indices:
            if dtypes.lanes(index.dtype) not in (1, lanes):
                raise self.src.error(node, "the vector indices of a store must have one "
                                           "lane count")
        if not isinstance(value, Expr):
            value = Broadcast(self.exprs.strong(value, value_node, buffer.dtype), lanes)
        want = dtypes.with_lanes(buffer.dtype, lanes)
        if value.dtype != want:
            raise self.src.error(value_node, f"a {lanes}-lane store to {buffer.name} needs a "
                                             f"{want} value, not {value.dtype} (broadcast a "
                                             f"scalar with T.Broadcast(v, {lanes}))")
        return BufferStore(buffer, value, indices, span=self.src.span(node))

    def match_in_block(self, call: ast.Call, name: str, env: dict, span):
        """``name = T.match_buffer(A[...], shape, elem_offset=off)`` in a block: the view,
        and a let binding ``off`` (declared ``off = T.int32()``) to where it starts."""
        var = None
        keywords = []
        for kw in call.keywords:
            bound = env.get(kw.value.id) if isinstance(kw.value, ast.Name) else None
            if (kw.arg == "elem_offset" and isinstance(bound, Var)
                    and bound in self.symbolic.order and bound not in self.symbolic.bound):
                var = bound
            else:
                keywords.append(kw)
        if var is not None:
            call = ast.Call(call.func, call.args, keywords, lineno=call.lineno,
                            col_offset=call.col_offset)
        view = match_region(self.src, call, name, self.exprs, env)
        if var is None:
            return None, name, view
        self.symbolic.bound.add(var)
        offset = ops.cast(var.dtype, flat_offset(view.starts, view.buffer.shape))
        view = replace(view, elem_offset=var)
        return (lambda rest: LetStmt(var, offset, rest, span=span)), name, view
