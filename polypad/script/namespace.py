"""``T``: the script namespace, as Python objects.

In script text ``T.serial``, ``T.Buffer`` and friends are read by the
parser and never evaluated.  Python does evaluate a decorated function's
annotations when it defines it, and users build expressions by hand, so
``T`` is also a real object: ``T.Buffer((4,), "float32")`` returns a
:class:`Buffer`, ``T.int32`` marks a scalar parameter and ``T.int32(5)``
makes a constant, ``T.min(a, b)`` and ``T.assume(c)`` build IR.
"""

from __future__ import annotations

from ..ir import dtypes, intrinsics
from ..ir import operators as ops
from ..ir.nodes import Buffer, Cast, Expr, FloatImm, IntImm, Let, Select, Var
from ..ir.ranges import dtype_limits
from .decorators import ir_module, prim_func


class DType:
    """``T.int32``: a parameter annotation, and ``T.int32(v)`` a constant or cast."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = dtype

    def __call__(self, value) -> Expr:
        if isinstance(value, str) and dtypes.is_float(self.dtype):
            return FloatImm(float(value), self.dtype)  # "inf", "nan"
        if isinstance(value, Expr):
            return ops.cast(self.dtype, value)
        return ops.const(value, self.dtype)

    def __repr__(self) -> str:
        return f"T.{self.dtype}"


class HandleType:
    """``T.handle``: a parameter that ``T.match_buffer`` turns into a buffer."""

    def __repr__(self) -> str:
        return "T.handle"


def _shape(shape) -> tuple:
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for d in items:
        if isinstance(d, IntImm):
            d = d.value
        if not isinstance(d, (int, Var)) or isinstance(d, bool):
            raise TypeError(f"a buffer dimension must be an int or a Var, not {d!r}")
        out.append(d)
    return tuple(out)


class BufferType:
    """``T.Buffer(shape, dtype)`` and ``T.Buffer[shape, dtype]`` both give a Buffer."""

    def __call__(self, shape, dtype: str = "float32", *, name: str = "buffer",
                 scope: str = "global", axis_separators=()) -> Buffer:
        return Buffer(name, _shape(shape), dtype, tuple(axis_separators), scope)

    def __getitem__(self, key) -> Buffer:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            return self(key[0], key[1])
        return self(key)

    def __repr__(self) -> str:
        return "T.Buffer"


def _math(op: str):
    def build(*args) -> Expr:
        return intrinsics.math(op, *args)

    build.__name__ = op
    build.__doc__ = f"``T.{op}(...)``: the {op} intrinsic."
    return build


def _bitwise(op: str):
    def build(*args) -> Expr:
        return intrinsics.bitwise(op, *args)

    build.__name__ = op
    build.__doc__ = f"``T.{op}(...)``: the {op} intrinsic (numpy's meaning)."
    return build


class TNamespace:
    """The ``T`` object.  Its attributes mirror the names script text may use."""

    Buffer = BufferType()
    handle = HandleType()
    prim_func = staticmethod(prim_func)
    ir_module = staticmethod(ir_module)
    assume = staticmethod(intrinsics.assume)
    undef = staticmethod(intrinsics.undef)
    likely = staticmethod(intrinsics.likely)
    min = staticmethod(ops.min_)
    max = staticmethod(ops.max_)
    floordiv = staticmethod(ops.floordiv)
    floormod = staticmethod(ops.floormod)
    eq = staticmethod(ops.eq)
    ne = staticmethod(ops.ne)
    And = staticmethod(ops.logical_and)
    Or = staticmethod(ops.logical_or)
    Not = staticmethod(ops.logical_not)

    @staticmethod
    def if_then_else(cond, true_value, false_value) -> Select:
        """``cond ? true_value : false_value``; the branches are promoted to one dtype."""
        a, b = ops.promote(true_value, false_value)
        return Select(ops.as_expr(cond), a, b)

    @staticmethod
    def min_value(dtype: str) -> Expr:
        """The smallest finite value of ``dtype`` (a float's most negative, not -inf)."""
        return ops.const(dtype_limits(dtype)[0], dtype)

    @staticmethod
    def max_value(dtype: str) -> Expr:
        """The largest finite value of ``dtype``."""
        return ops.const(dtype_limits(dtype)[1], dtype)

    @staticmethod
    def Cast(dtype: str, value) -> Cast:  # noqa: N802 - TVMScript's spelling
        """A Cast node, always (unlike :func:`polypad.ir.operators.cast`)."""
        return Cast(dtype, ops.as_expr(value))

    @staticmethod
    def cast(value, dtype: str) -> Cast:
        """``T.Cast`` with the arguments the other way round."""
        return Cast(dtype, ops.as_expr(value))

    @staticmethod
    def let(var: Var, value, body) -> Let:
        """The expression ``body`` with ``var`` bound to ``value``."""
        return Let(var, ops.as_expr(value), ops.as_expr(body))

    def __repr__(self) -> str:
        return "T"


for _dt in dtypes.ALL_TYPES:
    setattr(TNamespace, _dt, DType(_dt))
for _op in (intrinsics.MATH_UNARY + intrinsics.MATH_BINARY + intrinsics.NUMERIC_UNARY
            + intrinsics.FLOAT_PREDICATES):
    setattr(TNamespace, _op, staticmethod(_math(_op)))
for _op in intrinsics.BITWISE:
    setattr(TNamespace, _op, staticmethod(_bitwise(_op)))
del _dt, _op

T = TNamespace()


class INamespace:
    """The ``I`` object: ``@I.ir_module``."""

    ir_module = staticmethod(ir_module)

    def __repr__(self) -> str:
        return "I"


I = INamespace()  # noqa: E741 - TVMScript's name
