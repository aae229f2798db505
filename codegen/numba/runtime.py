"""Running a Numba kernel safely from several threads and in forked processes.

A kernel with a parallel loop runs it on Numba's *threading layer*, and two of
the three layers have limits (Numba's documentation, "The Threading Layers"):

- ``omp`` with GNU OpenMP (libgomp, the usual one on Linux) is not fork-safe:
  once a process has run a parallel region, a child it forks that starts one
  is killed ("Terminating: fork() called from a process already using GNU
  OpenMP").  A ``ProcessPoolExecutor`` with the fork context does exactly
  that.  So in such a child a kernel runs a *serial* build of the same
  module: every ``prange`` a ``range`` (the loop is parallel only because its
  iterations are independent, so the result is the same), compiled without
  Numba's on-disk cache, whose entries do not tell serial code from parallel.
- ``workqueue`` is not thread-safe: two threads launching parallel regions at
  once abort the process.  Under it (or before Numba has picked a layer) the
  calls of parallel kernels take turns behind one lock.  ``omp`` and ``tbb``
  are thread-safe, and kernels run side by side.

Serial kernels (no ``parallel=True`` anywhere in their module) never start a
threading layer and need neither.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from pathlib import Path

import numba
from numba.core.registry import CPUDispatcher

from polypad.concurrency import at_fork_in_child

from .slp import vectorizing, wanted
from .vector_width import pipeline_class

_launching = threading.Lock()  # parallel launches take turns under workqueue
_serial_only = False  # a forked child of a process that started GNU OpenMP
_serial: dict[tuple[str, int | None], Callable] = {}
_serial_lock = threading.Lock()
_parallel: dict[str, bool] = {}  # module name -> whether a function in it is parallel


def runnable(dispatcher, width: int | None) -> Callable:
    """What to call for ``dispatcher`` (a kernel compiled with the ``vector_width``
    ``width``) in this process, now: itself, a serial build, or itself behind the
    launch lock."""
    if not _has_parallel(dispatcher):
        return dispatcher
    if _serial_only:
        return _serial_build(dispatcher, width)
    if _layer() in (None, "workqueue"):
        return _taking_turns(dispatcher)
    return dispatcher


def _has_parallel(dispatcher) -> bool:
    name = dispatcher.py_func.__module__
    found = _parallel.get(name)
    if found is None:
        namespace = dispatcher.py_func.__globals__
        found = _parallel[name] = any(
            isinstance(v, CPUDispatcher) and v.targetoptions.get("parallel")
            for v in list(namespace.values()))
    return found


def _layer() -> str | None:
    """The threading layer Numba started in this process, or None before the first
    parallel region."""
    from numba.np.ufunc import parallel

    return parallel._threading_layer if parallel._is_initialized else None


def _taking_turns(dispatcher) -> Callable:
    def call(*args):
        with _launching:
            return dispatcher(*args)

    return call


def _serial_build(dispatcher, width: int | None) -> Callable:
    """``dispatcher``'s module again, every Numba function in it compiled without
    ``parallel`` and without the on-disk cache, for the same signatures."""
    name = dispatcher.py_func.__module__
    key = (name, width)
    found = _serial.get(key)
    if found is not None:
        return found
    with _serial_lock:
        if key in _serial:
            return _serial[key]
        path = Path(dispatcher.py_func.__code__.co_filename)
        module = types.ModuleType(f"{name}_serial")
        module.__file__ = str(path)
        exec(compile(path.read_text(), str(path), "exec"), vars(module))
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                options = {k: v for k, v in value.targetoptions.items()
                           if k not in ("nopython", "parallel")}
                if width is not None:
                    options["pipeline_class"] = pipeline_class(width)
                namespace[attr] = numba.njit(cache=False, parallel=False, **options)(
                    value.py_func)
        serial = namespace[dispatcher.py_func.__name__]
        with vectorizing(wanted(namespace)):
            for signature in dispatcher.signatures:
                serial.compile(signature)
        _serial[key] = serial
        return serial


def _after_fork_in_child() -> None:
    global _launching, _serial_lock, _serial_only
    _launching, _serial_lock = threading.Lock(), threading.Lock()
    if _layer() == "omp":
        from numba.np.ufunc import omppool

        _serial_only = omppool.openmp_vendor == "GNU"


at_fork_in_child(_after_fork_in_child)
