"""The vector width of a Numba kernel: ``codegen.build(f, vector_width=...)``.

- ``256`` or ``512``: LLVM's loop and SLP vectorizers may use vectors up to
  that many bits (512 needs AVX-512; on a CPU without it LLVM uses the widest
  it has).
- ``None`` (the default): the width measured fastest, 512 on a CPU with
  AVX-512.  On the 2-core AVX-512 Xeon (LLVM names it ``rocketlake``),
  ``benchmarks/bench_vector_width.py`` ran the seed-004 conv as a 5 x 64
  register tile 2.0-2.3x as fast at 512 bits as at 256, the same tile with
  its accumulators in memory 1.3-1.5x, and memory-bound kernels (``B = A *
  2 + 1``, a row sum) alike, within the noise of the shared machine
  (+-10% either way).  Without AVX-512 nothing is set and LLVM's tuning
  for the CPU decides.

Why an option at all: LLVM's tuning for Intel's AVX-512 CPUs
(``skylake-avx512`` through ``graniterapids``; AMD's ``znver4`` does not)
has the ``prefer-256-bit`` feature, which caps auto-vectorization at 256
bits whatever the registers, because 512-bit instructions once lowered the
clock.  Clang's ``-mprefer-vector-width=512``
lifts the cap per function with the LLVM function attribute
``"prefer-vector-width"="512"``, which the X86 target reads when it picks the
subtarget for a function.  Numba has no option for it, and its CPU features
(``NUMBA_CPU_FEATURES="...,-prefer-256-bit"``) are fixed for the whole
process when its target machine is made.  So a kernel with a width is
compiled by a Numba pipeline (:func:`pipeline_class`) whose target context
puts the attribute on every function it lowers -- the kernel, its helpers,
and the bodies of its parallel loops, which Numba lowers through the same
context.

Numba's on-disk cache keys compiled code by the Python file, the signature
and the CPU, not by the pipeline, so the width is part of the module's name
(:func:`codegen.numba.compiler.module_name`): kernels of different widths are
different files and never share compiled code.
"""

from __future__ import annotations

import copy
import functools

import llvmlite.binding as llvm
import numba
from llvmlite import ir
from numba.core import compiler, config
from numba.core.registry import CPUDispatcher

from polypad.arguments import wrong_type
from polypad.errors import ArgumentValueError, BuildArgumentError

#: The widths a build may ask for, in bits.
WIDTHS = (256, 512)
_TAKES = "None, 256 or 512"


def cpu_has_avx512() -> bool:
    """Whether Numba compiles for a CPU with AVX-512 (``NUMBA_CPU_FEATURES`` if
    set, else the host's)."""
    features = config.CPU_FEATURES or llvm.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


def default() -> int | None:
    """The width a build gets when it asks for none: 512 where the CPU has
    AVX-512 (measured fastest, see the module docstring), else ``None``, which
    leaves the choice to LLVM."""
    return 512 if cpu_has_avx512() else None


def resolve(value, where: str = "codegen.build") -> int | None:
    """The width in bits that the option ``value`` asks for (``None``: the
    :func:`default`), or ``None`` for LLVM's choice; ArgumentTypeError for a
    value that is no int, ArgumentValueError for a width not in
    :data:`WIDTHS`.  A resolved width resolves to itself.

    >>> resolve(256)
    256
    """
    if value is None:
        return default()
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(value, "vector_width", where, _TAKES, error=BuildArgumentError)
    if value not in WIDTHS:
        raise ArgumentValueError(f"{where}: vector_width must be one of {_TAKES} (bits), "
                                 f"not {value!r}")
    return value


def retarget(namespace: dict, width: int | None) -> None:
    """Replace every Numba function defined in ``namespace`` (a generated module's
    globals) by one compiled for ``width``; nothing to do for ``None``.

    The helpers are replaced too: the kernel finds them in ``namespace`` when it
    is compiled, and a helper that is not inlined keeps its own width.  A
    function imported from elsewhere is left alone: its cached code would be
    found under the same key whatever the width.
    """
    if width is None:
        return
    for name, value in list(namespace.items()):
        if isinstance(value, CPUDispatcher) and \
                value.py_func.__module__ == namespace["__name__"]:
            namespace[name] = _recompile(value, width)


def _recompile(dispatcher: CPUDispatcher, width: int) -> CPUDispatcher:
    """``dispatcher``'s function under the same options, through the pipeline for
    ``width``."""
    options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
    # Generated modules always ask for the cache (see .emit).
    return numba.njit(cache=True, pipeline_class=pipeline_class(width),
                      **options)(dispatcher.py_func)


@functools.cache
def pipeline_class(width: int) -> type[compiler.Compiler]:
    """Numba's standard pipeline, compiling for vectors of up to ``width`` bits.

    >>> numba.njit(pipeline_class=pipeline_class(512))(f)  # doctest: +SKIP
    """

    class VectorWidthCompiler(compiler.Compiler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # A copy of this compilation's context that marks what it lowers;
            # Numba copies it (class and all) for the parallel loops' bodies.
            context = copy.copy(self.state.targetctx)
            if not isinstance(context, _MarksVectorWidth):
                context.__class__ = _marking_context(type(context))
            context.vector_width = width
            self.state.targetctx = context

    VectorWidthCompiler.__name__ = VectorWidthCompiler.__qualname__ = \
        f"VectorWidth{width}Compiler"
    return VectorWidthCompiler


class _MarksVectorWidth:
    """Mixed into Numba's CPU context: puts the width attribute on each function
    defined in each module it lowers, before Numba optimizes the module."""

    vector_width: int

    def post_lowering(self, mod: ir.Module, library) -> None:
        attribute = f'"prefer-vector-width"="{self.vector_width}"'
        for function in mod.functions:
            if not function.is_declaration:
                function.attributes = _Attributes(function.attributes, attribute)
        super().post_lowering(mod, library)


@functools.cache
def _marking_context(base: type) -> type:
    return type(f"{base.__name__}WithVectorWidth", (_MarksVectorWidth, base), {})


class _Attributes(ir.values.FunctionAttributes):
    """Function attributes with string attributes too, which llvmlite's own set
    refuses (it knows the enum attributes only)."""

    def __init__(self, attributes: ir.values.FunctionAttributes, *strings: str):
        super().__init__(attributes)
        self.alignstack = attributes.alignstack
        self.personality = attributes.personality
        old = getattr(attributes, "strings", ())
        self.strings = (*old, *(s for s in strings if s not in old))

    def __bool__(self) -> bool:  # llvmlite prints no attributes for an empty set
        return bool(self.strings) or len(self) > 0

    def _to_list(self, ret_type) -> list[str]:
        return [*super()._to_list(ret_type), *self.strings]
