"""Passes: each a pure function ``PrimFunc -> PrimFunc`` in a module of its own."""

from .remove_assume import remove_assume
from .remove_store_undef import remove_store_undef

__all__ = ["remove_assume", "remove_store_undef"]
