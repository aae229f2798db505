"""Compiling the emitted module and running its kernels on the device.

``numba.cuda`` is imported here only, when a kernel is first called or
compiled, so that ``import codegen`` stays fast and works without it.  Set
``NUMBA_ENABLE_CUDASIM=1`` before that import to run on Numba's CUDA
simulator (how the tests run without a GPU).

A call takes numpy arrays, which are copied to the device and the written
ones back, or device arrays (anything with ``__cuda_array_interface__``:
numba device arrays, cupy, torch), which are used in place without a copy.
"""

from __future__ import annotations

import numpy as np

from polypad.errors import ArgumentError, BuildError, MissingDependencyError
from polypad.ir.nodes import Buffer, PrimFunc, Var
from polypad.semantics.asserts import assert_error
from polypad.semantics.interpreter import evaluate
from polypad.semantics.values import convert, numpy_dtype

from ..bounds_guards import BoundsGuards, bounds_error, max_axes
from .cache import load_module


def import_cuda():
    """``numba.cuda``, or :class:`MissingDependencyError` saying how to get it."""
    try:
        from numba import cuda
    except ImportError as error:  # pragma: no cover - depends on the install
        raise MissingDependencyError(
            "the cuda target needs numba's CUDA support: pip install 'polypad[cuda]' "
            f"({error})") from error
    if not cuda.is_available() and not _simulated(cuda):
        raise BuildError("the cuda target found no CUDA GPU (numba.cuda.is_available() is "
                         "False); set NUMBA_ENABLE_CUDASIM=1 to run on Numba's simulator")
    return cuda


def _simulated(cuda) -> bool:
    from numba import config

    return bool(getattr(config, "ENABLE_CUDASIM", False))


def load(func: PrimFunc, source: str, host: list[Buffer], written: set[Buffer],
         guards: BoundsGuards | None = None, asserts: tuple | list = ()):
    """Compile ``source`` (from :mod:`.emit`) and return the host function that runs
    its kernels on a call's checked arguments.  With ``guards`` (the run-time bounds
    checks the source was emitted with, :mod:`.guards`) each call passes the kernels
    a zeroed flag array and raises the :class:`~polypad.errors.BoundsCheckError` of
    the first check it records, after the launches.  ``asserts`` are the top-level
    asserts the entries ``(None, k)`` of ``KERNELS`` stand for, checked there."""
    cuda = import_cuda()
    # From a file, so that numba-cuda's on-disk cache keeps the compiled kernels.
    module = load_module(source)
    kernels = module["KERNELS"]
    aligned = module.get("ALIGNED_ARGUMENTS", {})
    arguments = [p for p in func.params if isinstance(p, Buffer)] + list(host)
    scalars = [k for k, p in enumerate(func.params) if isinstance(p, Var)]

    def run(*args):
        _check_device_overlap(func, args, written)
        device, copies, temporary = [], [], bool(host)
        for param, value in zip(func.params, args, strict=True):
            if isinstance(param, Buffer) and isinstance(value, np.ndarray):
                moved = cuda.to_device(value)
                device.append(moved)
                temporary = True
                if param in written:
                    copies.append((moved, value))
            else:
                device.append(value)
        for buffer in host:
            shape = tuple(args[func.params.index(e)] if isinstance(e, Var) else e
                          for e in buffer.shape)
            device.append(_device_zeros(cuda, shape, numpy_dtype(buffer.dtype)))
        buffers = [value for param, value in zip(func.params, device[:len(func.params)])
                   if isinstance(param, Buffer)] + device[len(func.params):]
        for position, nbytes in aligned.items():
            _check_alignment(arguments[position], buffers[position], nbytes)
        fail = None
        if guards is not None:
            fail = cuda.to_device(np.zeros(1 + max_axes(func), np.int64))
            device.append(fail)
        values = [args[k] for k in scalars]
        for kernel, launch in kernels:
            if kernel is None:  # a top-level assert, on the scalar parameters
                failed = _failed_assert(func, asserts[launch], args)
                if failed is not None:  # as the others do: the launches before it wrote
                    _finish(func, guards, copies, fail, args)
                    raise failed
                continue
            grid, block = launch(*values)
            if min(grid) <= 0 or min(block) <= 0:
                continue
            try:
                kernel[grid, block](*device)
            except AttributeError as error:
                if "row_stack" not in str(error):
                    raise
                # numba-cuda 0.30.4 compiles with np.row_stack, which numpy 2.5 removed.
                raise MissingDependencyError(
                    f"numba-cuda cannot compile with numpy {np.__version__} ({error}); "
                    "install numpy<2.5, as the polypad[cuda] extra does") from error
        _finish(func, guards, copies, fail, args)
        # With the caller's device arrays alone the call returns once the kernels are
        # queued on the legacy default stream. Where it made device arrays of its own
        # (copies of numpy arguments, the buffers the host allocates) it waits for the
        # kernels first: a memory manager whose frees are stream-ordered (RMM, cupy's
        # pool) could otherwise hand their memory out while a kernel still uses it.
        if temporary:
            cuda.synchronize()

    # (numba kernel, launch configuration) pairs, for timing; not the asserts' entries
    run.kernels = tuple(entry for entry in kernels if entry[0] is not None)
    run.host = host  # the buffers the host allocates, passed after the parameters
    return run


def _finish(func: PrimFunc, guards, copies, fail, args) -> None:
    """Copy the written buffers back, and raise the bounds error the launches recorded."""
    for moved, value in copies:
        moved.copy_to_host(value)
    if fail is not None:
        recorded = fail.copy_to_host()  # waits for the kernels
        if recorded[0] != 0:
            raise bounds_error(func, guards, int(recorded[0]) - 1, recorded[1:], list(args))


def _failed_assert(func: PrimFunc, stmt, args):
    """The :class:`~polypad.errors.AssertionFailedError` of top-level assert ``stmt``
    where the call's scalar arguments make it false, else None."""
    env = {p: convert(a, p.dtype) for p, a in zip(func.params, args, strict=True)
           if isinstance(p, Var)}
    return None if evaluate(func, stmt.condition, env) else assert_error(func, stmt, env)


def _check_alignment(buffer: Buffer, value, nbytes: int) -> None:
    """An :class:`ArgumentError` where the device array for ``buffer`` does not start on
    a multiple of ``nbytes``: the kernel moves runs of it with one instruction
    (:mod:`.wide`), which a GPU refuses at an address off that multiple."""
    span = _span(value)
    if span is not None and span[0] % nbytes:
        raise ArgumentError(
            f"argument {buffer.name!r} starts at device address {span[0]:#x}, not a multiple "
            f"of {nbytes} bytes, and the kernel reads or writes it {nbytes} bytes at a time "
            "(a vectorized loop); pass an array that starts on a multiple of it (a fresh "
            "allocation does, a slice may not)")


def _device_zeros(cuda, shape: tuple, dtype: np.dtype):
    """A zero-filled device array for a buffer the host allocates: filled on the device
    (a memset of a few microseconds), not copied from a host array of zeros (the conv
    layer's 20 MB took 5 ms a call that way on an H200)."""
    from numba.cuda.cudadrv import driver

    array = cuda.device_array(shape, dtype)
    if array.nbytes:
        driver.device_memset(array, 0, array.nbytes)
    return array


def _span(value) -> tuple[int, int] | None:
    """The device memory ``[start, end)`` of an array with ``__cuda_array_interface__``
    (C-contiguous, as the call's checks demand), or None for anything else."""
    if isinstance(value, np.ndarray):
        return None
    simulated = getattr(value, "_ary", None)  # the simulator's device array wraps numpy's
    if isinstance(simulated, np.ndarray):
        start = simulated.__array_interface__["data"][0]
        return start, start + simulated.nbytes
    try:
        interface = value.__cuda_array_interface__
    except AttributeError:
        return None
    start = interface["data"][0]
    count = int(np.prod(interface["shape"], dtype=np.int64))
    size = count * np.dtype(interface["typestr"]).itemsize
    return start, start + size


def _check_device_overlap(func: PrimFunc, args, written: set[Buffer]) -> None:
    """A device array the kernel writes must not share memory with another argument, as
    for numpy arrays (:mod:`codegen.calling`): the kernels read distinct buffers as
    distinct memory (:mod:`.batch` moves loads above the stores of other buffers)."""
    spans = [(param, _span(value)) for param, value in zip(func.params, args, strict=True)
             if isinstance(param, Buffer)]
    spans = [(param, span) for param, span in spans if span is not None and span[0] < span[1]]
    for k, (first, a) in enumerate(spans):
        for second, b in spans[k + 1:]:
            if (first in written or second in written) and a[0] < b[1] and b[0] < a[1]:
                raise ArgumentError(f"arguments {first.name!r} and {second.name!r} share "
                                    "device memory, and the kernel writes one of them; pass "
                                    "distinct arrays (a copy)")
