"""``B = A * 2 + 1`` over a matrix: the memory-bound kernel of the GPU benchmarks, whose
peer is the device-to-device copy (``benchmarks/bench_cuda.py``)."""

from __future__ import annotations

_TEXT = '''
@T.prim_func
def scale(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        B[i, j] = A[i, j] * T.float32(2) + T.float32(1)
'''


def scale(n: int = 8192, m: int = 8192):
    """``B = A * 2 + 1`` at the constant size ``n x m``."""
    from polypad.script import parse

    return parse(_TEXT.format(n=n, m=m), filename="elementwise.py")


def schedule_cuda(func=None, *, threads: int = 256, per_thread: int = 16, vector: int = 1):
    """:func:`scale` on a GPU; returns the ``Schedule``.

    A block per row and ``threads * per_thread`` of its elements, each thread's
    ``per_thread`` elements ``threads`` apart (a warp reads and writes
    consecutive elements: coalesced), unrolled, so that the ``cuda`` target
    issues the thread's loads before its stores (:mod:`codegen.cuda.batch`).

    ``vector=4`` (or 2) gives each thread its elements in runs of ``vector``
    consecutive ones, ``threads * vector`` apart, each run a vectorized loop
    that the ``cuda`` target moves with one 16-byte (8-byte) load and one store
    (``ld.global.v4.f32``, :mod:`codegen.cuda.wide`) where it proves the run
    aligned: here wherever the row's length is a multiple of ``vector`` (a
    partial last tile included; a run it cannot prove stays scalar).  Not yet
    timed on a GPU, hence not the default.
    """
    from polypad.errors import ArgumentValueError
    from polypad.schedule import Schedule

    if vector < 1 or per_thread % vector:
        raise ArgumentValueError(f"elementwise.schedule_cuda: vector={vector} must be a "
                                 f"positive divisor of per_thread={per_thread}")
    sch = Schedule(func if func is not None else scale())
    if vector == 1:
        jo, jj, ji = sch.split("j", [None, per_thread, threads])
        sch.reorder(jo, ji, jj)
    else:
        jo, jj, ji, jv = sch.split("j", [None, per_thread // vector, threads, vector])
        sch.reorder(jo, ji, jj, jv)
        sch.vectorize(jv)
    sch.bind("i", "blockIdx.y")
    sch.bind(jo, "blockIdx.x")
    sch.bind(ji, "threadIdx.x")
    sch.unroll(jj)
    return sch
