"""The callable a build returns.

A :class:`Kernel` is called like the function it was built from, with the
arguments of the calling convention every target shares
(:mod:`codegen.calling`), which it checks before anything runs, and then the
bounds precondition where the target's code does not test it itself
(:mod:`codegen.precondition`).  What the compiled code raises (a failed
``T.assume`` check, a Numba bounds check) is turned into polypad's error by
the ``explain`` function the target supplies (see
:mod:`codegen.numba.checks`).
"""

from __future__ import annotations

from collections.abc import Callable

from polypad.ir.nodes import BoolImm, Expr, PrimFunc

from .calling import check_arguments, written_buffers
from .precondition import CallCheck
from .timing import Timing, measure


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
                 runnable: Callable[[Callable[..., None]], Callable[..., None]] | None = None,
                 device_arrays: bool = False):
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
        # Whether buffers may be device arrays (__cuda_array_interface__): the cuda target.
        self._device_arrays = device_arrays
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
        self.last_timing = measure(self, *args, repeat=repeat, against=against,
                                   against_name=against_name)
        return self.last_timing

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the target and the highlighted source.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import kernel_html

        return kernel_html(self)

    def __call__(self, *args) -> None:
        values = check_arguments(self.func, args, self._written,
                                 device_arrays=self._device_arrays)
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
