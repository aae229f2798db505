"""Lowered-dialect allocation: ``T.allocate``, ``T.decl_buffer`` and ``T.Buffer(data=...)``.

TVM's lowered text allocates raw memory and declares a buffer over it::

    A_data = T.allocate([16], "float32", "global")
    A = T.decl_buffer((16,), "float32", data=A_data)   # or T.Buffer(..., data=A_data)

polypad's IR has one allocation node, :class:`~polypad.ir.nodes.Allocate`,
which allocates a buffer for the rest of its statement list.  So the
allocation is read as a :class:`Pointer` that binds no IR, and the
declaration over it becomes the ``Allocate``.  That is exact only when the
declaration is the one view of the memory and lives as long as it: the
declaration must stand later in the same statement list, declare the same
number of elements of the same dtype, and be the only one.  Anything else
(aliasing, views of parameters, strides) is refused with a message that says
which.  ``T.decl_buffer`` without ``data`` allocates its own memory, as
``T.alloc_buffer`` does; its ``with ... as A:`` form allocates for the body.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

from ..ir.nodes import Buffer, Var
from .parse_buffer import make_buffer, neutral_keywords, parse_shape
from .source import Source, bind_args, dtype_arg, string_arg

# TVM's parameters that describe a view polypad's buffers cannot express.
_VIEW_ONLY = ("strides", "elem_offset", "align", "offset_factor", "buffer_type")
# TVM's argument order, shared by T.decl_buffer and T.Buffer.
_DECL = ("shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
         "offset_factor", "buffer_type", "axis_separators")


@dataclass(eq=False)
class Pointer:
    """The data of ``name = T.allocate(...)``: memory no buffer has declared yet.

    ``siblings`` are the ids of the statements after the allocation in its
    list: only they may declare the buffer (same lifetime).
    """

    name: str
    shape: tuple[int | Var, ...]
    dtype: str
    scope: str
    siblings: frozenset[int] = field(default_factory=frozenset)
    declared: int | None = None  # the line of the declaration, once there is one


def allocate(src: Source, call: ast.Call, name: str, env: dict,
             siblings: frozenset[int]) -> Pointer:
    """``name = T.allocate(extents, dtype, scope)``: a :class:`Pointer`."""
    extents, dtype, scope, condition, annotations = bind_args(
        src, call, "T.allocate", ("extents", "dtype", "scope", "condition", "annotations"), 2)
    if condition is not None and not (isinstance(condition, ast.Constant)
                                      and condition.value is True):
        raise src.error(condition, "T.allocate with a condition is not supported")
    if annotations is not None:
        raise src.error(annotations, "T.allocate with annotations is not supported")
    sc = "global" if scope is None else string_arg(src, scope, "a buffer scope")
    return Pointer(name, parse_shape(src, extents, env), dtype_arg(src, dtype), sc, siblings)


def decl_buffer(src: Source, call: ast.Call, fname: str, name: str, env: dict,
                stmt: ast.stmt | None, *, pointer_param: bool = False) -> Buffer:
    """The Buffer of ``T.decl_buffer(...)`` or a body's ``T.Buffer(..., data=ptr)``.

    ``stmt`` is the declaring statement (None for the ``with`` form, which
    cannot take ``data``).  With ``pointer_param``, ``data=`` is a pointer
    parameter (``a: T.handle("float32")``) whose buffer this declares.
    """
    call = neutral_keywords(src, call, fname)
    args = dict(zip(_DECL, bind_args(src, call, fname, _DECL, 1), strict=True))
    for key in _VIEW_ONLY:
        if args[key] is not None:
            raise src.error(args[key], f"{fname} with {key}= is not supported: polypad "
                                       "buffers are dense, row-major and start at element 0")
    data = args["data"]
    if pointer_param:
        return make_buffer(src, name, args["shape"], args["dtype"], args["scope"],
                           args["axis_separators"], env=env)
    if data is None and fname == "T.Buffer":
        raise src.error(call, "T.Buffer in a function body needs data= from T.allocate; "
                              "write T.alloc_buffer(shape, dtype) to allocate a buffer")
    buffer = make_buffer(src, name, args["shape"], args["dtype"], args["scope"],
                         args["axis_separators"], env=env)
    if data is None:
        return buffer
    if stmt is None:
        raise src.error(data, f"with {fname}(..., data=...) is not supported; declare the "
                              "buffer with an assignment after its T.allocate")
    pointer = _pointer(src, data, fname, env)
    _check_matches(src, call, fname, buffer, pointer, stmt, args["dtype"], args["scope"])
    pointer.declared = stmt.lineno
    return Buffer(buffer.name, buffer.shape, pointer.dtype, buffer.axis_separators,
                  pointer.scope)


def _pointer(src: Source, data: ast.expr, fname: str, env: dict) -> Pointer:
    if isinstance(data, ast.Attribute) and data.attr == "data":
        raise src.error(data, f"{fname}(..., data={ast.unparse(data)}) is not supported: "
                              "polypad does not alias buffers (a view of another buffer)")
    bound = env.get(data.id) if isinstance(data, ast.Name) else None
    if not isinstance(bound, Pointer):
        raise src.error(data, f"the data= of {fname} must name the result of T.allocate")
    return bound


def _check_matches(src: Source, call: ast.Call, fname: str, buffer: Buffer, pointer: Pointer,
                   stmt: ast.stmt, dtype: ast.expr | None, scope: ast.expr | None) -> None:
    """Refuse a declaration that is not the one whole view of ``pointer``'s memory."""
    if pointer.declared is not None:
        raise src.error(call, f"the data {pointer.name!r} of T.allocate is already declared "
                              f"at line {pointer.declared}: polypad does not alias buffers")
    if id(stmt) not in pointer.siblings:
        raise src.error(call, f"{fname}(..., data={pointer.name}) must stand in the same "
                              f"statement list as the T.allocate of {pointer.name!r}")
    if dtype is not None and buffer.dtype != pointer.dtype:
        raise src.error(dtype, f"{fname} declares {buffer.dtype} over the {pointer.dtype} "
                               f"data {pointer.name!r}")
    if scope is not None and buffer.scope != pointer.scope:
        raise src.error(scope, f"{fname} has scope {buffer.scope!r} but {pointer.name!r} "
                               f"was allocated in {pointer.scope!r}")
    if _elements(buffer.shape) != _elements(pointer.shape):
        raise src.error(call, f"{fname} declares {_text(buffer.shape)} over the "
                              f"{_text(pointer.shape)} data {pointer.name!r}: "
                              "the element counts must be the same")


def _elements(shape: tuple[int | Var, ...]):
    """The element count, or the shape itself when it is symbolic (compared as is)."""
    if all(isinstance(d, int) for d in shape):
        return math.prod(shape)
    return shape


def _text(shape: tuple[int | Var, ...]) -> str:
    dims = [d.name if isinstance(d, Var) else str(d) for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
