"""Code generation: lower a function and run it, as a Numba kernel or in the
reference executor.

>>> k = codegen.build(f)          # k.source is the emitted Python text
>>> k(a, b)                       # arrays updated in place
>>> codegen.build(f, target="python")(a, b)
>>> codegen.build(f, check_assumptions=True, boundscheck=True)   # for debugging
>>> codegen.build(f, fastmath=None)    # strict IEEE: bitwise the reference's floats
"""

from __future__ import annotations

from functools import partial

import analyses
from polypad.arguments import expect
from polypad.errors import BuildArgumentError, BuildError, OutOfBoundsError
from polypad.ir.nodes import PrimFunc

from . import fastmath as fastmath_flags
from . import interpreter
from .checks import kernel_error
from .emit import emit
from .kernel import Kernel
from .lower import CHECKED_PIPELINE, PIPELINE, lower, require_prim_func
from .numba_kernel import cache_dir, clear_cache, compile_kernel

TARGETS = ("numba", "python")


def build(func: PrimFunc, target: str = "numba", *, check_assumptions: bool = False,
          boundscheck: bool = False, fastmath: bool | str | None = fastmath_flags.DEFAULT
          ) -> Kernel:
    """Lower ``func`` and build it for ``target`` (``"numba"`` or ``"python"``).

    The source is emitted now; Numba compiles on :meth:`Kernel.compile` or on
    the first call.  Raises :class:`~polypad.errors.VerifyError` for
    ill-formed IR, :class:`~polypad.errors.OutOfBoundsError` (with the
    counterexample in ``evidence``) when an access is proved to fall outside
    its buffer for some instance and parameter values that the function's
    integer assumptions allow (:func:`analyses.check_bounds`; an access it
    cannot decide, such as one with a data-dependent index, is built, and
    ``Kernel.bounds`` says why), and :class:`BuildError` for what a target
    cannot run.

    For debugging a Numba kernel: ``check_assumptions=True`` checks every
    ``T.assume`` at run time (the reference executor always does) and raises
    :class:`~polypad.errors.AssumptionError` naming the first false one;
    ``boundscheck=True`` turns on Numba's bounds checks, for data-dependent
    indices, and raises :class:`~polypad.errors.BoundsCheckError`.  Both cost
    speed: parallel loops they check run serially.  An assumption that
    mentions ``T.undef()`` is never checked (any value satisfies it).

    ``fastmath`` sets the floating-point flags of a Numba kernel
    (:mod:`codegen.fastmath`; docs/semantics.md says what each may change):
    ``None`` or ``False`` for strict IEEE, ``"contract"`` (the default) to let
    ``a * b + c`` round once as a fused multiply-add, ``True`` or ``"full"``
    to let the loops the schedule vectorized be reassociated too.  A value of
    another type raises :class:`~polypad.errors.BuildArgumentError` (an
    :class:`~polypad.errors.ArgumentTypeError`), an unknown string
    :class:`~polypad.errors.ArgumentValueError`.
    """
    require_prim_func(func, "codegen.build")
    expect(target, str, "target", "codegen.build", error=BuildArgumentError)
    mode = fastmath_flags.mode(fastmath)
    if target not in TARGETS:
        raise BuildError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    lowered = lower(func, check_assumptions=check_assumptions or target == "python")
    # Decided on the function as written: lowering drops the assumptions it relies on.
    bounds = analyses.check_bounds(func)
    if isinstance(bounds, analyses.Refuted):
        raise OutOfBoundsError(f"cannot build {func.name!r}: {bounds.counterexample}",
                               evidence=bounds.counterexample)
    if target == "python":
        return Kernel(lowered, target=target, source=None, bounds=bounds,
                      load=lambda: partial(interpreter.run, lowered))
    source = emit(lowered, boundscheck=boundscheck, fastmath=mode)
    return Kernel(lowered, target=target, source=source, bounds=bounds,
                  load=lambda: compile_kernel(lowered, source),
                  explain=partial(kernel_error, lowered))


__all__ = ["CHECKED_PIPELINE", "PIPELINE", "Kernel", "build", "cache_dir", "clear_cache",
           "lower"]
