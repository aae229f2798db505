"""Shared by the integer-width tests (wrap-around, loop dtypes): run a function and
its rewrite for several values of their scalar parameters, on the reference
executor and on Numba, and compare every buffer they leave."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import codegen
from polypad.ir import nodes as n
from polypad.script import script

_KERNELS: dict = {}


def kernels(func: n.PrimFunc, targets=("python", "numba")) -> list:
    """``func`` built for each of ``targets``, once per process (by its script)."""
    key = (script(func), targets)
    if key not in _KERNELS:
        _KERNELS[key] = [codegen.build(func, target=t) for t in targets]
    return _KERNELS[key]


def small_integers(func: n.PrimFunc) -> list[np.ndarray]:
    """Seeded integers from -9 to 8 in each buffer's own dtype."""
    rng = np.random.default_rng(0)
    return [rng.integers(-9, 9, p.shape).astype(p.dtype) for p in func.params
            if isinstance(p, n.Buffer)]


def assert_runs_the_same(original: n.PrimFunc, rewritten: n.PrimFunc, values=((),),
                         targets=("python", "numba"),
                         inputs: Callable[[n.PrimFunc], list] = small_integers) -> None:
    """For each tuple of scalar arguments in ``values``, ``rewritten`` leaves every buffer
    as ``original`` does on the reference executor, on each of ``targets``."""
    (want_kernel,) = kernels(original, ("python",))
    for scalars in values:
        want = inputs(original)
        want_kernel(*scalars, *want)
        for target, kernel in zip(targets, kernels(rewritten, targets), strict=True):
            got = inputs(original)
            kernel(*scalars, *got)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"{target}, scalars {scalars}")
