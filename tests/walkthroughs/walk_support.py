"""Helpers for the RFC 0077 walkthroughs: each later step is *derived* by polypad's
primitives and passes from the RFC's "before" text, then compared with the RFC's own form
and run.

* :func:`rfc` reads an example under tests/examples/rfc0077/, optionally re-spelling a
  condition the way polypad writes it (each re-spelling is checked with ISL by
  :func:`assert_same_set` in the test that makes it);
* :func:`assert_same_form` compares two functions structurally after dropping ``T.block``
  wrappers, which the RFC leaves out ("For simplicity, these examples do not show the
  T.block grouping") while ``transform_layout`` puts its pad-value stage in a block;
* :func:`assert_runs_like` runs a derived step and the RFC's form of it on the same
  inputs (reference executor and Numba), :func:`assert_matches_original` runs a derived
  step against the untransformed function through the layouts (numpy packing).

Numba kernels are built once per distinct function text (:func:`kernel`), so steps that
print alike share one compiled kernel across tests.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from inputs_support import make_inputs

import codegen
import polypad as pp
from polypad.ir import nodes as n
from polypad.ir.visitor import Rewriter, walk
from polypad.layout import IndexMap, pack, unpack
from polypad.model import to_set

EXAMPLES = Path(__file__).parents[1] / "examples" / "rfc0077"


# ---------------------------------------------------------------- the RFC's forms


def rfc(stem: str, name: str | None = None, respell: Mapping[str, str] | None = None):
    """The RFC example ``stem`` (function ``name`` of a module), with each text in
    ``respell`` replaced.  Every text must occur, so a stale re-spelling fails loudly."""
    path = EXAMPLES / f"{stem}.py"
    text = path.read_text()
    for old, new in (respell or {}).items():
        assert old in text, f"{old!r} is not in {path.name}"
        text = text.replace(old, new)
    parsed = pp.parse(text, filename=str(path))
    return parsed[name] if name is not None else parsed


class _Unblock(Rewriter):
    def visit_Block(self, node: n.Block):
        return self.visit(node.body)

    def visit_SeqStmt(self, node: n.SeqStmt):
        flat: list[n.Stmt] = []
        for s in node.stmts:
            s = self.visit(s)
            flat.extend(s.stmts if isinstance(s, n.SeqStmt) else (s,))
        return n.SeqStmt(tuple(flat), span=node.span)


def unblock(f: n.PrimFunc) -> n.PrimFunc:
    """``f`` without its ``T.block`` wrappers (their bodies stay where they were)."""
    return _Unblock().visit(f)


def assert_same_form(got: n.PrimFunc, want: n.PrimFunc) -> None:
    """``got`` is well formed and, blocks aside, structurally ``want``."""
    pp.verify(got)
    pp.assert_structural_equal(unblock(got), unblock(want))


def ifs(f: n.PrimFunc) -> list[n.IfThenElse]:
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def block_names(f: n.PrimFunc) -> list[str]:
    return [x.name for x in walk(f.body) if isinstance(x, n.Block)]


def assert_same_set(a: str, b: str, extents: Mapping[str, int]) -> None:
    """Conditions ``a`` and ``b`` (text over the loop variables ``extents`` names) hold
    at the same points of the loop box: they differ only in spelling (checked with ISL)."""
    names = ", ".join(extents)
    box = " and ".join(f"0 <= {v} < {e}" for v, e in extents.items())
    f = pp.parse(f'''
@T.prim_func
def f(X: T.Buffer((1,), "int32")):
    for {names} in T.grid({", ".join(map(str, extents.values()))}):
        if ({a}) and ({box}):
            X[0] = 0
        if ({b}) and ({box}):
            X[0] = 1
''')
    loops = [x.var for x in walk(f.body) if isinstance(x, n.For)]
    first, second = (to_set(s.condition, loops) for s in ifs(f))
    assert first.is_equal(second), f"{a!r} and {b!r} differ: {first} vs {second}"


# ---------------------------------------------------------------- running


@functools.cache
def _kernel(text: str, target: str):
    return codegen.build(pp.parse(text), target=target)


def kernel(f: n.PrimFunc, target: str = "numba"):
    """The kernel of ``f`` for ``target``, built once per distinct function text."""
    return _kernel(pp.script(f), target)


def run(f: n.PrimFunc, args: Sequence, target: str = "python") -> list:
    """``f`` run on copies of ``args``; returns the copies (buffers updated in place)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(f, target)(*copies)
    return copies


def _close(got, want, what: str) -> None:
    if isinstance(want, np.ndarray) and want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def assert_runs_like(got: n.PrimFunc, want: n.PrimFunc, *, seeds: Sequence[int] = (0, 1),
                     targets: Sequence[str] = ("python",),
                     logical: Mapping[str, np.ndarray] | None = None) -> None:
    """``got`` (on every target) leaves every buffer as ``want`` (reference executor) does,
    on random inputs that honour ``got``'s ``T.assume`` facts.

    ``logical`` masks buffers by name: only elements where the mask is true are compared
    (padding that a store of ``T.undef()`` leaves arbitrary).
    """
    logical = logical or {}
    for seed in seeds:
        args = make_inputs(got, np.random.default_rng(seed))
        expected = run(want, args)
        for target in targets:
            for p, g, w in zip(got.params, run(got, args, target), expected, strict=True):
                mask = logical.get(getattr(p, "name", None))
                if mask is not None:
                    g, w = g[mask], w[mask]
                _close(g, w, f"{p.name} ({target}, seed {seed})")


UNDEF = "undef"


class Layout:
    """How a buffer of the original function sits in a derived one: ``index_map`` and
    ``pad``: a number (the padding holds it), :data:`UNDEF` (anything, and the function
    may change it) or ``None`` (anything, and the function must leave it alone)."""

    def __init__(self, index_map: Callable | IndexMap, pad=None):
        self.index_map = index_map if isinstance(index_map, IndexMap) else IndexMap(index_map)
        self.pad = pad

    def logical_mask(self, shape) -> np.ndarray:
        return pack(self.index_map, np.ones(shape, np.int8), 0).astype(bool)


def assert_matches_original(original: n.PrimFunc, derived: n.PrimFunc,
                            layouts: Mapping[str, Layout], *, seeds: Sequence[int] = (0,),
                            targets: Sequence[str] = ("python",)) -> None:
    """``derived`` computes what ``original`` does, through ``layouts``.

    Logical inputs are drawn for ``original``; each is packed into ``derived``'s layout
    with its pad value, or with arbitrary padding where there is none.  After the run,
    every buffer's logical elements must agree; where a layout has a pad value the padding
    must hold it (the producer wrote it, or the input kept it), and where it has none
    (``None``) the padding must be untouched.
    """
    for seed in seeds:
        rng = np.random.default_rng(seed)
        args = make_inputs(original, rng)
        packed = []
        for p, a in zip(original.params, args, strict=True):
            layout = layouts.get(getattr(p, "name", None))
            if layout is None:
                packed.append(a)
                continue
            number = layout.pad not in (None, UNDEF)
            packed.append(pack(layout.index_map, a, layout.pad if number else 7))
        expected = run(original, args)
        for target in targets:
            outs = run(derived, packed, target)
            for p, got, want, before in zip(original.params, outs, expected, packed,
                                            strict=True):
                layout = layouts.get(getattr(p, "name", None))
                what = f"{p.name} ({target}, seed {seed})"
                if layout is None:
                    _close(got, want, what)
                    continue
                _close(unpack(layout.index_map, got, want.shape), want, what)
                if layout.pad == UNDEF:
                    continue
                padding = ~layout.logical_mask(want.shape)
                _close(got[padding], before[padding], f"padding of {what}")
