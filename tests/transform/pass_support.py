"""Helpers for the pass tests: RFC examples, running before/after on the same inputs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np

import codegen
from polypad.ir.nodes import Buffer, IRModule, PrimFunc
from polypad.ir.verify import verify
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name: str, func: str | None = None) -> PrimFunc:
    """The RFC 0077 example ``name`` (file stem), or function ``func`` of its module.

    Parsed afresh on every call: each test gets its own variables and buffers.
    """
    path = EXAMPLES / f"{name}.py"
    parsed = parse(path.read_text(), str(path))
    if isinstance(parsed, IRModule):
        return parsed[func]
    return parsed


def checked(result: PrimFunc) -> PrimFunc:
    """``result`` after the verifier accepted it (valid IR in, valid IR out)."""
    verify(result)
    return result


def random_args(func: PrimFunc, seed: int, *, ints: bool | None = None, **scalars) -> list:
    """Random arrays for ``func``'s buffers, ``scalars`` for its scalar parameters."""
    rng = np.random.default_rng(seed)
    args = []
    for p in func.params:
        if not isinstance(p, Buffer):
            args.append(scalars[p.name])
            continue
        shape = tuple(s if isinstance(s, int) else scalars[s.name] for s in p.shape)
        if p.dtype.startswith("float") and not ints:
            args.append(rng.uniform(-1.0, 1.0, shape).astype(p.dtype))
        else:
            args.append(rng.integers(-5, 5, shape).astype(p.dtype))
    return args


def run(kernel_or_func, args: list) -> list:
    """Run a kernel (or a function, on the reference executor) on copies of ``args``."""
    if isinstance(kernel_or_func, PrimFunc):
        kernel_or_func = codegen.build(kernel_or_func, target="python")
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel_or_func(*copies)
    return copies


def assert_same_results(before, after, args: list, *, rtol: float = 1e-6) -> None:
    """``before`` and ``after`` (functions or kernels) leave every buffer equal."""
    want, got = run(before, args), run(after, args)
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-6, err_msg=f"argument {k}")


def differs(before, after, args: list) -> bool:
    """Whether some buffer ends differently (for showing an incorrect rewrite)."""
    want, got = run(before, args), run(after, args)
    return any(isinstance(a, np.ndarray) and not np.allclose(a, b)
               for a, b in zip(want, got, strict=True))


def _passes() -> dict[str, Callable[[PrimFunc], PrimFunc]]:
    from polypad import transform as T

    return {
        "none": lambda f: f,
        "simplify": T.simplify,
        "remove_no_op": T.remove_no_op,
        "hoist_expression": T.hoist_expression,
        "reduce_loop_extents": T.reduce_loop_extents,
        "hoist+reduce": lambda f: T.reduce_loop_extents(T.hoist_expression(f)),
    }


@functools.cache
def transformed(example: str, pass_name: str, func: str | None = None) -> PrimFunc:
    """RFC example ``example`` after the pass ``pass_name`` (verified), built once."""
    return checked(_passes()[pass_name](load(example, func)))


@functools.cache
def numba_kernel(example: str, pass_name: str, func: str | None = None):
    """The Numba kernel of :func:`transformed`, compiled once per test session."""
    return codegen.build(transformed(example, pass_name, func))
