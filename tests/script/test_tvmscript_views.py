"""Buffer views: TVM's flat views of parameters and its reuse of one allocation.

A view is IR (a buffer whose memory is another's, at an offset); every
spelling reads to the same view, prints back, runs on both executors, and
the model sees through it: dependences connect a write through a view with
a read of the buffer it views, and the bounds check looks inside both.
"""

from __future__ import annotations

import textwrap

import islpy as isl
import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both

import analyses
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal, structural_equal
from polypad.ir.views import root, through_view
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.script import parse, script

FLAT = '''
@T.prim_func(s_tir=True)
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
    A_1 = A.view(24)
    B_1 = T.decl_buffer((24,), data=B.data)
    for i, j in T.grid(4, 6):
        B_1[i * 6 + j] = A_1[i * 6 + j] * 2.0
'''


def _decls(f):
    return [x.buffer for x in walk(f.body) if isinstance(x, n.DeclBuffer)]


@pytest.mark.parametrize("spelling", [
    "A_1 = A.view(24)",
    "A_1 = T.decl_buffer((24,), data=A.data)",
    'A_1 = T.decl_buffer((24,), "float32", data=A.data, elem_offset=0)',
    "A_1 = T.Buffer((24,), data=A.data)",
    "A_1 = T.Buffer([24], 'float32', A.data)",
])
def test_every_spelling_of_a_view_is_the_same_ir(spelling):
    f = roundtrip(FLAT.replace("A_1 = A.view(24)", spelling))
    a_1, b_1 = _decls(f)
    assert a_1.data is f.params[0] and b_1.data is f.params[1]
    assert a_1.shape == (24,) and a_1.dtype == "float32"
    if "elem_offset" not in spelling:
        assert_structural_equal(f, parse(textwrap.dedent(FLAT)))


def test_views_with_different_offsets_differ():
    base = parse(textwrap.dedent(FLAT.replace("A.view(24)", "T.decl_buffer((20,), data=A.data, "
                                              "elem_offset=4)")).replace("i * 6 + j]", "j]"))
    other = parse(script(base).replace("elem_offset=4", "elem_offset=3"))
    assert not structural_equal(base, other)
    assert_structural_equal(parse(script(base)), base)


def test_a_flat_view_runs_on_both_executors():
    f = roundtrip(FLAT)
    a, b = arguments(f)
    b = run_both(f, [a, b])[1]
    np.testing.assert_array_equal(b, a * 2)


# TVM's storage rewrite: `y` reuses the memory of `x`, declared again as `x_1`.
REUSE = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    x = T.alloc_buffer((8,))
    x_1 = T.decl_buffer((8,), data=x.data)
    for i in range(8):
        x[i] = A[i] + 1.0
    for i in range(8):
        x_1[i] = x[i] * 3.0
    for i in range(8):
        B[i] = x[i]
'''


def test_storage_reuse_shares_memory_on_both_executors():
    f = roundtrip(REUSE)
    a, b = arguments(f)
    b = run_both(f, [a, b])[1]
    np.testing.assert_allclose(b, (a + 1) * 3)  # B reads what was stored through x_1


def test_dependences_see_through_a_view():
    f = parse(textwrap.dedent(REUSE))
    model = extract(f)
    written = [a.buffer for s in model.statements for a in s.accesses if a.kind == "write"]
    assert written[1] is written[0]  # the store to x_1 writes x's memory
    flow = analyses.dependences(f).flow
    # x_1[i] = x[i] * 3 reads x[i] (S0 -> S1), and B[i] = x[i] reads what the store
    # through x_1 wrote (S1 -> S2), not S0's value: one memory, two names.
    want = isl.UnionMap("{ S0[i] -> S1[i] : 0 <= i <= 7; S1[i] -> S2[i] : 0 <= i <= 7 }")
    assert flow.is_equal(want), str(flow)


def test_through_view_maps_to_the_owner():
    f = parse(textwrap.dedent(FLAT))
    a_1 = _decls(f)[0]
    i = n.Var("i")
    owner, (row, col) = through_view(a_1, (i * 6 + 3,))
    assert owner is f.params[0] and root(a_1) is f.params[0]
    assert script(row).strip() == "(i * 6 + 3) // 6" and script(col).strip() == "(i * 6 + 3) % 6"


def test_the_bounds_check_looks_inside_the_view_and_its_memory():
    inside = parse(textwrap.dedent(FLAT))
    assert isinstance(analyses.check_bounds(inside), analyses.Proved)
    past = parse(textwrap.dedent(FLAT.replace("A_1[i * 6 + j]", "A_1[i * 6 + j + 1]")))
    refuted = analyses.check_bounds(past)
    assert isinstance(refuted, analyses.Refuted)
    assert refuted.counterexample.element.buffer == "A_1"
    assert refuted.counterexample.element.indices == (24,)


def test_a_view_past_its_memory_is_refuted_in_the_memory():
    f = parse(textwrap.dedent('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A_1 = T.decl_buffer((8,), data=A.data, elem_offset=12)
        for i in range(8):
            A_1[i] = 0.0
    '''))
    refuted = analyses.check_bounds(f)
    assert isinstance(refuted, analyses.Refuted)
    assert refuted.counterexample.element.buffer == "A"
    assert refuted.counterexample.element.indices == (16,)


def test_value_analyses_read_a_view_as_the_memory_it_shares():
    f = parse(textwrap.dedent(REUSE))
    store = [x for x in walk(f.body) if isinstance(x, n.BufferStore)][1]
    answer = analyses.is_no_op(f, store)
    assert isinstance(answer, analyses.Refuted), answer
    cex = answer.counterexample
    # x_1[i] = x[i] * 3.0 changes x[i], which B's loop reads.
    assert cex.element == analyses.Element("x", (0,))
    assert [i.statement for i in cex.instances] == ["S1", "S2"]
    assert "whose memory the view x_1 shares" in cex.description
    assert cex.values["stored x[i] * 3.0"] == 3 * cex.values["x[0]"]


def test_a_view_of_another_dtype_is_refused():
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A_1 = T.decl_buffer((16,), data=A.data)
        A_2 = T.decl_buffer((16,), "int32", data=A_1.data)
        A_2[0] = 1
    ''')
    assert (err.lineno, err.col) == (5, 32)
    assert err.message == ("T.decl_buffer declares int32 over the float32 memory of 'A': a "
                           "view keeps its buffer's dtype")


def test_elem_offset_reads_the_view_offset():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32", offset_factor=1), B: T.Buffer((4,), "float32")):
        A_1 = T.decl_buffer((4,), data=A.data, elem_offset=8)
        for i in range(4):
            B[i] = A_1[i] + T.Cast("float32", A_1.elem_offset + A.elem_offset)
    ''')
    a, b = arguments(f)
    b = run_both(f, [a, b])[1]
    np.testing.assert_array_equal(b, a[8:12] + 8.0)


def test_a_body_buffer_without_data_parses_and_is_not_modelled():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        B = T.Buffer((4,), "float32")
        for i in range(4):
            B[i] = A[i]
    ''')
    (b,) = _decls(f)
    assert b.data == n.NO_DATA
    answer = analyses.check_bounds(f)
    assert isinstance(answer, analyses.Unknown) and "buffer 'B' at line 4" in answer.reason


def test_rfc0077_a_transformed_buffer_over_a_flat_backing_allocation():
    """RFC 0077's unresolved question, once refused: a (4, 4) buffer declared over the
    data of a 14-element allocation.  A view now: it reads, the 14 elements it touches
    are inside the allocation, and it runs."""
    f = roundtrip('''
    @T.prim_func
    def func(B: T.Buffer[(14,), "float32"]):
        A_backing = T.alloc_buffer(14, "float32")
        A = T.decl_buffer([4, 4], data=A_backing.data)
        for i in range(14):
            B[i] = A[i // 4, i % 4]
    ''')
    assert isinstance(analyses.check_bounds(f), analyses.Proved)
    (b,) = arguments(f)
    np.testing.assert_array_equal(run_both(f, [b])[0], np.zeros(14))
