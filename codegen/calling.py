"""The calling convention every target shares, and the checks on a call's arguments.

A kernel is called as ``kernel(*args)`` with the arguments in ``func.params``
order -- a C-contiguous numpy array of the buffer's shape and dtype for each
buffer, a Python number for each scalar.  Buffers are updated in place and
the call returns None; an array the kernel writes may not overlap another
argument.  Checking here, before any compiled code runs, turns a mismatch
into an :class:`~polypad.errors.ArgumentError` naming the parameter instead
of a Numba typing error or a silent out-of-bounds write.
"""

from __future__ import annotations

import numpy as np

from polypad.errors import ArgumentError
from polypad.ir import dtypes, views
from polypad.ir.nodes import Buffer, BufferStore, PrimFunc, Var
from polypad.ir.visitor import walk
from polypad.semantics.values import numpy_dtype


def written_buffers(func: PrimFunc) -> set[Buffer]:
    """The buffers ``func`` stores to; a store through a view (TVM's flattened
    ``A_1 = A.view(48)``) stores to the buffer owning its memory too."""
    stored = {n.buffer for n in walk(func.body) if isinstance(n, BufferStore)}
    return stored | {views.root(b) for b in stored}


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


def _array(param: Buffer, value, extents: dict[Var, int], written: bool,
           device_arrays: bool = False) -> np.ndarray:
    name = param.name
    if device_arrays and not isinstance(value, np.ndarray) and (
            hasattr(value, "__cuda_array_interface__") or hasattr(value, "copy_to_host")):
        return _device_array(param, value, extents)
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


def _device_array(param: Buffer, value, extents: dict[Var, int]):
    """A device array, checked as ``_array`` checks a numpy array: dtype, shape,
    C-contiguous.  Read from its ``__cuda_array_interface__``, or, for a numba device
    array of the CUDA simulator, which has none, from its ``shape``, ``dtype`` and
    ``strides``."""
    name, face = param.name, getattr(value, "__cuda_array_interface__", None)
    if face is None:
        face = {"typestr": np.dtype(value.dtype).str, "shape": value.shape,
                "strides": value.strides}
    expected = numpy_dtype(param.dtype)
    if np.dtype(face["typestr"]) != expected:
        raise ArgumentError(f"argument {name!r} must have dtype {expected}, "
                            f"got {np.dtype(face['typestr'])}")
    shape = tuple(face["shape"])
    if len(shape) != len(param.shape):
        raise ArgumentError(f"argument {name!r} must have {len(param.shape)} axes "
                            f"(shape {_shape_text(param)}), got shape {shape}")
    for axis, (extent, actual) in enumerate(zip(param.shape, shape, strict=True)):
        bound = extents.setdefault(extent, actual) if isinstance(extent, Var) else extent
        if bound != actual:
            raise ArgumentError(f"argument {name!r} must have shape {_shape_text(param)}, "
                                f"got {shape} (axis {axis})")
    strides = face.get("strides")
    if strides is not None:
        step, expect_strides = expected.itemsize, []
        for extent in reversed(shape):
            expect_strides.append(step)
            step *= extent
        if tuple(strides) != tuple(reversed(expect_strides)) and 0 not in shape:
            raise ArgumentError(f"argument {name!r} must be C-contiguous")
    return value


def _shape_text(buffer: Buffer) -> str:
    return "(" + ", ".join(s.name if isinstance(s, Var) else str(s) for s in buffer.shape) + \
        ("," if len(buffer.shape) == 1 else "") + ")"


def check_arguments(func: PrimFunc, args: tuple, written: set[Buffer], *,
                    device_arrays: bool = False) -> list:
    """The arguments of a call to ``func``, checked and converted.

    Scalars are checked first so that a symbolic extent ``n`` is compared
    with the value passed for ``n``; an extent that is no parameter is bound
    by the first array that has it and must agree with the others.
    ``device_arrays`` lets a buffer be a device array (the cuda target).
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
            values[k] = _array(param, value, extents, param in written, device_arrays)
    _check_overlap(func, values, written)
    return values


def _check_overlap(func: PrimFunc, values: list, written: set[Buffer]) -> None:
    """An array the kernel writes must not share memory with another argument.

    Distinct buffers are distinct memory to the analyses, and to the emitted
    code, which may hold an element in a local across a loop
    (:mod:`.accumulators`).  The arrays are C-contiguous, so overlapping
    bounds mean shared memory.
    """
    arrays = [(p, v) for p, v in zip(func.params, values, strict=True)
              if isinstance(p, Buffer) and isinstance(v, np.ndarray)]
    for k, (first, a) in enumerate(arrays):
        for second, b in arrays[k + 1:]:
            if (first in written or second in written) and np.may_share_memory(a, b):
                raise ArgumentError(f"arguments {first.name!r} and {second.name!r} share "
                                    "memory, and the kernel writes one of them; pass "
                                    "distinct arrays (a copy)")
