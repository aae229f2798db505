"""Structural equality maps bound variables and buffers, nothing else."""

import pytest

from polypad.ir import Allocate, Buffer, BufferStore, For, ForKind, LetStmt, PrimFunc, Var, const
from polypad.ir.structural import assert_structural_equal, first_mismatch, structural_equal


def _func(name_i="i", value=2.0, A=None, n=None):
    A = A or Buffer("A", (14,), "float32")
    i = Var(name_i)
    body = For(i, const(0), const(14), ForKind.SERIAL, BufferStore(A, value * A[i], (i,)))
    return PrimFunc("f", (A,), body)


def test_bound_variables_are_mapped():
    assert structural_equal(_func("i"), _func("k"))


def test_parameter_buffers_are_mapped_by_position():
    assert structural_equal(_func(A=Buffer("A", (14,), "float32")),
                            _func(A=Buffer("A", (14,), "float32")))


def test_buffer_shape_dtype_and_name_matter():
    f = _func()
    assert not structural_equal(f, _func(A=Buffer("A", (16,), "float32")))
    assert not structural_equal(f, _func(A=Buffer("A", (14,), "float64")))
    assert not structural_equal(f, _func(A=Buffer("B", (14,), "float32")))


def test_constants_matter_and_the_mismatch_is_located():
    mismatch = first_mismatch(_func(value=2.0), _func(value=3.0))
    assert mismatch.path == "PrimFunc.body.body.value.a.value"
    assert (mismatch.lhs, mismatch.rhs) == (2.0, 3.0)


def test_free_variables_need_identity_unless_mapped():
    i, j = Var("i"), Var("j")
    assert not structural_equal(i + 1, j + 1)
    assert structural_equal(i + 1, j + 1, map_free_vars=True)
    # one free var cannot map onto two
    assert not structural_equal(i + i, i + j, map_free_vars=True)


def test_bindings_must_be_used_consistently():
    A = Buffer("A", (4, 4), "int32")
    i, j, x, y = Var("i"), Var("j"), Var("x"), Var("y")

    def nest(a, b, first, second):
        store = BufferStore(A, const(0), (first, second))
        inner = For(b, const(0), const(4), ForKind.SERIAL, store)
        return PrimFunc("f", (A,), For(a, const(0), const(4), ForKind.SERIAL, inner))

    assert structural_equal(nest(i, j, i, j), nest(x, y, x, y))
    assert not structural_equal(nest(i, j, i, j), nest(x, y, y, x))


def test_shared_subtree_under_different_binders_is_compared_through_the_map():
    A = Buffer("A", (4,), "int32")
    i, k = Var("i"), Var("k")
    store = BufferStore(A, const(0), (i,))
    lhs = For(i, const(0), const(4), ForKind.SERIAL, store)
    rhs = For(k, const(0), const(4), ForKind.SERIAL, store)  # uses i, bound nowhere
    assert not structural_equal(lhs, rhs)


def test_let_and_allocate_bind():
    def build():
        x = Var("x")
        T = Buffer("T", (4,), "int32", scope="local")
        body = Allocate(T, BufferStore(T, x + 1, (const(0),)))
        return LetStmt(x, const(3), body)

    assert structural_equal(build(), build())


def test_loop_kind_matters():
    A = Buffer("A", (4,), "int32")
    i = Var("i")
    a = For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, i, (i,)))
    b = For(i, const(0), const(4), ForKind.PARALLEL, BufferStore(A, i, (i,)))
    assert not structural_equal(a, b)


def test_assert_structural_equal_reports_the_path():
    with pytest.raises(AssertionError, match=r"mismatch at PrimFunc\.body\.body\.value"):
        assert_structural_equal(_func(value=2.0), _func(value=3.0))
