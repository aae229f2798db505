"""Shared by the argmax tests: inputs full of ties and of rows of one infinity, and
the check that a rewritten argmax computes the original's every bit."""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir import nodes as n


def tied_inputs(func: n.PrimFunc, seed: int, fill: float = -np.inf) -> list[np.ndarray]:
    """Few distinct values, so rows tie; every third seed, every other row all
    ``fill`` (-inf: no step beats an argmax's start; +inf, an argmin's)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if p.dtype.startswith("float"):
            a = rng.integers(-2, 2, p.shape).astype(p.dtype)
            if seed % 3 == 0 and a.ndim == 2:
                a[::2] = fill
            out.append(a)
        else:
            out.append(rng.integers(0, 3, p.shape).astype(p.dtype))
    return out


def _inputs(func: n.PrimFunc, seed: int, started: bool, fill: float) -> list[np.ndarray]:
    arrays = tied_inputs(func, seed, fill)
    if started and len(arrays) == 3:  # A, M, I: M and I started as a caller would
        arrays[1][:] = arrays[0][:, 0]
        arrays[2][:] = 0
    return arrays


def assert_runs_the_same(original: n.PrimFunc, rewritten: n.PrimFunc, *, started: bool = True,
                         fill: float = -np.inf) -> None:
    """``rewritten`` leaves every buffer as ``original`` does (the reference executor),
    bit for bit, on the reference executor and Numba.  ``started``: the parameters
    ``(A, M, I)`` come in with ``M[i] = A[i, 0]`` and ``I[i] = 0`` (a nest without its
    init); otherwise as drawn (a ``T.init()`` overwrites them)."""
    reference = codegen.build(original, target="python")
    kernels = [codegen.build(rewritten, target=t) for t in ("python", "numba")]
    for seed in range(6):
        want = _inputs(original, seed, started, fill)
        reference(*want)
        for kernel in kernels:
            got = _inputs(original, seed, started, fill)
            kernel(*got)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(g, w)
