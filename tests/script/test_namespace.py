"""``T`` as a Python object, and the ``@prim_func`` / ``@ir_module`` decorators."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from polypad.ir import intrinsics
from polypad.ir.nodes import (
    And,
    Buffer,
    BufferStore,
    Call,
    Cast,
    Eq,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    IRModule,
    Max,
    Min,
    Ne,
    Not,
    Or,
    PrimFunc,
    Select,
    Var,
)
from polypad.ir.structural import assert_structural_equal
from polypad.script import I, T, ir_module, parse, prim_func, script


def test_buffer_builders():
    n = Var("n")
    A = T.Buffer((4, n), "int32", name="A", scope="local", axis_separators=[1])
    assert isinstance(A, Buffer)
    assert (A.name, A.shape, A.dtype, A.scope, A.axis_separators) == (
        "A", (4, n), "int32", "local", (1,))
    assert T.Buffer[14, "float32"].shape == (14,)
    assert T.Buffer[(4, 4), "int64"].dtype == "int64"
    assert T.Buffer(IntImm(3)).shape == (3,)
    with pytest.raises(TypeError):
        T.Buffer((1.5,))


def test_annotation_markers():
    assert repr(T.handle) == "T.handle" and repr(T.int32) == "T.int32"
    assert repr(T.Buffer) == "T.Buffer" and repr(T) == "T"


def test_constant_and_cast_builders():
    assert T.int32(5) == IntImm(5, "int32")
    assert T.float32(0) == FloatImm(0.0, "float32")
    assert T.int64(-2) == IntImm(-2, "int64")
    i = Var("i")
    assert T.float32(i) == Cast("float32", i)
    assert T.Cast("int32", i) == Cast("int32", i)  # a node even when nothing changes
    assert T.cast(i, "float64") == Cast("float64", i)
    assert T.float64("inf").value == float("inf")


def test_expression_builders():
    i, j = Var("i"), Var("j")
    x = Var("x", "float32")
    assert T.min(i, 3) == Min(i, IntImm(3)) and T.max(i, j) == Max(i, j)
    assert T.floordiv(i, 4) == FloorDiv(i, IntImm(4))
    assert T.floormod(i, 4) == FloorMod(i, IntImm(4))
    assert T.eq(i, j) == Eq(i, j) and T.ne(i, 1) == Ne(i, IntImm(1))
    c1, c2, c3 = i < 1, j < 2, i < j
    assert T.And(c1, c2, c3) == And(And(c1, c2), c3)
    assert T.Or(c1, c2) == Or(c1, c2) and T.Not(c1) == Not(c1)
    assert T.if_then_else(c1, x, 0) == Select(c1, x, FloatImm(0.0))
    assert T.assume(c1) == Call("assume", (c1,), "bool")
    assert T.likely(c1) == Call("likely", (c1,), "bool")
    assert T.undef() == Call("undef", (), "float32")
    assert T.undef(dtype="int32") == Call("undef", (), "int32")
    assert T.exp(x) == Call("exp", (x,), "float32")
    assert T.pow(x, 2.0) == intrinsics.math("pow", x, 2.0)
    assert T.sqrt(i) == Call("sqrt", (Cast("float32", i),), "float32")
    assert T.abs(i) == Call("abs", (i,), "int32")  # abs keeps integer dtypes
    t = Var("t")
    assert T.let(t, i + 1, t * 2).body == t * 2


def test_prim_func_decorator_parses_without_calling():
    # Running the body would raise: the Python T object has no `serial`.
    assert not hasattr(T, "serial")

    @prim_func
    def double(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
        for i in T.serial(14):
            B[i] = 2.0 * A[i]

    assert isinstance(double, PrimFunc) and double.name == "double"


def test_prim_func_decorator_result():
    @T.prim_func
    def double(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
        for i in T.serial(14):
            B[i] = 2.0 * A[i]

    A, B = double.params
    loop = double.body
    assert isinstance(loop, For) and loop.extent == IntImm(14)
    assert loop.body == BufferStore(B, FloatImm(2.0) * A[loop.var], (loop.var,))
    assert loop.span is not None and loop.span.filename == __file__
    assert_structural_equal(parse(script(double)), double)


def test_ir_module_decorator():
    @I.ir_module
    class Pipeline:
        @T.prim_func
        def producer(A: T.Buffer((14,), "int32")):
            for i in T.serial(14):
                A[i] = 1000 + i

        @T.prim_func
        def consumer(A: T.Buffer((14,), "int32"), B: T.Buffer((1,), "int32")):
            B[0] = 0
            for i in T.serial(14):
                B[0] = B[0] + A[i]

    assert isinstance(Pipeline, IRModule) and Pipeline.name == "Pipeline"
    assert [f.name for f in Pipeline.funcs] == ["producer", "consumer"]
    assert ir_module is I.ir_module


EXAMPLES = sorted((Path(__file__).parents[1] / "examples" / "rfc0077").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_decorators_agree_with_parse(path):
    # Loaded by hand (not in sys.modules): @ir_module must still find its class.
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parsed = parse(path.read_text(), str(path))
    name = parsed.name
    assert_structural_equal(getattr(module, name), parsed)
