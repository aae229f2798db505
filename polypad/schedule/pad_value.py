"""``pad_value``: what ``transform_layout`` writes to, or assumes of, the padding.

RFC 0077 ("Defining Padded Values") lets the value be given in any of these
forms; each is resolved here into a function from the transformed indices to
an expression of the buffer's dtype:

* ``None`` (or a callable returning ``None``): padding exists, and nothing
  may read or write it;
* a number: ``0``, ``-1.0`` (an ``int`` becomes a float for a float buffer;
  a fractional float for an integer buffer is a :class:`DTypeError`);
* an expression: ``T.undef()`` (re-typed to the buffer's dtype) or a
  constant expression;
* a callable of the transformed indices, ``lambda io, ii: 0.0``, that may
  read the transformed buffer itself, ``lambda io, ii: A[io, 0]``, written
  with the buffer object from before the transform (the indices say it is
  the transformed one);
* text: ``"T.undef()"``, ``"-1.0"`` or ``"lambda io, ii: A[io, 0]"``, where
  ``A`` names the transformed buffer.  This is how the trace records pad
  values, so a replay takes the same path.

"The expression may only contain constants and the transformed buffer
itself": a load of any other buffer is an :class:`IllegalTransformError`
naming it.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from polypad.errors import DTypeError, IllegalTransformError, PolypadError
from polypad.ir import dtypes, intrinsics
from polypad.ir import nodes as n
from polypad.ir.operators import cast, const
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import Rewriter, walk

_NUMBER = (bool, int, float)


@dataclass(frozen=True)
class PadValue:
    """A resolved pad value: :meth:`at` gives the value at given padding indices.

    ``names`` are the parameter names of a lambda form (used to name the
    loops that write or assume the padding), else ``None``.
    """

    build: Callable[[Sequence[n.Var]], n.Expr]
    names: tuple[str, ...] | None = None

    def at(self, indices: Sequence[n.Var]) -> n.Expr:
        """The pad value at the transformed ``indices``."""
        return self.build(tuple(indices))


def resolve_pad_value(pad_value, func: n.PrimFunc, old: n.Buffer, new: n.Buffer
                      ) -> PadValue | None:
    """``pad_value`` (any accepted form) for ``new``, the transformed ``old``; ``None``
    when the padding gets no value.  Reads of ``old`` in a callable mean ``new``."""
    if pad_value is None:
        return None
    if isinstance(pad_value, str):
        return _from_text(pad_value, func, old, new)
    if callable(pad_value) and not isinstance(pad_value, n.Expr):
        return _from_callable(pad_value, old, new)
    value = _Retarget(old, new).visit(_typed(pad_value, new))
    _check(value, new, (), func)
    return PadValue(lambda indices: value)


# ---------------------------------------------------------------- the forms


def _from_callable(fn: Callable, old: n.Buffer, new: n.Buffer) -> PadValue | None:
    params = list(inspect.signature(fn).parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        names = None
    else:
        names = tuple(p.name for p in params)
        if len(names) != new.ndim:
            raise PolypadError(f"pad_value for {new.name} takes {len(names)} indices but the "
                               f"transformed buffer has {new.ndim} axes")
    probe = fn(*(n.Var(name) for name in names or _default_names(new.ndim)))
    if _unwrap(probe) is None:
        return None
    retarget = _Retarget(old, new)

    def build(indices):
        value = _typed(_unwrap(fn(*indices)), new)
        return retarget.visit(value)

    return PadValue(build, names)


def _from_text(text: str, func: n.PrimFunc, old: n.Buffer, new: n.Buffer) -> PadValue | None:
    from polypad.script.parse_expr import ExprParser
    from polypad.script.source import Source

    src = Source("<pad_value>", tuple(text.strip().splitlines()) or ("",))
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise src.error_at(err.lineno or 1, err.offset or 1, err.msg) from None
    env = {p.name: p for p in func.params}
    env.update({b.name: b for b in _allocations(func)})
    env[old.name] = new
    names = None
    if isinstance(tree, ast.Lambda):
        if tree.args.vararg or tree.args.kwonlyargs or tree.args.defaults:
            raise src.error(tree, "pad_value text must read `lambda io, ii: <value>`")
        names = tuple(a.arg for a in tree.args.args)
        if len(names) != new.ndim:
            raise PolypadError(f"pad_value for {new.name} takes {len(names)} indices but the "
                               f"transformed buffer has {new.ndim} axes")
        tree = tree.body
    if isinstance(tree, (ast.List, ast.Tuple)) and len(tree.elts) == 1:
        tree = tree.elts[0]  # "lambda io, ii: [0.0]", as an index map prints
    if isinstance(tree, ast.Constant) and tree.value is None:
        return None
    parser = ExprParser(src)

    def build(indices):
        local = {**env, **dict(zip(names or (), indices))}
        return _typed(parser.expr(tree, local, new.dtype), new)

    return PadValue(build, names)


# ---------------------------------------------------------------- checks


def check_pad_expr(value: n.Expr, new: n.Buffer, indices: Sequence[n.Var],
                   func: n.PrimFunc) -> n.Expr:
    """``value`` after checking it reads only ``new`` and uses only ``indices`` and
    the function's scalars; raises naming the offending buffer or variable."""
    _check(value, new, indices, func)
    return value


def _check(value: n.Expr, new: n.Buffer, indices, func: n.PrimFunc) -> None:
    for node in walk(value):
        if isinstance(node, n.BufferLoad):
            if node.buffer is not new:
                raise IllegalTransformError(
                    f"pad_value of {new.name} reads buffer {node.buffer.name}: a pad value may "
                    f"read only constants and {new.name} itself (RFC 0077), not another buffer",
                    evidence=node.buffer.name)
            if len(node.indices) != new.ndim:
                raise PolypadError(f"pad_value indexes {new.name} with {len(node.indices)} "
                                   f"indices; the transformed buffer has {new.ndim} axes")
    allowed = set(indices) | {p for p in func.params if isinstance(p, n.Var)}
    for p in func.params:
        if isinstance(p, n.Buffer):
            allowed |= {d for d in p.shape if isinstance(d, n.Var)}
    for var in free_vars(value):
        if var not in allowed:
            raise PolypadError(f"pad_value of {new.name} uses {var.name}, which is neither a "
                               f"transformed index nor a parameter of {func.name}")


def _typed(value, new: n.Buffer) -> n.Expr:
    """``value`` as an expression of ``new``'s dtype."""
    dtype = new.dtype
    if hasattr(value, "item") and not isinstance(value, n.Expr):
        value = value.item()  # a numpy scalar
    if isinstance(value, _NUMBER):
        return _constant(value, dtype, new)
    if not isinstance(value, n.Expr):
        raise PolypadError(f"pad_value for {new.name} must be None, a number, an expression, "
                           f"a callable of the transformed indices or text, not "
                           f"{type(value).__name__}")
    if intrinsics.is_call(value, "undef"):
        return intrinsics.undef(dtype)
    if isinstance(value, (n.IntImm, n.FloatImm, n.BoolImm)):
        return _constant(value.value, dtype, new)
    if value.dtype == dtype:
        return value
    if dtypes.is_float(dtype) and dtypes.is_int(value.dtype):
        return cast(dtype, value)
    raise DTypeError(f"pad_value {show(value)} has dtype {value.dtype}; buffer {new.name} "
                     f"holds {dtype}")


def _constant(value, dtype: str, new: n.Buffer) -> n.Expr:
    if isinstance(value, bool) != dtypes.is_bool(dtype):
        raise DTypeError(f"pad_value {value!r} is not a {dtype} value (buffer {new.name})")
    try:
        return const(value, dtype)
    except TypeError:
        raise DTypeError(f"pad_value {value!r} is not a {dtype} value (buffer {new.name})"
                         ) from None


def _unwrap(value):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    return value


def _default_names(ndim: int) -> tuple[str, ...]:
    return tuple(f"i{k}" for k in range(ndim))


def _allocations(func: n.PrimFunc):
    return [node.buffer for node in walk(func.body) if isinstance(node, n.Allocate)]


class _Retarget(Rewriter):
    """Loads of the pre-transform buffer object become loads of the transformed one."""

    def __init__(self, old: n.Buffer, new: n.Buffer):
        self.old, self.new = old, new

    def visit_buffer(self, buffer: n.Buffer) -> n.Buffer:
        return self.new if buffer is self.old else buffer


# ---------------------------------------------------------------- trace text


def trace_text(value):
    """A pad value or index map in the form the trace keeps: text that
    :func:`resolve_pad_value` (or ``IndexMap``) reads back.

    Expressions print in script syntax (``T.undef()``); a callable returning
    a list prints as its index map; one returning a single value prints as
    ``lambda io, ii: <value>``.
    """
    from polypad.layout import IndexMap
    from polypad.script import script

    if isinstance(value, n.Expr):
        return script(value)
    if isinstance(value, IndexMap):
        return repr(value)[len("IndexMap("):-1]
    params = list(inspect.signature(value).parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return repr(IndexMap(value))[len("IndexMap("):-1]
    names = [p.name for p in params]
    result = value(*(n.Var(name) for name in names))
    if isinstance(result, (list, tuple)):
        return repr(IndexMap(value))[len("IndexMap("):-1]
    text = "None" if result is None else (
        script(result) if isinstance(result, n.Expr) else repr(result))
    return f"lambda {', '.join(names)}: {text}"
