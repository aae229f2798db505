"""The function's interface: which primitives may change it.

RFC 0077 review: a function transformed in isolation must not change its
interface (the layout of its parameters, or what it assumes of their
padding).  ``Schedule(f, preserve_interface=True)`` enforces that; the way to
a transformed layout is then a cache stage, whose buffer is internal.
"""

from __future__ import annotations

from analyses.evidence import Counterexample
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n


def is_parameter(func: n.PrimFunc, buffer: n.Buffer) -> bool:
    """True when ``buffer`` is one of ``func``'s parameters."""
    return any(p is buffer for p in func.params)


def check_interface(func: n.PrimFunc, buffer: n.Buffer, *, preserve: bool,
                    primitive: str) -> None:
    """Refuse, when ``preserve`` is set, a ``primitive`` that would change the layout
    of the parameter ``buffer``; the message points to the cache stages."""
    if not preserve or not is_parameter(func, buffer):
        return
    name = buffer.name
    evidence = Counterexample(
        f"{name} is a parameter of {func.name}; its layout is part of the interface")
    raise IllegalTransformError(
        f"{primitive} would change the interface of {func.name}: {name} is a parameter and "
        f"the schedule preserves the interface. Transform a cache stage instead: "
        f"sch.cache_read(block, {name!r}) for a buffer the block reads, or "
        f"sch.cache_write(block, {name!r}) for one it writes, then {primitive} on the cache",
        evidence=evidence)
