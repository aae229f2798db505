"""Heap buffers aligned to 64 bytes: what a ``T.alloc_buffer`` too large for the
stack (:mod:`.stack`) becomes in a Numba kernel.

Numba's ``np.zeros`` asks for 32-byte alignment, so a 512-bit vector load
from such a buffer may straddle two cache lines.  :func:`aligned_zeros`
allocates a few elements more and returns the view that starts on a 64-byte
boundary (a cache line and an AVX-512 vector).  LLVM is not told the
alignment -- it cannot see through the view -- so the gain is the hardware's:
no split loads.  On small buffers that the default placed at 32 bytes past
a line it measured 20 to 30 % on a two-stage element-wise kernel; large
buffers mostly land on a page boundary anyway.
"""

from __future__ import annotations

import numba
import numpy as np

ALIGN = 64


@numba.njit(inline="always", cache=True)
def aligned_zeros(count, dtype):
    """``count`` zeros of ``dtype`` starting on a 64-byte boundary (1-d; reshape it)."""
    raw = np.zeros(count + ALIGN, dtype)  # ALIGN elements of slack: at least ALIGN bytes
    shift = (-raw.ctypes.data % ALIGN) // raw.itemsize
    return raw[shift:shift + count]


def python_aligned_zeros(count: int, dtype) -> np.ndarray:
    """:func:`aligned_zeros` in plain Python, for running emitted source without Numba."""
    raw = np.zeros(count + ALIGN, dtype=dtype)
    shift = (-raw.ctypes.data % ALIGN) // raw.itemsize
    return raw[shift:shift + count]
