"""Running a function on both targets with the same random inputs."""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir.nodes import Buffer, PrimFunc


def random_args(func: PrimFunc, seed: int = 0, **scalars) -> list:
    """Random arrays for the buffers (ints in [-20, 20)), ``scalars`` for the rest."""
    rng = np.random.default_rng(seed)
    args = []
    for param in func.params:
        if not isinstance(param, Buffer):
            args.append(scalars[param.name])
            continue
        shape = tuple(scalars[s.name] if not isinstance(s, int) else s for s in param.shape)
        if param.dtype.startswith("float"):
            args.append(rng.uniform(-1.0, 1.0, shape).astype(param.dtype))
        else:
            args.append(rng.integers(-20, 20, shape).astype(param.dtype))
    return args


def copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_both(kernel: codegen.Kernel, args: list, *, rtol: float = 0.0) -> list:
    """Run ``kernel`` and the reference executor on copies of ``args``; assert
    every buffer ends equal (within ``rtol`` for floats); return the kernel's."""
    ours, reference = copy(args), copy(args)
    kernel(*ours)
    codegen.build(kernel.func, target="python")(*reference)
    for param, got, want in zip(kernel.func.params, ours, reference, strict=True):
        if isinstance(param, Buffer):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=0, err_msg=param.name)
            assert got.dtype == want.dtype
    return ours
