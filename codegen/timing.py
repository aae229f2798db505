"""Timing a kernel: compile time apart from run time, and a peer timed beside it.

A kernel updates its arrays in place, so running it again on the same arrays
runs it on other inputs: a sum into ``B[0]`` keeps growing, an update
``A[i] = A[i] * 2`` overflows or goes to infinity, and the later runs time
different arithmetic from the first.  :func:`measure` therefore gives every
run (the kernel's and the peer's) fresh copies of the arrays the kernel
writes, made before the clock starts; arrays it only reads are shared, as
they stay unchanged.  The caller's arrays are never written.  A copy starts
at the same offset from a 64-byte boundary as its original
(:func:`copy_in_place`): where an array starts moves a kernel's time (a
4096 x 4096 matrix-vector product ran 1.4x slower 16 bytes past a boundary
than on one), so the copies time what the caller's arrays would.

Each run is one call as a user makes it, argument checks included, so a
tiny kernel's time is mostly the call's overhead.  The first call is a
warm-up and is not counted (Numba's dispatcher settles on it); the garbage
collector is off while the clock runs, as in :mod:`timeit`.  A timing says
how long these calls took on this machine at this moment: compare medians of
runs taken together, not numbers from different sessions.

>>> t = codegen.timing.measure(kernel, a, b, repeat=20,
...                            against=lambda a, b: a.sum(), against_name="numpy")
>>> t.median, t.min, t.compile_s, t.ratio      # seconds; ratio = numpy / kernel
>>> t                                          # in a notebook: a table and a bar chart
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from polypad.arguments import expect
from polypad.durations import seconds_text
from polypad.errors import ArgumentValueError
from polypad.ir.nodes import Buffer, PrimFunc

from .calling import check_arguments, written_buffers


@runtime_checkable
class Timed(Protocol):
    """What :func:`measure` needs of a kernel; a :class:`codegen.Kernel` is one.

    (A protocol rather than the class itself: the kernel imports this module
    for :meth:`~codegen.Kernel.time`, and this module does not import it back.)
    """

    func: PrimFunc
    target: str
    compiled: bool

    def compile(self) -> object: ...

    def __call__(self, *args) -> None: ...


@dataclass(frozen=True)
class Timing:
    """What :func:`measure` found: the seconds of every counted run of a kernel
    and, when it was timed against a peer, of the peer's runs on the same inputs.

    ``compile_s`` is the time :meth:`Kernel.compile` took (Numba's compile, or
    loading its on-disk cache), counted in no run; None when the kernel was
    compiled before it was timed.
    """

    name: str
    target: str
    runs: tuple[float, ...]
    compile_s: float | None = None
    peer: str | None = None
    peer_runs: tuple[float, ...] | None = None

    @property
    def median(self) -> float:
        """The median of the kernel's runs, in seconds."""
        return statistics.median(self.runs)

    @property
    def min(self) -> float:
        """The fastest of the kernel's runs, in seconds."""
        return min(self.runs)

    @property
    def peer_median(self) -> float | None:
        """The median of the peer's runs, in seconds; None without a peer."""
        return statistics.median(self.peer_runs) if self.peer_runs else None

    @property
    def peer_min(self) -> float | None:
        """The fastest of the peer's runs, in seconds; None without a peer."""
        return min(self.peer_runs) if self.peer_runs else None

    @property
    def ratio(self) -> float | None:
        """The peer's median over the kernel's: above 1 the kernel is faster.
        None without a peer."""
        peer = self.peer_median
        # a clock too coarse for the kernel reads 0: no ratio rather than a division error
        return None if peer is None or self.median <= 0 else peer / self.median

    def __str__(self) -> str:
        text = (f"{self.name} ({self.target}): median {seconds_text(self.median)}, "
                f"min {seconds_text(self.min)} over {len(self.runs)} runs")
        if self.compile_s is not None:
            text += f"; compile {seconds_text(self.compile_s)}"
        if self.peer is not None:
            ratio = "n/a" if self.ratio is None else f"{self.ratio:.3g}"
            text += f"; {self.peer}: median {seconds_text(self.peer_median)} (ratio {ratio})"
        return text

    def __repr__(self) -> str:
        return f"<Timing {self}>"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: a table of the numbers and the bar chart."""
        from polypad.viz.timing import timing_html

        return timing_html(self)

    def _repr_svg_(self) -> str:
        """The bar chart alone (:func:`polypad.viz.plot_timing`)."""
        from polypad.viz.timing import plot_timing

        return plot_timing(self).text


#: The alignment a copy keeps its original's offset from: a cache line, an AVX-512 vector.
LINE = 64


def copy_at(a: np.ndarray, offset: int, line: int = LINE) -> np.ndarray:
    """A copy of array ``a``, in C order, starting ``offset`` bytes past a
    ``line``-byte boundary (0: on one, as TVM's runtime allocates arrays)."""
    raw = np.empty(a.nbytes + line, np.uint8)
    start = (offset - raw.ctypes.data) % line
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def copy_in_place(a):
    """A copy of array ``a`` that starts at ``a``'s offset from a :data:`LINE`-byte
    boundary (``np.copy`` starts wherever the allocator puts it); anything else, or
    an array not in C order, as ``np.copy`` makes it."""
    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or a.nbytes == 0:
        return np.copy(a)
    return copy_at(a, a.ctypes.data % LINE)


def measure(kernel: Timed, *args, repeat: int = 7,
            against: Callable[..., object] | None = None,
            against_name: str | None = None) -> Timing:
    """Time ``kernel(*args)`` over ``repeat`` runs, each on fresh copies of the
    arrays it writes; the caller's arrays are left as they were.

    A kernel that is not compiled yet is compiled first, and that time is
    reported as ``compile_s``, apart from the runs.  ``against`` is a peer,
    such as a numpy expression, called with the same arguments (fresh copies
    of the written arrays too, so it may update them in place); its return
    value is ignored.  Peer and kernel runs alternate, so that a change in the
    machine's load touches both.  ``against_name`` names the peer in the
    display (by default the callable's ``__name__``, or ``"peer"`` for a
    lambda).

    >>> t = measure(codegen.build(f), a, b, repeat=20,
    ...             against=lambda a, b: b.__setitem__(0, a.sum()), against_name="numpy")
    >>> t.ratio       # numpy's median over the kernel's

    Raises :class:`~polypad.errors.ArgumentError` for arguments the kernel
    does not take (checked before anything runs), and
    :class:`~polypad.errors.ArgumentTypeError` or
    :class:`~polypad.errors.ArgumentValueError` for a bad option.
    """
    where = "codegen.timing.measure"
    expect(kernel, Timed, "kernel", where, what="a Kernel")
    expect(repeat, int, "repeat", where)
    if repeat < 1:
        raise ArgumentValueError(f"{where}: repeat must be at least 1, not {repeat}")
    if against is not None and not callable(against):
        raise ArgumentValueError(f"{where}: against must be a callable or None, "
                                 f"not {type(against).__name__}")
    expect(against_name, (str, None), "against_name", where)
    written = written_buffers(kernel.func)
    check_arguments(kernel.func, args, written)
    copied = [isinstance(p, Buffer) and p in written for p in kernel.func.params]

    def fresh() -> list:
        return [copy_in_place(a) if c else a for a, c in zip(args, copied, strict=True)]

    compile_s = None
    if not kernel.compiled:
        start = time.perf_counter()
        kernel.compile()
        compile_s = time.perf_counter() - start
    callers = [kernel] if against is None else [kernel, against]
    for call in callers:  # warm-up, not counted
        call(*fresh())
    runs: list[list[float]] = [[] for _ in callers]
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for call, seconds in zip(callers, runs, strict=True):
                inputs = fresh()
                start = time.perf_counter()
                call(*inputs)
                seconds.append(time.perf_counter() - start)
    finally:
        if collecting:
            gc.enable()
    peer = None
    if against is not None:
        peer = against_name or getattr(against, "__name__", "peer")
        peer = "peer" if peer == "<lambda>" else peer
    return Timing(name=kernel.func.name, target=kernel.target, runs=tuple(runs[0]),
                  compile_s=compile_s, peer=peer,
                  peer_runs=tuple(runs[1]) if against is not None else None)
