"""Code generation: lower a function and run it, as a Numba kernel or in the
reference executor.

>>> k = codegen.build(f)          # k.source is the emitted Python text
>>> k(a, b)                       # arrays updated in place
>>> k.precondition                # parameter values each call checks, e.g. n < 29
>>> codegen.build(f, target="python")(a, b)
>>> codegen.build(f, check_assumptions=True, boundscheck=True)   # for debugging
>>> codegen.build(f, fastmath=None)    # strict IEEE: bitwise the reference's floats
>>> codegen.build(f, vector_width=256) # LLVM's vectors at most 256 bits wide
"""

from __future__ import annotations

from functools import partial

import analyses
from polypad.arguments import expect
from polypad.errors import BuildArgumentError, BuildError, OutOfBoundsError
from polypad.ir.nodes import BoolImm, PrimFunc
from polypad.semantics import interpreter
from polypad.semantics.lowering import CHECKED_PIPELINE, PIPELINE, lower, require_prim_func

from . import fastmath as fastmath_flags
from . import numba_runtime
from . import vector_width as widths
from .checks import kernel_error
from .emit import emit
from .kernel import Kernel
from .numba_kernel import cache_dir, clear_cache, compile_kernel
from .precondition import CallCheck

TARGETS = ("numba", "python")


def build(func: PrimFunc, target: str = "numba", *, check_assumptions: bool = False,
          boundscheck: bool = False, fastmath: bool | str | None = fastmath_flags.DEFAULT,
          vector_width: int | None = None) -> Kernel:
    """Lower ``func`` and build it for ``target`` (``"numba"`` or ``"python"``).

    The source is emitted now; Numba compiles on :meth:`Kernel.compile` or on
    the first call.  Raises :class:`~polypad.errors.VerifyError` for
    ill-formed IR, :class:`~polypad.errors.OutOfBoundsError` (with the
    counterexample in ``evidence``) when, for every parameter value the
    function's integer assumptions allow, some access falls outside its
    buffer, and :class:`BuildError` for what a target cannot run.

    A function that stays inside its buffers for some parameter values only
    is built with that condition, ``Kernel.precondition`` (an expression over
    the scalar parameters, derived exactly by
    :func:`analyses.bounds_precondition`; ``True`` when every value is
    fine), and each call tests it, once, before anything runs: a call outside
    it raises :class:`~polypad.errors.OutOfBoundsError` naming the condition,
    the values and an access that would leave its buffer.  An access the
    analysis cannot decide, such as one with a data-dependent index, is
    built unchecked, and ``Kernel.bounds`` says why.

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

    ``vector_width`` caps the SIMD vectors LLVM vectorizes a Numba kernel with,
    in bits: ``256`` or ``512`` (:mod:`codegen.vector_width`).  ``None``, the
    default, takes the width measured fastest: 512 on a CPU with AVX-512 (on
    the 2-core AVX-512 Xeon a register-tiled conv ran about 2x as fast as at
    256 bits, memory-bound kernels alike; benchmarks/bench_vector_width.py),
    LLVM's own choice elsewhere.  LLVM's tuning would otherwise cap every
    AVX-512 Xeon at 256.  Results are the same at every width except where
    ``fastmath="full"`` lets a reduction be reordered.  A value that is no int
    raises :class:`~polypad.errors.BuildArgumentError`, another width
    :class:`~polypad.errors.ArgumentValueError`.
    """
    require_prim_func(func, "codegen.build")
    expect(target, str, "target", "codegen.build", error=BuildArgumentError)
    mode = fastmath_flags.mode(fastmath)
    width = widths.resolve(vector_width)
    if target not in TARGETS:
        raise BuildError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    lowered = lower(func, check_assumptions=check_assumptions or target == "python")
    # Decided on the function as written: lowering drops the assumptions it relies on.
    found = analyses.bounds_precondition(func)
    if isinstance(found, analyses.Unknown):  # out of time: no precondition to check
        bounds, check = found, None
    else:
        bounds = found.decision
        check = CallCheck(found, lowered) if found.needed else None
    if isinstance(bounds, analyses.Refuted):
        cex = bounds.counterexample
        every = ("for every parameter value its assumptions allow, some access is outside "
                 "its buffer, e.g. " if cex.params else "")
        raise OutOfBoundsError(f"cannot build {func.name!r}: {every}{cex}", evidence=cex)
    condition = check.condition if check is not None else BoolImm(True)
    if target == "python":
        return Kernel(lowered, target=target, source=None, bounds=bounds,
                      precondition=condition, check=check,
                      load=lambda: partial(interpreter.run, lowered))
    in_kernel = check if check is not None and check.in_kernel else None
    source = emit(lowered, boundscheck=boundscheck, fastmath=mode, precondition=in_kernel)
    outside = None if in_kernel is not None else check
    return Kernel(lowered, target=target, source=source, bounds=bounds,
                  precondition=condition, check=outside,
                  load=lambda: compile_kernel(lowered, source, width),
                  explain=partial(_kernel_error, lowered, in_kernel),
                  runnable=partial(numba_runtime.runnable, width=width))


def _kernel_error(func: PrimFunc, check: CallCheck | None, error: BaseException,
                  args: list) -> Exception | None:
    """What the Numba kernel of lowered ``func`` raised, as polypad's error."""
    found = check.kernel_error(error) if check is not None else None
    return found if found is not None else kernel_error(func, error, args)


__all__ = ["CHECKED_PIPELINE", "PIPELINE", "Kernel", "build", "cache_dir", "clear_cache",
           "lower"]
