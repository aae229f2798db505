"""The IR grammar: immutability, identity, exact equality, operators."""

import dataclasses

import pytest

from polypad.errors import PolypadError
from polypad.ir import (
    Add,
    Buffer,
    BufferLoad,
    Cast,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Lt,
    Mul,
    Sub,
    Var,
    const,
    intrinsics,
)


def test_nodes_are_frozen_and_slotted():
    i = Var("i")
    node = i + 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.a = i
    assert not hasattr(node, "__dict__")


def test_vars_and_buffers_are_identities():
    assert Var("i") != Var("i")
    i = Var("i")
    assert i == i and hash(i) == hash(i)
    assert Buffer("A", (4,)) != Buffer("A", (4,))


def test_exact_equality_compares_structure_and_identity():
    i, j = Var("i"), Var("j")
    assert i // 4 == i // 4
    assert hash(i % 4) == hash(i % 4)
    assert i // 4 != j // 4
    assert FloorDiv(i, const(4)) != FloorMod(i, const(4))  # same fields, other class


def test_operators_build_floor_division_and_modulo():
    i = Var("i")
    assert i // 4 == FloorDiv(i, IntImm(4))
    assert i % 4 == FloorMod(i, IntImm(4))
    assert 14 - i == Sub(IntImm(14), i)
    assert (i < 3) == Lt(i, IntImm(3))
    assert i.equal(3).dtype == "bool"


def test_python_numbers_take_the_expression_dtype():
    A = Buffer("A", (14,), "float32")
    i = Var("i")
    e = 2 * A[i]
    assert e == Mul(FloatImm(2.0, "float32"), BufferLoad(A, (i,)))
    assert e.dtype == "float32"
    k = Var("k", "int64")
    assert (k + 1).b == IntImm(1, "int64")


def test_mixed_dtypes_are_promoted_with_casts():
    i = Var("i")
    x = Var("x", "float32")
    e = i + x
    assert e == Add(Cast("float32", i), x)
    assert (i + 0.5).dtype == "float32"


def test_comparisons_have_no_truth_value():
    i = Var("i")
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(i < 3)


def test_buffer_getitem_builds_loads():
    A = Buffer("A", (4, 4), "int32")
    io, ii = Var("io"), Var("ii")
    assert A[io, ii] == BufferLoad(A, (io, ii))
    assert A[0, ii].indices[0] == IntImm(0)


def test_intrinsics():
    i = Var("i")
    assume = intrinsics.assume(i < 14)
    assert (assume.op, assume.dtype) == ("assume", "bool")
    assert intrinsics.undef("int32").dtype == "int32"
    assert intrinsics.math("exp", Var("x", "float64")).dtype == "float64"
    with pytest.raises(TypeError):
        intrinsics.math("nosuch", 1.0)


def test_float_constant_for_an_int_is_refused():
    with pytest.raises(TypeError):
        const(0.5, "int32")


def test_error_hierarchy_has_one_root():
    from polypad import errors

    for name in ("ParseError", "DTypeError", "VerifyError", "NotAffineError",
                 "NonInjectiveError", "IllegalTransformError", "BuildError"):
        assert issubclass(getattr(errors, name), PolypadError)
