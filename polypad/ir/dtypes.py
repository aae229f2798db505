"""Data types are plain strings: ``int8..int64``, ``uint8..uint64``,
``float16/32/64`` and ``bool``.  This module classifies and orders them.

Two more kinds come from TVM's lowered text: vectors, ``float32x4`` (an
element dtype and a lane count; :func:`lanes`, :func:`element`), which only
expressions have (a buffer's elements are scalars), and ``handle``, the
dtype of a pointer (``A.data``, ``T.tvm_struct_get(...)``), which polypad
keeps but does not compute with.  :func:`is_int` and friends answer for
scalars only; ask them about :func:`element` to include vectors."""

from __future__ import annotations

INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float16", "float32", "float64")
ALL_TYPES = INT_TYPES + FLOAT_TYPES + ("bool",)


def is_int(dtype: str) -> bool:
    return dtype in INT_TYPES


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_TYPES


def is_bool(dtype: str) -> bool:
    return dtype == "bool"


def is_valid(dtype: str) -> bool:
    return dtype in ALL_TYPES


HANDLE = "handle"


def is_handle(dtype: str) -> bool:
    """The dtype of a pointer: kept, never computed with."""
    return dtype == HANDLE


def lanes(dtype: str) -> int:
    """The lane count: 4 for ``float32x4``, 1 for a scalar."""
    _, sep, count = dtype.partition("x")
    return int(count) if sep and count.isdigit() else 1


def element(dtype: str) -> str:
    """The dtype of one lane: ``float32`` for ``float32x4`` (a scalar is its own)."""
    return dtype.partition("x")[0] if lanes(dtype) > 1 else dtype


def with_lanes(dtype: str, count: int) -> str:
    """``dtype``'s element with ``count`` lanes (the scalar for 1)."""
    base = element(dtype)
    return base if count == 1 else f"{base}x{count}"


def is_vector(dtype: str) -> bool:
    """A vector of a valid element dtype with two lanes or more."""
    return lanes(dtype) > 1 and is_valid(element(dtype))


def bits(dtype: str) -> int:
    """The width of one lane in bits (1 for bool)."""
    dtype = element(dtype)
    if dtype == "bool":
        return 1
    return int("".join(ch for ch in dtype if ch.isdigit()))


def wider(a: str, b: str) -> str:
    """The dtype two operands are promoted to: float beats int, then width.

    Vectors compare their elements (operands have one lane count)."""
    fa, fb = is_float(element(a)), is_float(element(b))
    if fa != fb:
        return a if fa else b
    return a if bits(a) >= bits(b) else b


def numpy_name(dtype: str) -> str:
    """The numpy dtype name for ``dtype`` (``bool`` is ``bool_``)."""
    return "bool_" if dtype == "bool" else dtype
