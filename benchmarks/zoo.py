"""The zoo's list, and what the benchmark and the tests share: random inputs, the
float64 reference (the numpy peer run in float64) and the check against it."""

from __future__ import annotations

import numpy as np
import zoo_extra as x
import zoo_kernels as k
from zoo_kernels import Zoo

from codegen.timing import copy_at

ZOO = [
    Zoo("matmul", "matmul", k.matmul, k.matmul_schedule, k.matmul_peer, "np.matmul (sgemm)",
        dict(n=1024), dict(n=256), dict(n=16), lambda n: 2.0 * n ** 3, "GFLOP/s"),
    Zoo("bmm 16x16", "batched small matmul", k.bmm, k.bmm_schedule, k.matmul_peer, "np.matmul",
        dict(b=4096), dict(b=512), dict(b=3), lambda b: 2.0 * b * 16 ** 3, "GFLOP/s"),
    Zoo("depthwise 3x3", "depthwise conv", k.depthwise, k.depthwise_schedule, k.depthwise_peer,
        "numpy slices", dict(h=112, w=112, c=64), dict(h=28, w=28, c=64),
        dict(h=3, w=4, c=16), lambda h, w, c: 18.0 * h * w * c, "GFLOP/s"),
    Zoo("transpose", "transpose", k.transpose, k.transpose_schedule, k.transpose_peer,
        "np.copyto(B, A.T)", dict(n=4096), dict(n=1024), dict(n=20),
        lambda n: 8.0 * n * n, "GB/s"),
    Zoo("softmax", "softmax", k.softmax, k.softmax_schedule, k.softmax_peer, "numpy",
        dict(n=4096, m=1024), dict(n=512, m=1024), dict(n=3, m=36),
        lambda n, m: 8.0 * n * m, "GB/s"),
    Zoo("blur 3x3", "stencil and pipeline", k.blur, k.blur_schedule, k.blur_peer, "numpy slices",
        dict(h=4096, w=4096), dict(h=1024, w=1024), dict(h=16, w=12),
        lambda h, w: 8.0 * h * w, "GB/s"),
    Zoo("max-pool 2x2", "pooling", k.pool, k.pool_schedule, k.pool_peer, "np.max(reshape)",
        dict(h=224, w=224, c=64), dict(h=112, w=112, c=64), dict(h=4, w=6, c=16),
        lambda h, w, c: 5.0 * h * w * c, "GB/s"),
    Zoo("int8 dot", "full reduction", k.dot, k.dot_schedule, k.dot_peer, "np.dot(int32)",
        dict(n=1 << 20), dict(n=1 << 18), dict(n=320), lambda n: 2.0 * n, "GB/s"),
    Zoo("layer norm", "row reduction", x.layernorm, x.layernorm_schedule, x.layernorm_peer, "numpy",
        dict(n=4096, m=1024), dict(n=512, m=1024), dict(n=3, m=36),
        lambda n, m: 8.0 * n * m, "GB/s"),
    Zoo("matvec", "row reduction", x.matvec, x.matvec_schedule, x.matvec_peer, "np.matmul (sgemv)",
        dict(n=4096, m=4096), dict(n=1024, m=1024), dict(n=5, m=40),
        lambda n, m: 4.0 * n * m, "GB/s"),
    Zoo("argmax", "row reduction", x.argmax, x.argmax_schedule, x.argmax_peer, "np.argmax",
        dict(n=4096, m=1024), dict(n=512, m=1024), dict(n=4, m=30),
        lambda n, m: 4.0 * n * m, "GB/s"),
    Zoo("stencil 1-D", "stencil", x.stencil, x.stencil_schedule, x.stencil_peer, "numpy slices",
        dict(n=1 << 24), dict(n=1 << 20), dict(n=100), lambda n: 8.0 * n, "GB/s"),
    Zoo("prefix sum", "scan", x.prefix, x.prefix_schedule, x.prefix_peer, "np.cumsum",
        dict(n=1 << 24), dict(n=1 << 20), dict(n=30), lambda n: 8.0 * n, "GB/s"),
    Zoo("row sum", "row reduction", x.row_sum, x.row_sum_schedule, x.row_sum_peer, "np.sum(axis=1)",
        dict(n=4096, m=4094), dict(n=1024, m=1022), dict(n=4, m=38),
        lambda n, m: 4.0 * n * m, "GB/s"),
]


#: Where each array starts: on a 64-byte boundary (a cache line, an AVX-512 vector),
#: as TVM's runtime allocates arrays, unless the benchmark asks for numpy's own
#: placement (``bench_zoo.py --numpy-placement``), which for large arrays is 16 bytes
#: past a page: there every 512-bit load of a row straddles two cache lines, and the
#: 4096 x 4096 matvec ran 1.4x slower (1.5 ms aligned, 2.1 ms at 16 bytes past, one
#: core; numpy's sgemv 1.7 and 1.8 ms).
ALIGN = 64


def aligned(a: np.ndarray, align: int = ALIGN) -> np.ndarray:
    """A copy of ``a`` whose first element starts on an ``align``-byte boundary."""
    return copy_at(a, 0, align)


def inputs(func, sizes: dict, seed: int = 0, align: int | None = ALIGN) -> tuple[list, list]:
    """Random arrays for ``func``'s buffers (and ``sizes`` for its scalars): the
    kernel's arguments and the arrays alone, in order; each array starts on an
    ``align``-byte boundary (``None``: where numpy puts it)."""
    rng = np.random.default_rng(seed)
    args, arrays = [], []
    for p in func.params:
        if not hasattr(p, "shape"):  # a scalar parameter: its size
            args.append(sizes[p.name])
            continue
        shape = tuple(d if isinstance(d, int) else sizes[d.name] for d in p.shape)
        dtype = np.dtype(p.dtype)
        if dtype.kind == "f":
            a = rng.standard_normal(shape).astype(dtype)
        else:
            info = np.iinfo(dtype)
            a = rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
        if align is not None:
            a = aligned(a, align)
        args.append(a)
        arrays.append(a)
    return args, arrays


def reference(zoo, arrays: list) -> list:
    """The peer run in float64 on copies of ``arrays`` (integers as they are)."""
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a.copy() for a in arrays]
    zoo.peer(*wide)
    return wide


def check(got: list, want: list) -> float:
    """The largest error of ``got`` against ``want``, relative to the largest
    magnitude of each output (0 for exact integers; inf for a wrong integer)."""
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        if g.dtype.kind != "f":
            if not np.array_equal(g, w):
                return float("inf")
            continue
        scale = max(float(np.max(np.abs(w))), 1e-30)
        worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - w))) / scale)
    return worst
