"""Each piece of script syntax parses to exactly the IR it stands for."""

from __future__ import annotations

import textwrap

import pytest

from polypad.ir import intrinsics
from polypad.ir import operators as ops
from polypad.ir.nodes import (
    Allocate,
    And,
    Block,
    BoolImm,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Eq,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    Le,
    Let,
    LetStmt,
    Lt,
    Max,
    Min,
    Ne,
    Not,
    Or,
    PrimFunc,
    Select,
    SeqStmt,
    Span,
    Sub,
    Var,
)
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse


def parse_text(text: str, filename: str = "<string>"):
    return parse(textwrap.dedent(text), filename)


def expr_of(expr: str, params: str = "i: T.int32, j: T.int32, k: T.int64, x: T.float32"):
    """Parse ``expr`` as a statement of a function with scalar ``params``."""
    f = parse(f"@T.prim_func\ndef f({params}):\n    {expr}\n")
    assert isinstance(f.body, Evaluate)
    return f.body.value, {p.name: p for p in f.params}


def loop(var, extent, body, kind=ForKind.SERIAL, lo=0):
    return For(var, IntImm(lo, var.dtype), ops.as_expr(extent, var.dtype), kind, body)


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize("annotation", [
    'T.Buffer((14,), "float32")', 'T.Buffer[(14,), "float32"]', 'T.Buffer[14, "float32"]',
    'T.Buffer(14, "float32")', 'T.Buffer((14,), dtype="float32")', "T.Buffer(shape=[14])",
    "T.Buffer[14]",
])
def test_buffer_parameter_spellings(annotation):
    f = parse(f"@T.prim_func\ndef f(A: {annotation}):\n    A[0] = 1.0\n")
    (A,) = f.params
    assert (A.name, A.shape, A.dtype, A.scope, A.axis_separators) == (
        "A", (14,), "float32", "global", ())


def test_buffer_options_and_scalar_shapes():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((n, 4), "int64", scope="local", axis_separators=[1]), n: T.int32):
            pass
    """)
    A, n = f.params
    assert isinstance(n, Var) and (n.name, n.dtype) == ("n", "int32")
    assert A.shape[0] is n and A.shape[1] == 4
    assert (A.dtype, A.scope, A.axis_separators) == ("int64", "local", (1,))
    assert f.body == SeqStmt(())


def test_match_buffer_replaces_the_handle_in_order():
    f = parse_text("""
        @T.prim_func
        def row_summation(a: T.handle, n: T.int32, b: T.handle) -> None:
            A = T.match_buffer(a, (16, n), "float32")
            B = T.match_buffer(b, shape=(16,), dtype="int32")
            B[0] = 0
    """)
    A, n, B = f.params
    assert (A.name, A.shape, A.dtype) == ("A", (16, n), "float32")
    assert (B.name, B.shape, B.dtype) == ("B", (16,), "int32")
    assert f.body == BufferStore(B, IntImm(0), (IntImm(0),))


def test_match_buffer_without_handle_takes_the_next_one():
    # RFC 0077 writes T.match_buffer(shape=..., dtype=...) with no handle argument.
    f = parse_text("""
        @T.prim_func
        def f(a: T.handle, b: T.handle):
            A = T.match_buffer(shape=(16, 14), dtype="float32")
            B = T.match_buffer(shape=(16,), dtype="float32")
            B[0] = A[0, 0]
    """)
    assert [(p.name, p.shape) for p in f.params] == [("A", (16, 14)), ("B", (16,))]


def test_func_attr():
    f = parse_text("""
        @T.prim_func
        def f():
            T.func_attr({"global_symbol": "main", "noalias": True})
    """)
    assert f.attrs == (("global_symbol", "main"), ("noalias", True))


# ---------------------------------------------------------------- statements


def test_loops_of_every_kind():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), n: T.int64):
            for i in T.serial(8):
                for j in range(2, 5):
                    for k in T.parallel(n):
                        for v in T.vectorized(0, 4):
                            for u in T.unroll(3):
                                A[i] = 0.0
    """)
    A, n = f.params
    i, j, k, v, u = (Var(x) for x in "ijkvu")
    k = Var("k", "int64")
    store = BufferStore(A, FloatImm(0.0), (i,))
    expected = loop(i, 8, For(j, IntImm(2), IntImm(3), ForKind.SERIAL, For(
        k, IntImm(0, "int64"), n, ForKind.PARALLEL,
        loop(v, 4, loop(u, 3, store, ForKind.UNROLL), ForKind.VECTORIZED))))
    assert_structural_equal(f, PrimFunc("f", (A, n), expected))


def test_symbolic_loop_bounds():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), n: T.int32):
            for i in T.serial(1, n):
                for j in T.serial(1, 1 + n):
                    A[i] = 0.0
    """)
    outer = f.body
    assert outer.min == IntImm(1) and outer.extent == Sub(f.params[1], IntImm(1))
    assert outer.body.extent is f.params[1]  # `lo + e` gives back e


def test_grid_is_nested_serial_loops():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((4, 8), "int32")):
            for io, ii in T.grid(4, 8):
                A[io, ii] = 4 * io + ii
    """)
    (A,) = f.params
    io, ii = Var("io"), Var("ii")
    body = loop(io, 4, loop(ii, 8, BufferStore(A, IntImm(4) * io + ii, (io, ii))))
    assert_structural_equal(f, PrimFunc("f", (A,), body))


def test_alloc_buffer_wraps_the_rest_of_the_list():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer(14, "float32"), B: T.Buffer(14, "float32")):
            C = T.alloc_buffer(14, "float32", scope="local")
            for i in T.serial(14):
                C[i] = A[i]
            B[0] = C[0]
    """)
    A, B = f.params
    C = Buffer("C", (14,), "float32", scope="local")
    i = Var("i")
    body = Allocate(C, SeqStmt((loop(i, 14, BufferStore(C, A[i], (i,))),
                                BufferStore(B, C[0], (IntImm(0),)))))
    assert_structural_equal(f, PrimFunc("f", (A, B), body))


def test_let_binding_and_shadowing():
    f = parse_text("""
        @T.prim_func
        def f(B: T.Buffer((18,), "int32")):
            for Bi in T.serial(18):
                Ai = Bi - 1 + 2
                Ai = Ai * 2
                B[Bi] = Ai
    """)
    (B,) = f.params
    Bi, a1, a2 = Var("Bi"), Var("Ai"), Var("Ai")
    body = loop(Bi, 18, LetStmt(a1, Bi - 1 + 2, LetStmt(a2, a1 * 2, BufferStore(B, a2, (Bi,)))))
    assert_structural_equal(f, PrimFunc("f", (B,), body))
    first, second = f.body.body, f.body.body.body
    assert first.var is not second.var and second.value.a is first.var


def test_block_if_elif_else_and_pass():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with T.block("compute"):
                for i in T.serial(4):
                    if i == 0:
                        A[i] = 1.0
                    elif i < 2:
                        pass
                    else:
                        A[i] = 2.0
    """)
    (A,) = f.params
    i = Var("i")
    branch = IfThenElse(Eq(i, IntImm(0)), BufferStore(A, FloatImm(1.0), (i,)),
                        IfThenElse(Lt(i, IntImm(2)), SeqStmt(()),
                                   BufferStore(A, FloatImm(2.0), (i,))))
    assert_structural_equal(f, PrimFunc("f", (A,), Block("compute", loop(i, 4, branch))))


def test_stored_constants_take_the_buffer_dtype():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((2,), "int32"), B: T.Buffer((2,), "float64")):
            A[0] = 0.0
            B[0] = 0
            B[1] = -1
            A[1] = T.undef()
    """)
    a0, b0, b1, a1 = f.body.stmts
    assert a0.value == IntImm(0, "int32")
    assert b0.value == FloatImm(0.0, "float64") and b1.value == FloatImm(-1.0, "float64")
    assert a1.value == Call("undef", (), "int32")


def test_augmented_assignment_of_an_element():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((2,), "float32")):
            A[0] += 1
    """)
    (A,) = f.params
    assert f.body == BufferStore(A, A[0] + FloatImm(1.0), (IntImm(0),))


def test_assume_is_an_evaluate():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((4, 4), "int32")):
            for io, ii in T.grid(4, 4):
                T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())
    """)
    (A,) = f.params
    stmt = f.body.body.body
    io, ii = f.body.var, f.body.body.var
    cond = Or(Lt(IntImm(4) * io + ii, IntImm(14)),
              Eq(A[io, ii], Call("undef", (), "int32")))
    assert stmt == Evaluate(intrinsics.assume(cond))


def test_statements_carry_spans():
    f = parse_text("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                A[i] = 0.0
    """, filename="kernels.py")
    assert f.body.span == Span("kernels.py", 4, 4)
    assert f.body.body.span == Span("kernels.py", 5, 8)


# ---------------------------------------------------------------- expressions


def test_chained_comparison_is_a_conjunction():
    e, v = expr_of("0 <= i + 1 < 16")
    i = v["i"]
    assert e == And(Le(IntImm(0), i + 1), Lt(i + 1, IntImm(16)))


def test_boolean_operators_nest_to_the_left():
    e, v = expr_of("i < 1 and j < 2 and not i == j or i != 3")
    i, j = v["i"], v["j"]
    assert e == Or(And(And(Lt(i, IntImm(1)), Lt(j, IntImm(2))), Not(Eq(i, j))),
                   Ne(i, IntImm(3)))


def test_arithmetic_and_t_functions():
    e, v = expr_of("T.min(i // 4, j % 3) + T.max(T.floordiv(i, 2), T.floormod(j, 5)) - -i")
    i, j = v["i"], v["j"]
    expected = (Min(FloorDiv(i, IntImm(4)), FloorMod(j, IntImm(3)))
                + Max(FloorDiv(i, IntImm(2)), FloorMod(j, IntImm(5)))) - Sub(IntImm(0), i)
    assert e == expected


def test_negative_literals_are_constants():
    e, v = expr_of("-3 * i")
    assert e == IntImm(-3) * v["i"]


def test_literals_take_the_dtype_they_meet():
    e, v = expr_of("k + 1")
    assert e.b == IntImm(1, "int64")
    e, v = expr_of("x * 2")
    assert e.b == FloatImm(2.0, "float32")
    e, v = expr_of("T.int64(3) + T.float64(0.5)")
    assert e.a == FloatImm(3.0, "float64")  # a constant is converted, not cast
    assert e.b == FloatImm(0.5, "float64")


def test_select_likely_cast_and_math():
    e, v = expr_of("T.if_then_else(T.likely(i < 3), T.Cast('float32', i), T.exp(x))")
    i, x = v["i"], v["x"]
    assert e == Select(intrinsics.likely(Lt(i, IntImm(3))), Cast("float32", i),
                       Call("exp", (x,), "float32"))
    e, v = expr_of("T.cast(i, 'float64')")
    assert e == Cast("float64", v["i"])


def test_undef_takes_a_dtype_from_its_context_or_argument():
    e, v = expr_of("k == T.undef()")
    assert e.b == Call("undef", (), "int64")
    e, _ = expr_of("T.undef(dtype='int32')")
    assert e == Call("undef", (), "int32")
    e, _ = expr_of("T.undef()")
    assert e == Call("undef", (), "float32")


def test_typed_constants_and_booleans():
    e, _ = expr_of("T.float32(0) + T.float32(1.5)")
    assert (e.a, e.b) == (FloatImm(0.0), FloatImm(1.5))
    e, _ = expr_of("T.int64(-3)")
    assert e == IntImm(-3, "int64")
    e, _ = expr_of("True or False")
    assert e == Or(BoolImm(True), BoolImm(False))


def test_let_expression():
    e, v = expr_of("T.let(t, i + 1, t * t)")
    assert isinstance(e, Let) and e.var.name == "t" and e.value == v["i"] + 1
    assert e.body == e.var * e.var


def test_buffer_load():
    f = parse("@T.prim_func\ndef f(A: T.Buffer((4, 4), 'float32')):\n    A[0, 1] = A[1, 2]\n")
    (A,) = f.params
    assert f.body.value == BufferLoad(A, (IntImm(1), IntImm(2)))


# ---------------------------------------------------------------- modules


def test_several_functions_make_a_module():
    mod = parse_text("""
        import polypad as pp
        from polypad import T

        @pp.prim_func
        def first(A: T.Buffer((4,), "float32")):
            A[0] = 1.0

        @prim_func
        def second(A: T.Buffer((4,), "float32")):
            A[1] = 2.0
    """)
    assert isinstance(mod, IRModule) and mod.name == "module"
    assert [f.name for f in mod.funcs] == ["first", "second"]


@pytest.mark.parametrize("decorator", ["ir_module", "I.ir_module", "script.ir_module",
                                       "pp.ir_module"])
def test_ir_module_class(decorator):
    mod = parse_text(f"""
        @{decorator}
        class split_module:
            \"\"\"Two stages.\"\"\"

            @T.prim_func
            def transform_A(A: T.Buffer[14, "int32"], B: T.Buffer[(4, 4), "int32"]):
                B[0, 0] = A[0]

            @T.prim_func
            def compute_C(B: T.Buffer[(4, 4), "int32"], C: T.Buffer[1, "int32"]):
                C[0] = B[0, 0]
    """)
    assert isinstance(mod, IRModule) and mod.name == "split_module"
    assert list(mod.functions) == ["transform_A", "compute_C"]
    assert mod["compute_C"].params[1].shape == (1,)
