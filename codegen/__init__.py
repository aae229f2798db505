"""Code generation: lower a function and run it, as a Numba kernel or in the
reference executor.

>>> k = codegen.build(f)          # k.source is the emitted Python text
>>> k(a, b)                       # arrays updated in place
>>> codegen.build(f, target="python")(a, b)
"""

from __future__ import annotations

from functools import partial

from polypad.errors import BuildError
from polypad.ir.nodes import PrimFunc

from . import interpreter
from .emit import emit
from .kernel import Kernel
from .lower import PIPELINE, lower
from .numba_kernel import cache_dir, clear_cache, compile_kernel

TARGETS = ("numba", "python")


def build(func: PrimFunc, target: str = "numba") -> Kernel:
    """Lower ``func`` and build it for ``target`` (``"numba"`` or ``"python"``).

    The source is emitted now; Numba compiles on :meth:`Kernel.compile` or on
    the first call.  Raises :class:`~polypad.errors.VerifyError` for
    ill-formed IR and :class:`BuildError` for what a target cannot run.
    """
    if target not in TARGETS:
        raise BuildError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    lowered = lower(func)
    if target == "python":
        return Kernel(lowered, target=target, source=None,
                      load=lambda: partial(interpreter.run, lowered))
    source = emit(lowered)
    return Kernel(lowered, target=target, source=source,
                  load=lambda: compile_kernel(lowered, source))


__all__ = ["PIPELINE", "Kernel", "build", "cache_dir", "clear_cache", "lower"]
