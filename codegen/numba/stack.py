"""Small buffers on the stack: what a ``T.alloc_buffer`` of a few constant elements
becomes in a Numba kernel.

``np.zeros`` asks Numba's runtime for heap memory that LLVM knows nothing
about: it may alias the arguments, so every store to it forces the next
load of an argument to be repeated, and it never lives in registers.  A
stack allocation (``alloca``) is private to the function: LLVM keeps its
elements in registers where the indices are constant (a register tile,
``Schedule.store_at``) and reorders loads of the arguments around it.  In
the seed-004 conv layer this alone is worth 1.5x (benchmarks/bench_kernels.py).

The generated module calls ``stack_zeros(count, dtype)``: an ``alloca`` of
``count`` elements, 64-byte aligned (a cache line and an AVX-512 vector), in
the function's entry block, zero-filled where the call stands (the
reference executor zero-fills every allocation too), viewed as an array
with ``numba.carray``.  The entry-block placement makes the memory the same
for every execution of the call within one function call, which is what an
allocation inside a loop means: fresh zeros each iteration, freed after it.
Numba outlines the body of a ``numba.prange`` loop into a function of its
own, so each thread has its own.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from polypad.ir.operators import as_expr

from .pyexpr import numpy_type

#: Largest allocation, in bytes, kept on the stack; a larger one goes to the heap
#: (worker threads' stacks are small, and a large tile gains nothing in registers).
MAX_STACK_BYTES = 16384
ALIGN = 64


@intrinsic
def stack_zeros(typingctx, count, dtype):
    """A pointer to ``count`` zeroed elements of ``dtype`` on the stack (see the module)."""
    if not isinstance(count, types.IntegerLiteral) or not isinstance(dtype, types.NumberClass):
        return None
    size = count.literal_value
    element = dtype.instance_type

    def codegen(context, builder, signature, args):
        llvm_element = context.get_value_type(element)
        with builder.goto_entry_block():
            slot = builder.alloca(ir.ArrayType(llvm_element, size))
            slot.align = ALIGN
        nbytes = context.get_constant(types.intp, size * context.get_abi_sizeof(llvm_element))
        cgutils.memset(builder, slot, nbytes, 0)
        return builder.bitcast(slot, llvm_element.as_pointer())

    return types.CPointer(element)(count, dtype), codegen


def stack_elements(buffer) -> int | None:
    """The element count of ``buffer`` if it goes on the stack: a constant shape of at
    most :data:`MAX_STACK_BYTES`, of a numeric dtype; ``None`` otherwise."""
    from polypad.ir import dtypes
    from polypad.ir import nodes as ir

    count = 1
    for extent in buffer.shape:
        value = extent.value if isinstance(extent, ir.IntImm) else extent
        if not isinstance(value, int) or value < 1:
            return None
        count *= value
    if not (dtypes.is_float(buffer.dtype) or dtypes.is_int(buffer.dtype)):
        return None
    if count * dtypes.bits(buffer.dtype) // 8 > MAX_STACK_BYTES:
        return None
    return count


def python_stack_zeros(count: int, dtype) -> np.ndarray:
    """What ``stack_zeros(count, dtype)`` followed by ``numba.carray`` gives, in plain
    Python: ``count`` zeros, for running emitted source without Numba (tests)."""
    return np.zeros(count, dtype=dtype)


def zero_filled(buf, expr, names) -> tuple[str, bool]:
    """The line (unindented) allocating ``buf`` zero-filled, and whether it is on the
    stack: there when it is small and of constant shape, else on the heap, 64-byte
    aligned (:mod:`.aligned`); ``expr`` prints the extents, ``names`` names arrays."""
    shape = ", ".join(expr(as_expr(e)) for e in buf.shape)
    shape += "," if len(buf.shape) == 1 else ""
    count = stack_elements(buf)
    if count is not None:
        return (f"{names(buf)} = numba.carray(_pp_stack_zeros({count}, "
                f"{numpy_type(buf.dtype)}), ({shape}))"), True
    count = " * ".join(f"({expr(as_expr(e))})" for e in buf.shape)
    return (f"{names(buf)} = _pp_aligned_zeros({count}, "
            f"{numpy_type(buf.dtype)}).reshape(({shape}))"), False
