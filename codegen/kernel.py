"""The callable a build returns, and the checks on its arguments.

Both targets share one calling convention: ``kernel(*args)`` with the
arguments in ``func.params`` order -- a C-contiguous numpy array of the
buffer's shape and dtype for each buffer, a Python number for each scalar.
Buffers are updated in place and the call returns None; an array the
kernel writes may not overlap another argument.  Checking here,
before any compiled code runs, turns a mismatch into an
:class:`~polypad.errors.ArgumentError` naming the parameter instead of a
Numba typing error or a silent out-of-bounds write.  What the compiled code
raises (a failed ``T.assume`` check, a Numba bounds check) is turned into
polypad's error by the ``explain`` function the build supplies (see
:mod:`.checks`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from polypad.errors import ArgumentError
from polypad.ir import dtypes
from polypad.ir.nodes import BoolImm, Buffer, BufferStore, Expr, PrimFunc, Var
from polypad.ir.visitor import walk
from polypad.semantics.values import numpy_dtype

if TYPE_CHECKING:  # codegen.timing imports this module
    from .precondition import CallCheck
    from .timing import Timing


def written_buffers(func: PrimFunc) -> set[Buffer]:
    """The buffers ``func`` stores to."""
    return {n.buffer for n in walk(func.body) if isinstance(n, BufferStore)}


def _scalar(param: Var, value):
    """``value`` converted for scalar parameter ``param``, or ArgumentError."""
    dtype = param.dtype
    if dtypes.is_bool(dtype):
        if not isinstance(value, (bool, np.bool_)):
            raise ArgumentError(f"argument {param.name!r} must be a bool, got {value!r}")
        return bool(value)
    if dtypes.is_int(dtype):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ArgumentError(f"argument {param.name!r} ({dtype}) must be an int, "
                                f"got {type(value).__name__} {value!r}")
        info = np.iinfo(numpy_dtype(dtype))
        if not info.min <= int(value) <= info.max:
            raise ArgumentError(f"argument {param.name!r} = {value} does not fit in {dtype}")
        return int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"argument {param.name!r} ({dtype}) must be a number, "
                            f"got {type(value).__name__} {value!r}")
    # Typed, so that float32 arithmetic in the kernel stays float32.
    return numpy_dtype(dtype).type(value) if dtype != "float64" else float(value)


def _array(param: Buffer, value, extents: dict[Var, int], written: bool) -> np.ndarray:
    name = param.name
    if not isinstance(value, np.ndarray):
        raise ArgumentError(f"argument {name!r} must be a numpy array, "
                            f"got {type(value).__name__}")
    expected = numpy_dtype(param.dtype)
    if value.dtype != expected:
        raise ArgumentError(f"argument {name!r} must have dtype {expected}, got {value.dtype}")
    if value.ndim != len(param.shape):
        raise ArgumentError(f"argument {name!r} must have {len(param.shape)} axes "
                            f"(shape {_shape_text(param)}), got shape {value.shape}")
    for axis, (extent, actual) in enumerate(zip(param.shape, value.shape, strict=True)):
        if isinstance(extent, Var):
            bound = extents.setdefault(extent, actual)
            if bound != actual:
                raise ArgumentError(
                    f"argument {name!r} has length {actual} on axis {axis}, but "
                    f"{extent.name} = {bound} (shape {_shape_text(param)})")
        elif extent != actual:
            raise ArgumentError(f"argument {name!r} must have shape {_shape_text(param)}, "
                                f"got {value.shape}")
    if not value.flags.c_contiguous:
        raise ArgumentError(f"argument {name!r} must be C-contiguous "
                            "(np.ascontiguousarray makes a copy that is)")
    if written and not value.flags.writeable:
        raise ArgumentError(f"argument {name!r} is written by the kernel but is read-only")
    return value


def _shape_text(buffer: Buffer) -> str:
    return "(" + ", ".join(s.name if isinstance(s, Var) else str(s) for s in buffer.shape) + \
        ("," if len(buffer.shape) == 1 else "") + ")"


def check_arguments(func: PrimFunc, args: tuple, written: set[Buffer]) -> list:
    """The arguments of a call to ``func``, checked and converted.

    Scalars are checked first so that a symbolic extent ``n`` is compared
    with the value passed for ``n``; an extent that is no parameter is bound
    by the first array that has it and must agree with the others.
    """
    if len(args) != len(func.params):
        names = ", ".join(p.name for p in func.params)
        raise ArgumentError(f"{func.name}({names}) takes {len(func.params)} arguments, "
                            f"got {len(args)}")
    values: list = list(args)
    extents: dict[Var, int] = {}
    for k, (param, value) in enumerate(zip(func.params, args, strict=True)):
        if isinstance(param, Var):
            values[k] = extents[param] = _scalar(param, value)
    for k, (param, value) in enumerate(zip(func.params, args, strict=True)):
        if isinstance(param, Buffer):
            values[k] = _array(param, value, extents, param in written)
    _check_overlap(func, values, written)
    return values


def _check_overlap(func: PrimFunc, values: list, written: set[Buffer]) -> None:
    """An array the kernel writes must not share memory with another argument.

    Distinct buffers are distinct memory to the analyses, and to the emitted
    code, which may hold an element in a local across a loop
    (:mod:`.accumulators`).  The arrays are C-contiguous, so overlapping
    bounds mean shared memory.
    """
    arrays = [(p, v) for p, v in zip(func.params, values, strict=True) if isinstance(p, Buffer)]
    for k, (first, a) in enumerate(arrays):
        for second, b in arrays[k + 1:]:
            if (first in written or second in written) and np.may_share_memory(a, b):
                raise ArgumentError(f"arguments {first.name!r} and {second.name!r} share "
                                    "memory, and the kernel writes one of them; pass "
                                    "distinct arrays (a copy)")


class Kernel:
    """A function built for a target; call it like the function.

    ``func`` is the lowered function that runs, ``source`` the emitted Python
    text (None for the reference executor).  Compilation is lazy:
    :meth:`compile` does it now, so that its time can be measured apart from
    the first call.
    """

    def __init__(self, func: PrimFunc, *, target: str, source: str | None,
                 load: Callable[[], Callable[..., None]],
                 explain: Callable[[BaseException, list], Exception | None] | None = None,
                 bounds=None, precondition: Expr | None = None,
                 check: CallCheck | None = None,
                 runnable: Callable[[Callable[..., None]], Callable[..., None]] | None = None):
        self.func = func
        self.target = target
        self.source = source
        #: What the static bounds check found (:func:`analyses.bounds_precondition`):
        #: ``Proved`` (where :attr:`precondition` holds), or ``Unknown`` with the
        #: accesses it could not decide.
        self.bounds = bounds
        #: The parameter values for which every access stays inside its buffer, an
        #: expression over the scalar parameters (``pp.script`` prints it), checked at
        #: each call before anything runs; ``True`` when every value is fine.
        self.precondition = precondition if precondition is not None else BoolImm(True)
        # Tests the precondition on a call's values when the kernel itself does not.
        self._check = check
        self._load = load
        self._explain = explain
        # What to call for the compiled function in this process, at this moment
        # (a Numba kernel in a forked child may need a serial build: numba_runtime).
        self._runnable = runnable
        self._impl: Callable[..., None] | None = None
        self._written = written_buffers(func)
        #: The :class:`~codegen.timing.Timing` of the last :meth:`time`, shown by the display.
        self.last_timing: Timing | None = None

    def compile(self) -> Kernel:
        """Compile (or load from the cache) now; returns ``self``."""
        if self._impl is None:
            self._impl = self._load()
        return self

    @property
    def compiled(self) -> bool:
        """Whether :meth:`compile` has run (explicitly or by a call)."""
        return self._impl is not None

    def time(self, *args, repeat: int = 7, against: Callable[..., object] | None = None,
             against_name: str | None = None) -> Timing:
        """Time calls on ``args``, compile time apart, each run on fresh copies of the
        arrays the kernel writes (:func:`codegen.timing.measure` says how); returns
        the :class:`~codegen.timing.Timing`, which this kernel's display then shows.

        >>> kernel.time(a, b, repeat=20, against=lambda a, b: a.sum(), against_name="numpy")
        """
        from .timing import measure

        self.last_timing = measure(self, *args, repeat=repeat, against=against,
                                   against_name=against_name)
        return self.last_timing

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the target and the highlighted source.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import kernel_html

        return kernel_html(self)

    def __call__(self, *args) -> None:
        values = check_arguments(self.func, args, self._written)
        if self._check is not None:
            self._check.check(values)
        self.compile()
        impl = self._impl if self._runnable is None else self._runnable(self._impl)
        try:
            impl(*values)
        except Exception as error:
            translated = self._explain(error, values) if self._explain else None
            if translated is None:
                raise
            raise translated from error

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.func.params)
        return f"<Kernel {self.func.name}({params}) target={self.target!r}>"
