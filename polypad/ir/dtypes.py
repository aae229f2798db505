"""Data types are plain strings: ``int8..int64``, ``uint8..uint64``,
``float16/32/64`` and ``bool``.  This module classifies and orders them."""

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


def bits(dtype: str) -> int:
    if dtype == "bool":
        return 1
    return int("".join(ch for ch in dtype if ch.isdigit()))


def wider(a: str, b: str) -> str:
    """The dtype two operands are promoted to: float beats int, then width."""
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    return a if bits(a) >= bits(b) else b


def numpy_name(dtype: str) -> str:
    """The numpy dtype name for ``dtype`` (``bool`` is ``bool_``)."""
    return "bool_" if dtype == "bool" else dtype
