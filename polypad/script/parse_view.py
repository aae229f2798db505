"""Declarations over memory a buffer does not own: views and pointers.

TVM's flattening declares a flat buffer over a parameter's memory, and its
storage rewrite declares one allocation's memory under a second name::

    A_1 = A.view(3072)                                  # TVM 0.27
    T_1 = T.decl_buffer((4,), data=T.data)              # the same, any shape
    A_flat = T.Buffer([16384], data=A.data)             # older TVM

Each is a :class:`~polypad.ir.nodes.DeclBuffer` of a buffer whose ``data``
is the buffer owning the memory (:mod:`polypad.ir.views`), with
``elem_offset=`` where it starts (``A.view`` keeps ``A``'s).  A view has
its base's dtype (reinterpreting memory as another type is refused).

A packed function declares buffers over pointers polypad does not follow
(``data=T.reinterpret(...)``, a ``T.handle`` variable) and, with a body's
``A = T.Buffer((8, 12))``, over no memory at all (TVM makes it a fresh
pointer): those are declarations too, with the pointer expression, or
:data:`~polypad.ir.nodes_tvm.NO_DATA`, as their data.
"""

from __future__ import annotations

import ast

from ..ir.nodes import NO_DATA, Buffer, Expr, StringImm
from ..ir.views import flat_offset, root
from .parse_buffer import make_buffer, neutral_keywords, parse_shape
from .parse_region import View
from .source import Source, bind_args

# TVM's argument order, shared by T.decl_buffer and T.Buffer.
_DECL = ("shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
         "offset_factor", "buffer_type", "axis_separators")


def declares(call: ast.Call, fname: str, env: dict) -> bool:
    """Whether ``T.decl_buffer``/``T.Buffer`` declares over memory it does not allocate.

    ``T.decl_buffer(shape)`` allocates, and so does a declaration over the
    data of a ``T.allocate`` (:mod:`.parse_alloc`); everything else with
    ``data=``, and a body's ``T.Buffer`` without it, declares.
    """
    from .parse_alloc import Pointer

    data = next((kw.value for kw in call.keywords if kw.arg == "data"), None)
    if data is None and len(call.args) >= 3:
        data = call.args[2]
    if data is None:
        return fname == "T.Buffer"
    return not (isinstance(data, ast.Name) and isinstance(env.get(data.id), Pointer))


def declare(src: Source, call: ast.Call, fname: str, name: str, env: dict, exprs) -> Buffer:
    """The buffer ``name = T.decl_buffer(shape, dtype, data=..., elem_offset=...)`` declares."""
    offset_node = next((kw.value for kw in call.keywords if kw.arg == "elem_offset"), None)
    stripped = ast.Call(call.func, call.args,
                        [kw for kw in call.keywords if kw.arg != "elem_offset"],
                        lineno=call.lineno, col_offset=call.col_offset)
    stripped = neutral_keywords(src, stripped, fname)
    args = dict(zip(_DECL, bind_args(src, stripped, fname, _DECL, 1), strict=True))
    for key in ("strides", "align", "offset_factor", "buffer_type"):
        if args[key] is not None:
            raise src.error(args[key], f"{fname} with {key}= is not supported: polypad "
                                       "buffers are dense and row-major")
    data = args["data"]
    base = _memory(src, data, fname, env, exprs)
    # The dtype defaults to float32, as in TVM: a view of an int32 buffer says "int32".
    buffer = make_buffer(src, name, args["shape"], args["dtype"], args["scope"],
                         args["axis_separators"], env=env)
    offset = None if offset_node is None else exprs.index(offset_node, env)
    if isinstance(base, Buffer):
        if buffer.dtype != base.dtype:
            raise src.error(args["dtype"] or call, f"{fname} declares {buffer.dtype} over the "
                                           f"{base.dtype} memory of {base.name!r}: a view "
                                           "keeps its buffer's dtype")
        scope = base.scope if args["scope"] is None else buffer.scope
        return Buffer(name, buffer.shape, buffer.dtype, buffer.axis_separators, scope,
                      data=base, elem_offset=offset)
    if offset is not None:
        raise src.error(offset_node, f"{fname} over a pointer takes no elem_offset=")
    return Buffer(name, buffer.shape, buffer.dtype, buffer.axis_separators, buffer.scope,
                  data=base)


def view_method(src: Source, call: ast.Call, name: str, env: dict) -> Buffer | None:
    """``name = A.view(3072)`` (TVM 0.27): a view of ``A``'s memory, ``A``'s offset and
    dtype; None when ``call`` is not such a call."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "view"
            and isinstance(func.value, ast.Name)):
        return None
    bound = env.get(func.value.id)
    if not isinstance(bound, (Buffer, View)):
        return None
    if call.keywords:
        raise src.error(call.keywords[0], "A.view(...) takes the new shape only")
    if len(call.args) == 1 and isinstance(call.args[0], ast.Constant) \
            and isinstance(call.args[0].value, str):
        raise src.error(call.args[0], "A.view(dtype) is not supported: a view keeps its "
                                      "buffer's dtype")
    shape_node = ast.Tuple(list(call.args), ast.Load())
    shape = parse_shape(src, ast.copy_location(shape_node, call), env)
    memory, offset = _owner(bound)
    return Buffer(name, shape, memory.dtype, (), memory.scope, data=memory,
                  elem_offset=offset)


def _owner(bound: Buffer | View) -> tuple[Buffer, Expr | None]:
    """The buffer owning ``bound``'s memory, and where in it ``bound`` starts."""
    if isinstance(bound, View):  # T.match_buffer of a region: its first element
        return root(bound.buffer), flat_offset(bound.starts, bound.buffer.shape)
    return root(bound), bound.elem_offset


def _memory(src: Source, data: ast.expr | None, fname: str, env: dict,
            exprs) -> Buffer | Expr:
    """What ``data=`` names: the buffer owning the memory, or a pointer expression."""
    if data is None:
        return NO_DATA
    if isinstance(data, ast.Attribute) and data.attr == "data" \
            and isinstance(data.value, ast.Name):
        bound = env.get(data.value.id)
        if isinstance(bound, (Buffer, View)):
            memory, offset = _owner(bound)
            return memory
    value = exprs.expr(data, env)
    if isinstance(value, StringImm) or value.dtype != "handle":
        raise src.error(data, f"the data= of {fname} must be a pointer: A.data, a "
                              "T.handle or a pointer intrinsic")
    return value
