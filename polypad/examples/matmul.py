"""Matrix multiplication, ``C = A @ B`` in float32, and its GPU schedule.

``matmul(m, n, k)`` builds the plain loop nest::

    for i, j in T.grid(m, n):
        C[i, j] = 0
        for k in range(k):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]

``schedule_cuda(func)`` is the classic shared-memory tiling, through
polypad's primitives: a block of ``tile x tile`` threads per tile of ``C``,
one thread per element, and at each step of ``k`` the tiles of ``A`` and
``B`` loaded into shared memory by all the block's threads at once
(``cache_read(..., "shared", at=ko)`` and ``bind`` of the copy's loops).
The ``cuda`` target places the two barriers each step needs, and proves that
no other is (:mod:`analyses.gpu_sync`).  The sizes must be multiples of
``tile``.
"""

from __future__ import annotations

from polypad.ir.nodes import PrimFunc
from polypad.schedule import Schedule
from polypad.script import parse

_TEXT = '''
@T.prim_func
def matmul(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
           C: T.Buffer(({m}, {n}), "float32")):
    for i, j in T.grid({m}, {n}):
        with T.block("C"):
            C[i, j] = T.float32(0)
            for k in range({k}):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''


def matmul(m: int = 4096, n: int = 4096, k: int = 4096) -> PrimFunc:
    """``C = A @ B`` with ``A`` of ``m x k`` and ``B`` of ``k x n``, as a plain loop nest."""
    return parse(_TEXT.format(m=m, n=n, k=k), filename="matmul.py")


def schedule_cuda(func: PrimFunc | None = None, *, tile: int = 16) -> Schedule:
    """The shared-memory tiling of the module docstring on ``func`` (:func:`matmul` by
    default); ``sch.func`` is the result, ``codegen.build(sch.func, target="cuda")``
    its kernel."""
    sch = Schedule(func if func is not None else matmul())
    i, j, k = sch.get_loops("C")
    io, ii = sch.split(i, [None, tile])
    jo, ji = sch.split(j, [None, tile])
    ko, ki = sch.split(k, [None, tile])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.cache_read("C", "A", "shared", at=ko)
    sch.cache_read("C", "B", "shared", at=ko)
    sch.bind(io, "blockIdx.y")
    sch.bind(jo, "blockIdx.x")
    sch.bind(ii, "threadIdx.y")
    sch.bind(ji, "threadIdx.x")
    for block in ("A_shared", "B_shared"):
        rows, cols = sch.get_loops(block)[-2:]
        sch.bind(rows, "threadIdx.y")
        sch.bind(cols, "threadIdx.x")
    return sch
