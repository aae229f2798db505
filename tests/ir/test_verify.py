"""The verifier finds each kind of malformed IR, and passes good IR."""

import pytest

from polypad.errors import VerifyError
from polypad.ir import (
    Add,
    Buffer,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimFunc,
    Var,
    const,
    intrinsics,
)
from polypad.ir.verify import problems, verify

A = Buffer("A", (4, 4), "float32")


def _func(body, params=(A,)):
    return PrimFunc("f", params, body)


def _loop(var, body, extent=4):
    return For(var, const(0), const(extent), ForKind.SERIAL, body)


def test_good_function_passes():
    i, j = Var("i"), Var("j")
    f = _func(_loop(i, _loop(j, BufferStore(A, A[i, j] * 2.0, (i, j)))))
    assert problems(f) == []
    verify(f)


def test_undefined_variable():
    i, j = Var("i"), Var("j")
    f = _func(_loop(i, BufferStore(A, const(0.0), (i, j))))
    assert problems(f) == ["variable 'j' is used before it is defined"]
    with pytest.raises(VerifyError, match="'j' is used before"):
        verify(f)


def test_index_rank():
    i = Var("i")
    (problem,) = problems(_func(_loop(i, BufferStore(A, const(0.0), (i,)))))
    assert "A has 2 axes but is indexed with 1" in problem


def test_undef_in_an_index():
    i = Var("i")
    B = Buffer("B", (4,), "int32")
    bad_index = intrinsics.undef("int32")
    f = _func(_loop(i, BufferStore(B, const(0), (bad_index,))), params=(B,))
    assert any("T.undef() may not appear in an index of B" in p for p in problems(f))


def test_dtype_of_stored_value():
    i = Var("i")
    B = Buffer("B", (4,), "int32")
    f = _func(_loop(i, BufferStore(B, const(1.5), (i,))), params=(B,))
    assert any("store to B (int32) of a float32 value" in p for p in problems(f))


def test_mixed_operand_dtypes():
    i = Var("i")
    B = Buffer("B", (4,), "float32")
    f = _func(_loop(i, BufferStore(B, Add(B[i], IntImm(1)), (i,))), params=(B,))
    assert any("operands of Add have dtypes float32 and int32" in p for p in problems(f))


def test_condition_must_be_bool():
    i = Var("i")
    f = _func(_loop(i, IfThenElse(i + 1, BufferStore(A, const(0.0), (i, i)))))
    assert any("if condition must be bool" in p for p in problems(f))


def test_unknown_buffer_and_symbolic_extent():
    n = Var("n")
    C = Buffer("C", (n,), "float32")
    i = Var("i")
    f = _func(_loop(i, BufferStore(C, const(0.0), (i,))))
    found = problems(f)
    assert any("buffer 'C' is neither a parameter nor allocated" in p for p in found)
    g = PrimFunc("g", (C,), _loop(i, BufferStore(C, const(0.0), (i,))))
    assert any("extent 'n' of buffer 'C' is not a scalar parameter" in p for p in problems(g))
    ok = PrimFunc("h", (C, n), _loop(i, BufferStore(C, const(0.0), (i,))))
    assert problems(ok) == []


def test_assume_takes_a_condition():
    i = Var("i")
    f = _func(_loop(i, Evaluate(intrinsics.assume(i < 3))))
    assert problems(f) == []


def test_rebinding_inside_own_scope():
    i = Var("i")
    f = _func(_loop(i, _loop(i, BufferStore(A, const(0.0), (i, i)))))
    assert any("bound again inside its own scope" in p for p in problems(f))
