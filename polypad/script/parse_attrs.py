"""Attribute values and return types: ``T.func_attr({...})``, ``-> T.int32``.

TVM's attributes hold more than literals: lists (``{"layout_free_buffers":
[1]}``), dicts, and calls such as ``T.target("cuda", host="llvm")`` or
TVM 0.27's ``T.target({"kind": "llvm", ...})``.  They steer TVM only, so
polypad reads them into the immutable values of
:mod:`polypad.ir.attr_values` and prints them back; nothing else reads them.
"""

from __future__ import annotations

import ast

from ..ir import dtypes
from ..ir.attr_values import AttrCall, AttrMap
from .source import Source, t_attr

#: ``T.<name>(...)`` calls an attribute value may hold.
_VALUE_CALLS = ("target",)


def attr_value(src: Source, node: ast.expr):
    """The attribute value ``node`` spells: a literal, tuple, AttrMap or AttrCall."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(
            node.value, (str, int, float, bool))):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(attr_value(src, e) for e in node.elts)
    if isinstance(node, ast.Dict):
        items = []
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise src.error(k or node, "an attribute dict's keys must be strings")
            items.append((k.value, attr_value(src, v)))
        return AttrMap(tuple(items))
    if isinstance(node, ast.Call):
        name = t_attr(node.func)
        if name in dtypes.ALL_TYPES and len(node.args) == 1 and not node.keywords:
            return attr_value(src, node.args[0])  # T.bool(True), T.int32(1): the literal
        if name in _VALUE_CALLS:
            args = tuple(attr_value(src, a) for a in node.args)
            kwargs = tuple((kw.arg, attr_value(src, kw.value)) for kw in node.keywords
                           if kw.arg is not None)
            return AttrCall(name, args, kwargs)
    raise src.error(node, "an attribute value must be a literal, a list, a dict or "
                          "T.target(...)")


def func_attrs(src: Source, call: ast.Call) -> list[tuple[str, object]]:
    """The ``(name, value)`` pairs of ``T.func_attr({...})``."""
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Dict):
        raise src.error(call, "T.func_attr takes one dict literal")
    out = []
    for k, v in zip(call.args[0].keys, call.args[0].values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise src.error(k or call, "a function attribute name must be a string")
        out.append((k.value, attr_value(src, v)))
    return out


def return_dtype(src: Source, node: ast.expr | None) -> str | None:
    """None for no annotation or ``-> None``; ``"int32"`` for ``-> T.int32`` (a packed
    function's status code)."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None
    dtype = t_attr(node)
    if dtype is not None and (dtypes.is_valid(dtype) or dtype == "handle"):
        return dtype
    raise src.error(node, "a prim_func returns nothing (-> None) or a scalar (-> T.int32)")
