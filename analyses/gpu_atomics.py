"""Atomic reduction updates on a GPU: which stores are, and what numba.cuda offers.

``sch.atomic(loop)`` (:mod:`polypad.schedule.gpu_reduction`) wraps one
reduction update ``X[idx] = combine(X[idx], v)`` in a block annotated
``{"atomic": combiner}``.  Its serial meaning is the store's; on a GPU it is
one atomic read-modify-write, so that two instances of atomic updates of
one element with one combiner may run in either order and give the same
result (exactly for integers and for ``max``/``min``; a float sum up to
rounding, which the user accepts by asking for it, as with ``rfactor``).
:mod:`analyses.gpu_sync` lets such pairs race; the ``cuda`` target emits
``cuda.atomic.<op>(X, idx, v)``.
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.visitor import walk

#: The atomics numba.cuda has, by combiner, and the dtypes it documents them for.
ATOMICS = {
    "+": ("add", ("int32", "float32", "float64")),
    "max": ("max", ("int32", "int64", "uint32", "uint64", "float32", "float64")),
    "min": ("min", ("int32", "int64", "uint32", "uint64", "float32", "float64")),
    "&": ("and_", ("int32", "int64", "uint32", "uint64")),
    "|": ("or_", ("int32", "int64", "uint32", "uint64")),
    "^": ("xor", ("int32", "int64", "uint32", "uint64")),
}

#: The annotation key of an atomic update's block.
ATOMIC = "atomic"


def atomic_stores(func_or_stmt) -> dict[int, str]:
    """The ids of the stores of atomic blocks, with their combiners."""
    root = func_or_stmt.body if isinstance(func_or_stmt, n.PrimFunc) else func_or_stmt
    out = {}
    for x in walk(root):
        if isinstance(x, n.Block) and x.header is not None:
            combiner = dict(x.header.annotations).get(ATOMIC)
            if combiner is not None and isinstance(x.body, n.BufferStore):
                out[id(x.body)] = combiner
    return out


__all__ = ["ATOMIC", "ATOMICS", "atomic_stores"]
