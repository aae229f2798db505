"""Shared helpers of the layout-primitive tests (this module holds no tests).

* :func:`load` reads an RFC 0077 example from ``tests/examples/rfc0077``;
* :func:`strip_blocks` drops the blocks our primitives name their new
  stages with, for comparison with RFC examples written without blocks;
* :func:`check_layouts` runs the original and the transformed function on
  the same random data — inputs packed into the new layouts — on the
  reference executor and Numba, and checks the unpacked results agree.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

import codegen
from polypad import parse, verify
from polypad.ir import nodes as ir
from polypad.ir.visitor import Rewriter
from polypad.layout import IndexMap

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rfc0077"
TARGETS = ("python", "numba")
SENTINEL = -7777  # what padding holds when nothing defines it


@functools.cache
def load(name: str):
    """The RFC 0077 example ``name`` (a PrimFunc or IRModule), parsed once."""
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


class _StripBlocks(Rewriter):
    def __init__(self, names):
        self.names = names

    def visit_Block(self, node: ir.Block):
        body = self.visit(node.body)
        keep = self.names is not None and node.name not in self.names
        return ir.Block(node.name, body) if keep else body


def strip_blocks(func, names=None):
    """``func`` without the blocks called ``names`` (all blocks when ``None``)."""
    rewriter = _StripBlocks(None if names is None else set(names))
    if isinstance(func, ir.IRModule):
        return ir.IRModule(func.name, tuple(strip_blocks(f, names) for f in func.funcs))
    return ir.PrimFunc(func.name, func.params, rewriter.visit(func.body), func.attrs)


@functools.cache
def kernel(func: ir.PrimFunc, target: str):
    """``func`` built for ``target`` once per test session (Numba compiles are slow)."""
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    return codegen.build(func, target=target, fastmath=None)


def random_inputs(func: ir.PrimFunc, seed: int = 0) -> dict[str, np.ndarray]:
    """Random arrays for ``func``'s buffers, by name: small ints, or floats in [-1, 1)."""
    rng = np.random.default_rng(seed)
    out = {}
    for p in func.params:
        if p.dtype.startswith("float"):
            out[p.name] = rng.uniform(-1.0, 1.0, p.shape).astype(p.dtype)
        else:
            out[p.name] = rng.integers(-20, 20, p.shape).astype(p.dtype)
    return out


def run(func: ir.PrimFunc, arrays: dict[str, np.ndarray], target: str) -> dict:
    """Copies of ``arrays`` after one run of ``func`` on ``target``."""
    args = {k: v.copy() for k, v in arrays.items()}
    kernel(func, target)(*(args[p.name] for p in func.params))
    return args


def fill(dtype: str, pad):
    """The number that stands for ``pad`` when packing: undefined padding gets a sentinel."""
    if pad is None or not isinstance(pad, (int, float)):
        return np.nan if dtype.startswith("float") else SENTINEL
    return pad


def check_layouts(original: ir.PrimFunc, transformed: ir.PrimFunc, layouts: dict,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """Run both functions on both targets and compare, buffer by buffer.

    ``layouts`` maps a parameter name to ``(index_map, pad)``: its input is
    packed into that layout with ``pad`` in the padding (a sentinel for
    ``None``/undef) and its result unpacked before comparing.  The
    transformed function must pass the IR verifier first.  Returns the
    transformed function's (packed) results on Numba, for padding checks.
    """
    verify(transformed)  # valid IR out
    arrays = random_inputs(original, seed)
    maps = {name: _as_map(m) for name, (m, _) in layouts.items()}
    packed = {name: maps[name].pack(array, fill(array.dtype.name, layouts[name][1]))
              if name in maps else array for name, array in arrays.items()}
    results = {}
    for target in TARGETS:
        want = run(original, arrays, target)
        got = run(transformed, packed, target)
        for name, array in arrays.items():
            value = maps[name].unpack(got[name], array.shape) if name in maps else got[name]
            np.testing.assert_allclose(value, want[name], rtol=1e-6, err_msg=f"{name} {target}")
        results[target] = got
    for name in arrays:  # the padding too: both targets agree on every element
        np.testing.assert_array_equal(results["numba"][name], results["python"][name])
    return results["numba"]


def _as_map(index_map) -> IndexMap:
    return index_map if isinstance(index_map, IndexMap) else IndexMap(index_map)


def padding_mask(index_map, shape) -> np.ndarray:
    """True at the padding of ``index_map`` on ``shape``."""
    return _as_map(index_map).pack(np.zeros(shape, dtype=np.int32), 1).astype(bool)
