"""Code generation: lower a function and build it for a target.

>>> k = codegen.build(f)          # the Numba target; k.source is the emitted Python text
>>> k(a, b)                       # arrays updated in place
>>> k.precondition                # parameter values each call checks, e.g. n < 29
>>> codegen.build(f, target="python")(a, b)       # the reference executor
>>> codegen.targets()             # ('numba', 'python', 'cuda')
>>> codegen.build(f, target="cuda")    # numba.cuda kernels; numpy or device arrays
>>> codegen.build(f, check_assumptions=True, boundscheck=True)   # for debugging
>>> codegen.build(f, boundscheck=False)   # unsafe: not even the undecided accesses checked
>>> codegen.build(f, fastmath=None)    # strict IEEE: bitwise the reference's floats
>>> codegen.build(f, vector_width=256) # LLVM's vectors at most 256 bits wide

A target is a :class:`Target` registered here (:mod:`codegen.target` says what
one must say); its options are its own (:mod:`codegen.numba.target` for
Numba's).  Lowering and the reference executor are :mod:`polypad.semantics`,
below the analyses; ``codegen.lower``, ``codegen.PIPELINE``,
``codegen.CHECKED_PIPELINE`` and ``codegen.interpreter`` are its names.
"""

from __future__ import annotations

import analyses
from polypad.arguments import expect
from polypad.errors import BuildArgumentError, OutOfBoundsError
from polypad.ir.nodes import BoolImm, PrimFunc
from polypad.isl_failure import answering_isl_failure, raising_isl_failure
from polypad.semantics import interpreter
from polypad.semantics.lower_allreduce import lower_allreduce
from polypad.semantics.lowering import CHECKED_PIPELINE, PIPELINE, lower, require_prim_func

from . import timing
from .bounds_guards import plan as plan_guards
from .cuda import CudaTarget
from .kernel import Kernel
from .numba import NumbaTarget, cache_dir
from .numba import clear_cache as _clear_numba_cache
from .precondition import CallCheck
from .python import PythonTarget
from .reducers import check_reducers
from .target import Executable, Target, configure, register, targets

register(NumbaTarget)
register(PythonTarget)
register(CudaTarget)


def clear_cache() -> None:
    """Delete every generated module in the cache directory (:func:`cache_dir`) and
    the compiled code kept for them, the Numba target's and the cuda target's, on
    disk and in this process."""
    from .cuda.cache import clear_files

    _clear_numba_cache()
    clear_files()


def build(func: PrimFunc, target: str = "numba", *, check_assumptions: bool = False,
          **options) -> Kernel:
    """Lower ``func`` and build it for ``target`` (one of :func:`targets`).

    The source is emitted now; a compiled target compiles on
    :meth:`Kernel.compile` or on the first call.  Raises
    :class:`~polypad.errors.VerifyError` for ill-formed IR,
    :class:`~polypad.errors.OutOfBoundsError` (with the counterexample in
    ``evidence``) when, for every parameter value the function's integer
    assumptions allow, some access falls outside its buffer, and
    :class:`BuildError` for what a target cannot run or a target that is not
    registered.  Where ISL fails its own consistency check while lowering or
    emitting, :class:`~polypad.errors.IslFailure` naming ``codegen.build`` and
    the step; where it fails while deciding the bounds, the kernel is built
    as when that analysis runs out of time (``Kernel.bounds`` the ``Unknown``
    naming ISL's failure, every access checked).

    A function that stays inside its buffers for some parameter values only
    is built with that condition, ``Kernel.precondition`` (an expression over
    the scalar parameters, derived exactly by
    :func:`analyses.bounds_precondition`; ``True`` when every value is
    fine), and each call tests it, once, before anything runs: a call outside
    it raises :class:`~polypad.errors.OutOfBoundsError` naming the condition,
    the values and an access that would leave its buffer.  An access the
    analysis cannot decide -- a data-dependent index (``B[A[i]]``), one in
    which ``min``, ``//`` or ``%`` may take a wrapped operand, all of them
    when the analysis runs out of time -- is named in ``Kernel.bounds`` and
    checked where it runs, and only those (:mod:`codegen.bounds_guards`):
    an index outside its buffer raises the
    :class:`~polypad.errors.BoundsCheckError` the reference executor raises
    for that access, naming the buffer, the element and the access as
    written.  The Numba and cuda targets take ``boundscheck``: ``None``, the
    default, checks those; ``True`` checks every access; ``False`` checks
    none, which is unsafe (an index outside its buffer reads or writes other
    memory, a negative one an element from the end).

    ``check_assumptions=True`` checks every ``T.assume`` at run time (the
    reference executor always does) and raises
    :class:`~polypad.errors.AssumptionError` naming the first false one; it
    costs speed.  An assumption that mentions ``T.undef()`` is never checked
    (any value satisfies it).  A plain ``assert c, msg`` (a packed function's
    check on scalar values) is checked always, by every target, and raises
    :class:`~polypad.errors.AssertionFailedError` with ``msg`` and the values
    (:mod:`polypad.semantics.asserts`).

    ``options`` are the target's own, checked by it (:mod:`codegen.target`);
    one it does not take raises :class:`~polypad.errors.BuildArgumentError`
    naming the target and the options it takes.  The Numba target's
    (:class:`codegen.numba.NumbaTarget`):

    - ``fastmath`` sets the floating-point flags (:mod:`codegen.numba.fastmath`;
      docs/semantics.md says what each may change): ``None`` or ``False`` for
      strict IEEE, ``"contract"`` (the default) to let ``a * b + c`` round
      once as a fused multiply-add, ``True`` or ``"full"`` to let the loops
      the schedule vectorized be reassociated too.  A value of another type
      raises :class:`~polypad.errors.BuildArgumentError` (an
      :class:`~polypad.errors.ArgumentTypeError`), an unknown string
      :class:`~polypad.errors.ArgumentValueError`.
    - ``vector_width`` caps the SIMD vectors LLVM vectorizes with, in bits:
      ``256`` or ``512`` (:mod:`codegen.numba.vector_width`).  ``None``, the
      default, takes the width measured fastest: 512 on a CPU with AVX-512
      (on the 2-core AVX-512 Xeon a register-tiled conv ran about 2x as fast
      as at 256 bits, memory-bound kernels alike;
      benchmarks/bench_vector_width.py), LLVM's own choice elsewhere.  LLVM's
      tuning would otherwise cap every AVX-512 Xeon at 256.  Results are the
      same at every width except where ``fastmath="full"`` lets a reduction
      be reordered.  A value that is no int raises
      :class:`~polypad.errors.BuildArgumentError`, another width
      :class:`~polypad.errors.ArgumentValueError`.
    - ``boundscheck``: as above.  The checks of undecided accesses keep a
      parallel loop parallel (a flag array, raised after the loop) and run
      once before an inner loop that does not change their index;
      ``boundscheck=True`` adds Numba's own bounds checks on every access,
      and its parallel loops run serially.

    The reference executor (``target="python"``) takes ``fastmath=None`` or
    ``False`` and ``boundscheck``, which ask for nothing it does not do
    (:mod:`codegen.python`).
    """
    require_prim_func(func, "codegen.build")
    expect(target, str, "target", "codegen.build", error=BuildArgumentError)
    chosen = configure(target, options)
    check_reducers(func)  # a cross-thread reduction's tree needs an order-free combiner
    lowered = _answering_isl_failure(
        func, "lowering", lambda: chosen.lowered(func, check_assumptions=check_assumptions))
    # Decided on the function as written (lowering drops the assumptions it relies on),
    # its cross-thread reductions written out: the model reads no such reduction.  ISL
    # failing in it answers Unknown, as running out of time does: every access checked.
    found = analyses.bounds_precondition(lower_allreduce(func))
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
    # The accesses left undecided are checked where they run (codegen.bounds_guards).
    chosen.guards = plan_guards(found, lowered, getattr(chosen, "boundscheck", None))
    made = _answering_isl_failure(func, "emitting the kernel",
                                  lambda: chosen.executable(lowered, check))
    return Kernel(lowered, target=target, source=made.source, bounds=bounds,
                  precondition=check.condition if check is not None else BoolImm(True),
                  check=None if made.tests_precondition else check, load=made.load,
                  explain=made.explain, runnable=made.runnable,
                  device_arrays=made.device_arrays)


def _answering_isl_failure(func: PrimFunc, step: str, work):
    """``work()``, one step of building ``func``; ISL failing in it raises
    :class:`~polypad.errors.IslFailure` naming the build and the step
    (:mod:`polypad.isl_failure`)."""
    return answering_isl_failure(
        work, raising_isl_failure(f"codegen.build of {func.name!r} ({step})"))


__all__ = ["CHECKED_PIPELINE", "PIPELINE", "Executable", "Kernel", "Target", "build",
           "cache_dir", "clear_cache", "interpreter", "lower", "register", "targets",
           "timing"]
