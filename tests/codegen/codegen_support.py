"""Running a function on both targets with the same random inputs."""

from __future__ import annotations

import ast

import numpy as np

import codegen
from polypad.errors import BoundsCheckError, PolypadError
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


def outcomes(func: PrimFunc, args: list, *, named: bool = False) -> list:
    """What the reference executor and the Numba kernel each did on copies of
    ``args``: the buffers, or the message of a ``BoundsCheckError`` (with ``named``,
    of any ``PolypadError``, prefixed by its class name)."""
    caught = PolypadError if named else BoundsCheckError
    out = []
    for target in ("python", "numba"):
        mine = copy(args)
        try:
            codegen.build(func, target=target)(*mine)
        except caught as err:
            out.append(f"{type(err).__name__}: {err}" if named else str(err))
        else:
            out.append([a.tolist() for a in mine if isinstance(a, np.ndarray)])
    return out


def calls(source: str) -> list[str]:
    """The names of the check helpers the kernel function calls, one per call."""
    tree = ast.parse(source)
    kernel = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "kernel")
    return [node.func.id for node in ast.walk(kernel)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id.startswith(("_pp_index_", "_pp_inside_"))]
