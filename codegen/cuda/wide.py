"""Wide loads and stores for the generated kernels: a run of 2 or 4 consecutive elements
moved by one instruction (``ld.global.v4.f32``, ``st.global.v4.f32``).

Numba's Python has no spelling for a CUDA ``float4`` access: an array element is
one scalar, and NVVM merges neighbouring scalar loads only where it can prove
the first one's address a multiple of the run's width, which it cannot for an
array passed to the kernel (its data pointer's alignment is unknown to it).
So the emitter (:mod:`.wide_runs`) writes a run it has proved aligned as a call
of these functions::

    A_w, A_w_1, A_w_2, A_w_3 = _pp_wide.load4(A, (i, j))
    _pp_wide.store4(B, (i, j), v0, v1, v2, v3)

On a GPU they are numba-cuda intrinsics (``numba.cuda.extending.intrinsic``,
its documented way to write LLVM IR for a kernel): the element's pointer cast
to a pointer to a vector of the run's length, and one load or store of it
with the run's alignment, which NVVM emits as one ``.v4``/``.v2`` access.
What makes that right is what the emitter proved (the run's first element is
a multiple of its length from the buffer's start) and what the call checks
(the buffer starts on a multiple of the run's bytes, :mod:`.runtime`).

On Numba's simulator they are Python functions that move the elements one by
one and check the emitter's proof at every call: the run's first element must
be a multiple of its length from the array's start (:class:`AssertionError`
otherwise: an emitter bug, never a user's).

:data:`codegen.cuda.emit_wide.WIDE_VERSION` is written into every module that uses
them: bump it with any change here, so that the module text changes and
numba-cuda's on-disk cache, which is keyed by the module file, never reuses a
kernel compiled with the old code.
"""

from __future__ import annotations

import numpy as np
from numba import config


def _flat_offset(array, index) -> int:
    """The element ``index`` of a C-contiguous ``array``, counted from its start."""
    return int(np.ravel_multi_index(tuple(int(i) for i in index), array.shape))


def _simulated_load(lanes: int):
    def load(array, index):
        assert _flat_offset(array, index) % lanes == 0, \
            f"a wide load of {lanes} starts at element {index}, off its alignment"
        *head, last = index
        return tuple(array[(*head, last + k)] for k in range(lanes))
    return load


def _simulated_store(lanes: int):
    def store(array, index, *values):
        assert _flat_offset(array, index) % lanes == 0, \
            f"a wide store of {lanes} starts at element {index}, off its alignment"
        *head, last = index
        for k, value in enumerate(values):
            array[(*head, last + k)] = value
    return store


def _pointer(context, builder, array_type, array, index_type, index):
    """The LLVM pointer to ``array[index]`` (no wraparound, no bounds check: the
    emitter's indices are in bounds, as for its scalar accesses)."""
    from numba import types
    from numba.cuda import cgutils

    struct = context.make_array(array_type)(context, builder, value=array)
    items = cgutils.unpack_tuple(builder, index, count=len(index_type))
    items = [context.cast(builder, item, t, types.intp) for item, t in zip(items, index_type)]
    return cgutils.get_item_pointer(context, builder, array_type, struct, items,
                                    wraparound=False)


def _typed(array, index) -> bool:
    from numba import types

    return (isinstance(array, types.Array) and array.layout == "C"
            and isinstance(array.dtype, (types.Float, types.Integer))
            and isinstance(index, types.BaseTuple) and len(index) == array.ndim
            and all(isinstance(t, types.Integer) for t in index))


def _device_load(lanes: int):
    from llvmlite import ir as llvm
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load(typingctx, array, index):
        if not _typed(array, index):
            return None
        sig = types.UniTuple(array.dtype, lanes)(array, index)

        def codegen(context, builder, sig, args):
            array_type, index_type = sig.args
            pointer = _pointer(context, builder, array_type, args[0], index_type, args[1])
            element = context.get_value_type(array_type.dtype)
            vector = llvm.VectorType(element, lanes)
            value = builder.load(builder.bitcast(pointer, vector.as_pointer()),
                                 align=lanes * array_type.dtype.bitwidth // 8)
            items = [builder.extract_element(value, llvm.Constant(llvm.IntType(32), k))
                     for k in range(lanes)]
            return context.make_tuple(builder, sig.return_type, items)

        return sig, codegen

    return load


def _device_store(lanes: int):
    from llvmlite import ir as llvm
    from numba import types
    from numba.cuda.extending import intrinsic

    def codegen(context, builder, sig, args):
        array_type, index_type = sig.args[:2]
        pointer = _pointer(context, builder, array_type, args[0], index_type, args[1])
        vector = llvm.VectorType(context.get_value_type(array_type.dtype), lanes)
        value = llvm.Constant(vector, llvm.Undefined)
        for k, (item, item_type) in enumerate(zip(args[2:], sig.args[2:])):
            item = context.cast(builder, item, item_type, array_type.dtype)
            value = builder.insert_element(value, item, llvm.Constant(llvm.IntType(32), k))
        builder.store(value, builder.bitcast(pointer, vector.as_pointer()),
                      align=lanes * array_type.dtype.bitwidth // 8)
        return context.get_dummy_value()

    def typed(array, index, values):
        if not _typed(array, index) or not all(
                isinstance(v, (types.Float, types.Integer)) for v in values):
            return None
        return types.void(array, index, *values), codegen

    if lanes == 2:
        def store(typingctx, array, index, a, b):
            return typed(array, index, (a, b))
    else:
        def store(typingctx, array, index, a, b, c, d):
            return typed(array, index, (a, b, c, d))
    return intrinsic(store)


if config.ENABLE_CUDASIM:
    load2, load4 = _simulated_load(2), _simulated_load(4)
    store2, store4 = _simulated_store(2), _simulated_store(4)
else:
    load2, load4 = _device_load(2), _device_load(4)
    store2, store4 = _device_store(2), _device_store(4)
