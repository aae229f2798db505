"""Buffer declarations: ``T.Buffer`` annotations, ``T.alloc_buffer``, ``T.match_buffer``.

All three spell a shape (an int, or a tuple or list of ints and scalar
variables), a dtype (``"float32"`` when omitted) and optionally
``scope="..."`` and ``axis_separators=[...]``.
"""

from __future__ import annotations

import ast
import dataclasses

from ..ir import dtypes
from ..ir.attr_values import AttrMap
from ..ir.nodes import Buffer, Var
from .literal_arith import constant_int
from .parse_attrs import attr_value
from .source import Source, bind_args, dtype_arg, string_arg, t_attr

# The arguments after the shape, shared by every spelling.
_TAIL = ("dtype", "scope", "axis_separators")


# TVM's layout keywords that, at these values, describe what polypad's buffers are
# anyway (dense, row-major, from element 0): read and dropped.
_NEUTRAL = {"elem_offset": (0,), "align": None, "offset_factor": None,
            "buffer_type": ("", "default")}


def neutral_keywords(src: Source, node: ast.Call, fname: str) -> ast.Call:
    """``node`` without ``elem_offset=0``, ``align=64``, ``offset_factor=1`` and the like.

    A value that would change the layout (a nonzero offset, ``strides``) is
    refused with the construct's name.
    """
    kept = []
    for kw in node.keywords:
        if kw.arg == "annotations":
            continue  # hints for TVM's passes (T.alloc_buffer(..., annotations={...}))
        if kw.arg == "strides" or kw.arg not in _NEUTRAL:
            if kw.arg == "strides":
                raise src.error(kw.value, f"{fname} with strides= is not supported: polypad "
                                          "buffers are dense and row-major")
            kept.append(kw)
            continue
        allowed = _NEUTRAL[kw.arg]
        value = kw.value.value if isinstance(kw.value, ast.Constant) else None
        ok = (type(value) is int) if allowed is None else value in allowed
        if not ok:
            want = "an integer literal" if allowed is None else " or ".join(map(repr, allowed))
            raise src.error(kw.value, f"{fname} with {kw.arg}={ast.unparse(kw.value)} is not "
                                      f"supported: polypad reads {kw.arg}= only as {want}")
    if len(kept) == len(node.keywords):
        return node
    return ast.Call(node.func, node.args, kept, lineno=node.lineno, col_offset=node.col_offset)


def tvm_attrs(node: ast.Call) -> tuple[tuple[str, object], ...]:
    """The layout keywords of ``node`` that :func:`neutral_keywords` accepts and drops,
    except ``elem_offset=0``, as written: kept on the Buffer for the printer."""
    return tuple((kw.arg, kw.value.value) for kw in node.keywords
                 if kw.arg in _NEUTRAL and kw.arg != "elem_offset"
                 and isinstance(kw.value, ast.Constant))


def _with_tvm_attrs(buffer: Buffer, node: ast.Call) -> Buffer:
    attrs = tvm_attrs(node)
    return dataclasses.replace(buffer, tvm_attrs=buffer.tvm_attrs + attrs) if attrs else buffer


def annotation_buffer(src: Source, node: ast.expr, name: str, env: dict) -> Buffer:
    """The Buffer of a parameter annotation ``T.Buffer(...)`` or ``T.Buffer[...]``."""
    if isinstance(node, ast.Call):
        call = node
        node = neutral_keywords(src, node, "T.Buffer")
        shape, *tail = bind_args(src, node, "T.Buffer", ("shape",) + _TAIL, 1)
        return _with_tvm_attrs(make_buffer(src, name, shape, *tail, env=env), call)
    assert isinstance(node, ast.Subscript)
    key = node.slice
    # T.Buffer[(4, 4), "float32"], T.Buffer[14, "float32"], T.Buffer[(4, 4)]
    if (isinstance(key, ast.Tuple) and len(key.elts) == 2
            and isinstance(key.elts[1], ast.Constant) and isinstance(key.elts[1].value, str)):
        return make_buffer(src, name, key.elts[0], key.elts[1], env=env)
    return make_buffer(src, name, key, None, env=env)


def is_buffer_annotation(node: ast.expr) -> bool:
    """True for ``T.Buffer(...)`` and ``T.Buffer[...]``."""
    base = node.func if isinstance(node, ast.Call) else (
        node.value if isinstance(node, ast.Subscript) else None)
    return base is not None and t_attr(base) == "Buffer"


def alloc_buffer(src: Source, node: ast.Call, name: str, env: dict) -> Buffer:
    """The Buffer of ``name = T.alloc_buffer(shape, dtype, scope=...)``."""
    call = node
    node = neutral_keywords(src, node, "T.alloc_buffer")
    shape, *tail = bind_args(src, node, "T.alloc_buffer", ("shape",) + _TAIL, 1)
    buffer = _with_tvm_attrs(make_buffer(src, name, shape, *tail, env=env), call)
    # TVM's hints for its own passes, kept as written so that they print back (TVM's
    # structural equality compares them, polypad's does not); nothing else reads them.
    hints = [attr_value(src, kw.value) for kw in call.keywords if kw.arg == "annotations"]
    if hints and hints[0] != AttrMap(()):
        buffer = dataclasses.replace(buffer, tvm_attrs=(*buffer.tvm_attrs,
                                                        ("annotations", hints[0])))
    return buffer


def match_buffer(src: Source, node: ast.Call, name: str,
                 env: dict) -> tuple[ast.expr | None, Buffer]:
    """``name = T.match_buffer(handle, shape, dtype)``: the handle's node and the Buffer.

    The handle may be left out (the RFC does); the caller then takes the
    next unmatched handle parameter.
    """
    call = node
    node = neutral_keywords(src, node, "T.match_buffer")
    names = ("param", "shape") + _TAIL
    args = list(node.args)
    keywords = {kw.arg for kw in node.keywords}
    if not args and "param" not in keywords:
        names = names[1:]  # T.match_buffer(shape=(16, 14), dtype="float32")
    bound = bind_args(src, node, "T.match_buffer", names, len(names) - 3)
    if len(names) == 4:
        bound = [None] + bound
    handle, shape, *tail = bound
    return handle, _with_tvm_attrs(make_buffer(src, name, shape, *tail, env=env), call)


def make_buffer(src: Source, name: str, shape: ast.expr, dtype: ast.expr | None,
                scope: ast.expr | None = None, axis_separators: ast.expr | None = None,
                *, env: dict) -> Buffer:
    """A Buffer from the argument nodes of any of the spellings."""
    dims = parse_shape(src, shape, env)
    dt = "float32" if dtype is None else dtype_arg(src, dtype)
    sc = "global" if scope is None else string_arg(src, scope, "a buffer scope")
    seps = () if axis_separators is None else _separators(src, axis_separators, len(dims))
    buffer = Buffer(name, dims, dt, seps, sc)
    parts = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
    literal = [_int_type(p) for p in parts if not _is_name(p)]
    if literal and all(t == "int64" for t in literal):
        # TVM keeps an extent's type (topi.repeat's shape is T.int64): printed back so.
        buffer = dataclasses.replace(buffer, tvm_attrs=((SHAPE_DTYPE, "int64"),))
    return buffer


#: The ``tvm_attrs`` key saying that every literal extent of a buffer's shape was written
#: ``T.int64(k)``; the printer writes them so again.  The extents themselves are ints.
SHAPE_DTYPE = "shape_dtype"


def _int_type(node: ast.expr) -> str:
    """``"int64"`` for ``T.int64(16)``, ``"int32"`` for a bare literal (TVM's default)."""
    if (isinstance(node, ast.Call) and t_attr(node.func) in dtypes.INT_TYPES
            and len(node.args) == 1 and not node.keywords):
        return t_attr(node.func)
    return "int32"


def _is_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) or (isinstance(node, ast.Constant)
                                          and isinstance(node.value, str))


def parse_shape(src: Source, node: ast.expr, env: dict) -> tuple[int | Var, ...]:
    """``14``, ``(4, 4)``, ``[n, 4]`` -> a shape tuple."""
    parts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return tuple(_dim(src, p, env) for p in parts)


def _dim(src: Source, node: ast.expr, env: dict) -> int | Var:
    if (isinstance(node, ast.Call) and t_attr(node.func) in dtypes.INT_TYPES
            and len(node.args) == 1 and not node.keywords):
        node = node.args[0]  # T.int64(16): the extent is an int (make_buffer keeps int64)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
            node.value.isidentifier():
        # TVM 0.27 quotes a size at its first use: ("n", 64) (see parse_symbolic).
        node = ast.copy_location(ast.Name(node.value, ast.Load()), node)
    value = constant_int(node)  # 16, or 1 << 24 and 4 * 1024, as TVMScript folds them
    if value is not None and value >= 0:
        return value
    if isinstance(node, ast.Name):
        bound = env.get(node.id)
        if bound is None:
            raise src.error(node, f"undefined name {node.id!r}")
        if isinstance(bound, Var) and dtypes.is_int(bound.dtype):
            return bound
    raise src.error(node, "a buffer dimension must be a non-negative integer literal "
                          "or an integer scalar variable")


def _separators(src: Source, node: ast.expr, ndim: int) -> tuple[int, ...]:
    parts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else None
    if parts is None:
        raise src.error(node, "axis_separators must be a list of integers")
    out = []
    for p in parts:
        if not (isinstance(p, ast.Constant) and type(p.value) is int and 0 < p.value < ndim):
            raise src.error(p, f"an axis separator must be an integer in 1..{ndim - 1}")
        if out and p.value <= out[-1]:
            raise src.error(p, "axis separators must be increasing")
        out.append(p.value)
    return tuple(out)
