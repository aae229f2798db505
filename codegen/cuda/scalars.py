"""A local buffer indexed only by constants, written as one variable per element.

A register tile (``C_local``, cut to each thread's box by :mod:`.compact` and
indexed by constants once its loops are unrolled) was written as a
``cuda.local.array`` with every access ``C_local[3, 5]``.  NVVM keeps such an
array in registers, so the kernel is the same either way, but Numba's front
end pays for each access: a tuple of constants, a typed ``getitem`` or
``setitem`` with its index checks, lowered to tens of LLVM instructions that
NVVM then folds away.  The SGEMM's 8 x 8 tile is accessed 384 times in its
kernel (a read and a write in each of the 128 updates of a step, the 64 zeros,
the 64 stores to ``C``); as variables (``C_local_3_5 = C_local_3_5 + a * b``)
an update is two typed operations instead of four, and on sm_90 the kernel
compiles in about a fifth less time (the conv layer's in half, the SGEMM with
its step unrolled fully in 40% less), with the same registers and the same
PTX fma count (``benchmarks/bench_cuda_compile.py``, docs/cuda.md).

A buffer qualifies when it is local (one per thread: no other thread sees it),
of a float dtype (a variable takes the type of what is stored; a float32
expression is float32, where an int32 sum would be computed in 64 bits) and
stored no value with ``T.floor``/``T.ceil`` or ``**`` in it, directly or
through a let (``math.floor`` is an int64 in Numba: an array converts it
back, a variable would become float64),
not zero-filled (:func:`analyses.gpu_shared_reads.unwritten_shared_reads`
proves every read finds an element written before it in the same allocation,
so no read sees the variable before its first assignment), and every access
of it in the kernel has constant indices inside its shape: then element
``(i, j)`` is exactly variable ``C_local_i_j``.  Whether the last holds is
known only once the whole kernel is written, so each access is printed as a
placeholder that :meth:`ElementAccesses.resolve` replaces at the end.
"""

from __future__ import annotations

import re

from polypad.ir import nodes as ir

_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


class ElementAccesses:
    """The accesses of one kernel's candidate buffers, each as a placeholder."""

    def __init__(self):
        self._accesses: list[tuple[ir.Buffer, tuple[int, ...] | None, str]] = []

    def access(self, buffer: ir.Buffer, indices: list[ir.Expr], text: str) -> str:
        """A placeholder for ``text``, the access of ``buffer`` at the (folded)
        ``indices``."""
        key = tuple(i.value for i in indices) if all(
            isinstance(i, ir.IntImm) for i in indices) else None
        self._accesses.append((buffer, key, text))
        return f"\x00{len(self._accesses) - 1}\x00"

    def resolve(self, lines: list[str], shape, names) -> tuple[list[str], set[ir.Buffer]]:
        """``lines`` with every placeholder replaced: by the element's variable where
        every access of its buffer has constant indices within ``shape(buffer)``,
        by the array access otherwise; and the buffers that became variables."""
        arrays = {buffer for buffer, key, _ in self._accesses
                  if key is None or not _within(key, shape(buffer))}
        variables: dict[tuple, str] = {}
        for buffer, key, _ in sorted(
                {(b, k, "") for b, k, _ in self._accesses if b not in arrays},
                key=lambda x: (names(x[0]), x[1])):
            variables[buffer, key] = names.fresh(
                "_".join([names(buffer), *(str(k) for k in key)]))

        def replace(match: re.Match) -> str:
            buffer, key, text = self._accesses[int(match.group(1))]
            return text if buffer in arrays else variables[buffer, key]

        out = [_PLACEHOLDER.sub(replace, line) for line in lines]
        return out, {buffer for buffer, _ in variables}


def _within(key: tuple[int, ...], shape) -> bool:
    return len(key) == len(shape) and all(
        isinstance(extent, int) and 0 <= k < extent for k, extent in zip(key, shape))

