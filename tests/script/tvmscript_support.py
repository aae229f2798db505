"""Shared checks for the TVMScript tests: parse, round trip, verify, run on both targets."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import codegen
from polypad.errors import ParseError
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.script import parse, script


def roundtrip(text: str) -> PrimFunc:
    """``text`` parsed, checked well formed, and checked to survive ``parse(script(f))``."""
    f = parse(textwrap.dedent(text), "kernel.py")
    verify(f)
    printed = script(f)
    again = parse(printed)
    assert_structural_equal(again, f)
    assert script(again) == printed  # printing is a fixed point
    return f


def without_regions(f: PrimFunc) -> PrimFunc:
    """``f`` with the declared ``T.reads``/``T.writes`` taken out of its block headers."""
    import dataclasses

    from polypad.ir import nodes as n
    from polypad.ir.visitor import Rewriter

    class Strip(Rewriter):
        def visit_Expr(self, node):
            return node

        def visit_Block(self, node):
            new = self.generic_visit(node)
            if new.header is None:
                return new
            header = dataclasses.replace(new.header, reads=None, writes=None)
            return n.Block(new.name, new.body, header, span=new.span)

    return Strip().visit(f)


def arguments(f: PrimFunc, seed: int = 0, **scalars) -> list:
    """Random arrays for the buffers (ints in [-1000, 1000)), ``scalars`` for the rest."""
    rng = np.random.default_rng(seed)
    out = []
    for p in f.params:
        if not isinstance(p, Buffer):
            out.append(scalars[p.name])
            continue
        shape = tuple(d if isinstance(d, int) else scalars[d.name] for d in p.shape)
        if p.dtype.startswith("float"):
            out.append(rng.uniform(-1.0, 1.0, shape).astype(p.dtype))
        else:
            out.append(rng.integers(-1000, 1000, shape).astype(p.dtype))
    return out


def run_both(f: PrimFunc, args: list, *, rtol: float = 0.0) -> list:
    """Run the reference executor and the Numba kernel on copies of ``args``.

    Asserts that every buffer ends the same on both; returns the reference's.
    """
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jit = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    codegen.build(f, target="python")(*ref)
    codegen.build(f, target="numba")(*jit)
    for p, want, got in zip(f.params, ref, jit, strict=True):
        if isinstance(p, Buffer):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6 if rtol else 0,
                                       err_msg=p.name)
    return ref


def parse_error(text: str) -> ParseError:
    """The ParseError that parsing ``text`` (as kernel.py) raises."""
    with pytest.raises(ParseError) as info:
        parse(textwrap.dedent(text), "kernel.py")
    return info.value
