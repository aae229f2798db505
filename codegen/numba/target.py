"""The ``numba`` target: a Python module compiled by Numba, ``codegen.build(f)``.

Its options are fields of :class:`NumbaTarget`, checked when a build names
them:

- ``fastmath``: the floating-point flags (:mod:`.fastmath`): ``None`` or
  ``False`` for strict IEEE, ``"contract"`` (the default) to let
  ``a * b + c`` round once as a fused multiply-add, ``True`` or ``"full"``
  to let the loops the schedule vectorized be reassociated too;
- ``vector_width``: the widest SIMD vectors LLVM may use, in bits, ``256``
  or ``512`` (:mod:`.vector_width`); ``None``, the default, takes the width
  measured fastest: 512 on a CPU with AVX-512, LLVM's own choice elsewhere;
- ``boundscheck``: ``None``, the default, checks at run time exactly the
  accesses the bounds analysis could not prove inside their buffer
  (:mod:`.guards`); ``True`` checks every access (Numba's own bounds checks
  besides, and parallel loops then run serially); ``False`` checks none,
  which is unsafe: an undecided access outside its buffer reads or writes
  whatever memory is there (a negative index wraps to an element from the end).

The module is emitted now (:mod:`.emit`), written to the kernel cache and
compiled on the first call (:mod:`.compiler`), and run safely from threads
and forked processes (:mod:`.runtime`).  The bounds precondition is tested in
the kernel's first lines where 64-bit integers compute it exactly, else by
the call wrapper; what the kernel raises becomes polypad's error
(:func:`.checks.kernel_error`).
"""

from __future__ import annotations

from functools import partial

from polypad.arguments import expect
from polypad.errors import BuildArgumentError, BuildError
from polypad.ir.nodes import PrimFunc

from ..bounds_guards import declared_buffers
from ..precondition import CallCheck
from ..target import Executable, Target
from .checks import kernel_error
from .compiler import compile_kernel
from .emit import emit
from .fastmath import DEFAULT as DEFAULT_FASTMATH
from .fastmath import mode as fastmath_mode
from .runtime import runnable
from .vector_width import resolve as resolve_width


class NumbaTarget(Target):
    """Numba on the CPU (see the module docstring); its options are its fields."""

    name = "numba"
    options = ("fastmath", "vector_width", "boundscheck")

    def __init__(self, *, fastmath: bool | str | None = DEFAULT_FASTMATH,
                 vector_width: int | None = None, boundscheck: bool | None = None):
        #: The fast-math mode: ``None``, ``"contract"`` or ``"full"``.
        self.fastmath = fastmath_mode(fastmath)
        #: The vector width in bits, ``None`` for LLVM's choice.
        self.vector_width = resolve_width(vector_width)
        #: ``None`` (the undecided accesses checked), ``True`` or ``False``.
        self.boundscheck = expect(boundscheck, (bool, None), "boundscheck", "codegen.build",
                                  error=BuildArgumentError)

    def executable(self, func: PrimFunc, precondition: CallCheck | None) -> Executable:
        _check_supported(func)
        in_kernel = precondition if precondition is not None and precondition.fits_int64 \
            else None
        source = emit(func, boundscheck=self.boundscheck is True, fastmath=self.fastmath,
                      precondition=in_kernel, guards=self.guards)
        width = self.vector_width
        return Executable(load=lambda: compile_kernel(func, source, width), source=source,
                          tests_precondition=in_kernel is not None,
                          explain=partial(kernel_error, func, in_kernel, self.guards),
                          runnable=partial(runnable, width=width))


def _check_supported(func: PrimFunc) -> None:
    """Refuse a function the target cannot run: Numba has no float16 arithmetic."""
    for buffer in declared_buffers(func):
        if buffer.dtype == "float16":
            raise BuildError(f"the numba target does not support float16 (buffer "
                             f"{buffer.name!r}); use target='python' or float32")
