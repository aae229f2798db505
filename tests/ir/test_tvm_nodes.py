"""The IR of TVM's lowered text: views, vectors and opaque statements, built by hand.

The verifier checks each, structural equality maps a view's memory owner
like any buffer, and a rewriter that changes nothing returns the same object.
"""

from __future__ import annotations

import pytest

from polypad.errors import VerifyError
from polypad.ir import nodes as n
from polypad.ir.opaque import first_opaque
from polypad.ir.structural import structural_equal
from polypad.ir.verify import problems, verify
from polypad.ir.visitor import Rewriter


def _view_func(offset: int = 0, *, scope_ok: bool = True, dtype: str = "float32"):
    A = n.Buffer("A", (4, 4))
    base = A if scope_ok else n.Buffer("X", (16,))
    V = n.Buffer("V", (16,), dtype, data=base, elem_offset=n.IntImm(offset))
    i = n.Var("i")
    body = n.For(i, n.IntImm(0), n.IntImm(16), n.ForKind.SERIAL,
                 n.BufferStore(V, n.FloatImm(0.0, dtype), (i,)))
    return n.PrimFunc("f", (A,), n.DeclBuffer(V, body))


def test_a_view_is_well_formed_over_a_buffer_in_scope():
    verify(_view_func())
    assert problems(_view_func(scope_ok=False)) == [
        "view 'V' is of buffer 'X', which is not in scope"]
    assert problems(_view_func(dtype="int32")) == [
        "view 'V' is int32 over the float32 buffer 'A'"]


def test_structural_equality_of_views():
    assert structural_equal(_view_func(), _view_func())
    assert not structural_equal(_view_func(0), _view_func(1))
    f = _view_func()
    assert Rewriter().visit(f) is f


def test_vectors_are_well_formed_with_one_lane_count():
    A = n.Buffer("A", (8,))
    ramp4 = n.Ramp(n.IntImm(0), n.IntImm(1), 4)
    ramp2 = n.Ramp(n.IntImm(0), n.IntImm(1), 2)
    B = n.Buffer("B", (8, 8))
    good = n.BufferStore(A, n.BufferLoad(A, (ramp4,)), (ramp4,))
    verify(n.PrimFunc("f", (A,), good))
    mixed = n.BufferStore(B, n.Broadcast(n.FloatImm(0.0), 4), (ramp4, ramp2))
    with pytest.raises(VerifyError, match="different lane counts"):
        verify(n.PrimFunc("f", (B,), mixed))


def test_the_first_opaque_construct_in_program_order():
    A = n.Buffer("A", (4,))
    call = n.Call("tvm_struct_get", (n.Var("p", "handle"), n.IntImm(0), n.IntImm(13),
                                     n.StringImm("int32")), "int32")
    span = n.Span("k.py", 7, 4)
    body = n.SeqStmt((n.BufferStore(A, n.FloatImm(0.0), (n.IntImm(0),)),
                      n.Evaluate(call, span=span),
                      n.Assert(n.BoolImm(True), "", span=n.Span("k.py", 9, 4))))
    site = first_opaque(n.PrimFunc("f", (A,), body))
    assert str(site) == ("T.tvm_struct_get at line 7 is an opaque TVM intrinsic: its effect "
                         "on memory is unknown to polypad")
    assert first_opaque(n.PrimFunc("f", (A,), body.stmts[0])) is None
