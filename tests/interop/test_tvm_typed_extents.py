"""Two details of TVM 0.27's text that polypad now keeps: int64 shape extents and the
annotations of a thread-bound loop.

- ``topi.repeat(topi.tile(a, ...))`` makes ``T.Buffer((T.int64(12), T.int64(16)))``:
  the extents are read as ints and the buffer remembers that they were int64
  (``tvm_attrs`` ``shape_dtype``), so that the printed text is TVM's and TVM's
  structural equality holds (the wide corpus test checks it for ``tile_repeat``).
- ``sch.annotate`` on a loop bound to ``threadIdx.x`` prints
  ``T.thread_binding(16, thread="threadIdx.x", annotations={...})``: the hint is
  kept on ``For.annotations`` and printed back, as for every other loop.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import polypad as pp
from polypad.errors import ParseError
from polypad.ir import nodes as n
from polypad.ir.attr_values import AttrMap
from polypad.ir.structural import structural_equal
from polypad.ir.visitor import walk

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytest.importorskip("tvm")

from tvm_corpus_wide import wide_corpus  # noqa: E402


def _text(name: str) -> str:
    return next(text for n_, _, text in wide_corpus() if n_ == name)


def test_an_int64_shape_is_read_as_ints_and_printed_as_tvm_wrote_it():
    text = _text("tile_repeat")
    f = pp.parse(text)
    a, out = f.params
    assert out.shape == (12, 16) and ("shape_dtype", "int64") in out.tvm_attrs
    assert a.shape == (6, 8) and a.tvm_attrs == ()
    printed = pp.script(f)
    assert 'T_repeat: T.Buffer((T.int64(12), T.int64(16)), "float32")' in printed
    assert 'a: T.Buffer((6, 8), "float32")' in printed
    assert structural_equal(pp.parse(printed), f)


def test_the_extent_type_tells_two_functions_apart():
    src = '''
@T.prim_func
def f(A: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid(2, 4):
        A[i, j] = T.float32(1)
'''
    wide = pp.parse(src.format(n="T.int64(2)", m="T.int64(4)"))
    narrow = pp.parse(src.format(n="2", m="4"))
    assert wide.params[0].tvm_attrs == (("shape_dtype", "int64"),)
    assert not structural_equal(wide, narrow)
    # Mixed extents keep no mark: the int32 spelling, as before.
    mixed = pp.parse(src.format(n="T.int64(2)", m="4"))
    assert mixed.params[0].tvm_attrs == ()
    assert structural_equal(mixed, narrow)


def test_a_thread_bound_loop_keeps_its_annotations():
    text = _text("broadcast_bind_annotated")
    (f,) = pp.parse(text).funcs
    (tx,) = [x for x in walk(f.body) if isinstance(x, n.For)
             and x.kind is n.ForKind.THREAD_IDX_X]
    assert tx.annotations == AttrMap((("pragma_unroll_explicit", 1),))
    line = next(x.strip() for x in text.splitlines() if "annotations=" in x)
    assert line.startswith("for ") and line in pp.script(f)


def test_thread_binding_annotations_that_are_no_dict_are_refused_at_their_place():
    text = _text("broadcast_bind_annotated").replace(
        'annotations={"pragma_unroll_explicit": 1}', "annotations=[1]")
    with pytest.raises(ParseError, match="a loop's annotations are a dict") as info:
        pp.parse(text)
    line = text.splitlines()[info.value.lineno - 1]
    assert line[info.value.col - 1:].startswith("[1]")
