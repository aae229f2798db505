"""Helpers for the TVM-capability tests: before/expected pairs checked three ways.

A case is a TVM-style pair of function bodies in polypad script.  The pass
must turn ``before`` into ``expected`` exactly (``assert_structural_equal``),
produce verified IR, and leave every buffer as ``before`` does -- on the
reference executor and on the Numba kernel -- for random inputs that satisfy
the function's ``T.assume`` facts.
"""

from __future__ import annotations

import textwrap

import numpy as np
from inputs_support import make_inputs
from pass_support import checked, run

import codegen
from polypad.ir.nodes import PrimFunc
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse

SEEDS = 4


def prim(params: str, body: str) -> PrimFunc:
    """``def func(<params>): <body>`` parsed (``body`` is dedented)."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return parse(f"@T.prim_func\ndef func({params}):\n{body}\n")


def assert_rewrites(pass_, params: str, before: str, expected: str) -> PrimFunc:
    """``pass_`` turns ``before`` into ``expected``, and both compute the same."""
    f = prim(params, before)
    got = checked(pass_(f))
    assert_structural_equal(got, prim(params, expected))
    assert_same_behaviour(f, got)
    return got


def assert_unchanged(pass_, params: str, body: str) -> None:
    """``pass_`` returns the very function it was given."""
    f = prim(params, body)
    assert pass_(f) is f


def assert_same_behaviour(before: PrimFunc, after: PrimFunc, seeds: int = SEEDS) -> None:
    """Reference executor and Numba kernel of ``after`` agree with ``before``'s reference."""
    reference = codegen.build(before, target="python")
    targets = {"python": codegen.build(after, target="python"), "numba": codegen.build(after)}
    for seed in range(seeds):
        args = make_inputs(before, np.random.default_rng(seed))
        want = run(reference, args)
        for name, kernel in targets.items():
            got = run(kernel, args)
            for k, (a, b) in enumerate(zip(want, got, strict=True)):
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(b, a, err_msg=f"{name}, argument {k}")
