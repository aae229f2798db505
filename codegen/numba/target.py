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
- ``boundscheck``: Numba's bounds checks, for data-dependent indices
  (:mod:`.checks`); parallel loops then run serially.

The module is emitted now (:mod:`.emit`), written to the kernel cache and
compiled on the first call (:mod:`.compiler`), and run safely from threads
and forked processes (:mod:`.runtime`).  The bounds precondition is tested in
the kernel's first lines where 64-bit integers compute it exactly, else by
the call wrapper; what the kernel raises becomes polypad's error
(:func:`.checks.kernel_error`).
"""

from __future__ import annotations

from functools import partial

from polypad.ir.nodes import PrimFunc

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
                 vector_width: int | None = None, boundscheck: bool = False):
        #: The fast-math mode: ``None``, ``"contract"`` or ``"full"``.
        self.fastmath = fastmath_mode(fastmath)
        #: The vector width in bits, ``None`` for LLVM's choice.
        self.vector_width = resolve_width(vector_width)
        self.boundscheck = boundscheck

    def executable(self, func: PrimFunc, precondition: CallCheck | None) -> Executable:
        in_kernel = precondition if precondition is not None and precondition.fits_int64 \
            else None
        source = emit(func, boundscheck=self.boundscheck, fastmath=self.fastmath,
                      precondition=in_kernel)
        width = self.vector_width
        return Executable(load=lambda: compile_kernel(func, source, width), source=source,
                          tests_precondition=in_kernel is not None,
                          explain=partial(kernel_error, func, in_kernel),
                          runnable=partial(runnable, width=width))
