"""The lowered dialect's TVMScript constructs, one test each: parse, round trip, run.

Each kernel is parsed, checked well formed, printed and parsed back to a
structurally equal function, and (where it computes) run on the reference
executor and the Numba kernel, which must agree, and against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from tvmscript_support import arguments, roundtrip, run_both

from polypad.ir import nodes as n
from polypad.ir.intrinsics import is_call
from polypad.ir.visitor import walk

pytestmark = pytest.mark.numba


def _nodes(f: n.PrimFunc, cls) -> list:
    return [x for x in walk(f.body) if isinstance(x, cls)]


def test_evaluate_of_assume_is_an_assumption():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), n: T.int32):
            T.evaluate(T.assume(0 <= n and n < 8))
            A[n] = 1.0
    """)
    (stmt,) = _nodes(f, n.Evaluate)
    assert is_call(stmt.value, "assume")
    g = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), n: T.int32):
            T.assume(0 <= n and n < 8)
            A[n] = 1.0
    """)
    from polypad.ir.structural import structural_equal
    assert structural_equal(f, g)
    (A,) = [p for p in f.params if isinstance(p, n.Buffer)]
    out = run_both(f, [np.zeros(8, np.float32), 3])
    assert out[0][3] == 1.0 and out[0].sum() == 1.0


def test_evaluate_of_a_constant_is_a_no_op_statement():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            T.evaluate(0)
            for i in T.serial(4):
                A[i] = i
    """)
    (stmt,) = _nodes(f, n.Evaluate)
    assert stmt.value == n.IntImm(0)
    from polypad.script import script
    assert "T.evaluate(0)" in script(f)
    out = run_both(f, [np.zeros(4, np.int32)])
    assert out[0].tolist() == [0, 1, 2, 3]


def test_decorator_arguments_are_accepted():
    text = """
        @T.prim_func(private=True, check_well_formed=False)
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                A[i] = A[i] * 2.0
    """
    f = roundtrip(text)
    assert f.name == "f" and f.attrs == ()
    a = np.arange(4, dtype=np.float32)
    assert (run_both(f, [a])[0] == a * 2).all()


def test_ir_module_decorator_argument():
    from polypad.script import parse
    mod = parse("""
@I.ir_module(check_well_formed=False)
class M:
    @T.prim_func(private=True)
    def f(A: T.Buffer((4,), "float32")):
        A[0] = 1.0
""")
    assert isinstance(mod, n.IRModule) and mod["f"].name == "f"


def test_symbolic_variable_becomes_a_trailing_scalar_parameter():
    f = roundtrip("""
        @T.prim_func
        def f(a: T.handle, b: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (n, 4), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i, j in T.grid(n, 4):
                B[i] = B[i] + A[i, j]
    """)
    A, B, size = f.params
    assert isinstance(size, n.Var) and size.name == "n" and size.dtype == "int32"
    assert A.shape == (size, 4) and B.shape == (size,)
    args = arguments(f, n=5)
    args[1][:] = 0
    out = run_both(f, args, rtol=1e-6)
    np.testing.assert_allclose(out[1], args[0].sum(axis=1), rtol=1e-6)


def test_int64_symbolic_variable_and_int64_shapes():
    f = roundtrip("""
        @T.prim_func
        def f(a: T.handle, B: T.Buffer((T.int64(3), T.int64(2)), "float32")):
            m = T.int64()
            A = T.match_buffer(a, (m,), "float32")
            T.evaluate(T.assume(m == T.int64(6)))
            for i in T.serial(T.int64(6)):
                B[i // T.int64(2), i % T.int64(2)] = A[i]
    """)
    A, B, m = f.params
    assert m.dtype == "int64" and B.shape == (3, 2) and A.shape == (m,)
    a = np.arange(6, dtype=np.float32)
    out = run_both(f, [a, np.zeros((3, 2), np.float32), 6])
    assert (out[1] == a.reshape(3, 2)).all()


def test_if_then_else_with_dtype():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "int8"), B: T.Buffer((8,), "int8")):
            for i in T.serial(8):
                B[i] = T.if_then_else(A[i] > 0, A[i], 0, dtype="int8")
    """)
    (sel,) = [x for x in walk(f.body) if isinstance(x, n.Select)]
    assert sel.dtype == "int8" and sel.false_value == n.IntImm(0, "int8")
    a = np.array([-3, 4, 0, 7, -1, 2, -8, 9], np.int8)
    out = run_both(f, [a, np.zeros(8, np.int8)])
    assert (out[1] == np.maximum(a, 0)).all()


def test_allocate_and_decl_buffer_become_one_allocation():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            tmp_data = T.allocate([16], "float32", "global")
            tmp = T.decl_buffer((4, 4), "float32", data=tmp_data)
            for i, j in T.grid(4, 4):
                tmp[i, j] = A[i * 4 + j] + 1.0
            for i in T.serial(16):
                B[i] = tmp[i % 4, i // 4]
    """)
    (alloc,) = _nodes(f, n.Allocate)
    assert alloc.buffer.name == "tmp" and alloc.buffer.shape == (4, 4)
    a = np.arange(16, dtype=np.float32)
    out = run_both(f, [a, np.zeros(16, np.float32)])
    assert (out[1] == (a + 1).reshape(4, 4).T.reshape(16)).all()


def test_allocate_with_a_body_buffer_declaration():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")):
            acc_data = T.allocate([1], "int32", "local")
            acc = T.Buffer((1,), "int32", data=acc_data, scope="local")
            acc[0] = 0
            for i in T.serial(8):
                acc[0] = acc[0] + A[i]
            A[0] = acc[0]
    """)
    (alloc,) = _nodes(f, n.Allocate)
    assert alloc.buffer.scope == "local" and alloc.buffer.dtype == "int32"
    a = np.arange(8, dtype=np.int32)
    assert run_both(f, [a])[0][0] == 28


def test_decl_buffer_statement_allocates_its_own_memory():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            tmp = T.decl_buffer((4,), "float32")
            for i in T.serial(4):
                tmp[i] = A[i] * A[i]
            for i in T.serial(4):
                A[i] = tmp[i]
    """)
    assert len(_nodes(f, n.Allocate)) == 1
    a = np.arange(4, dtype=np.float32)
    assert (run_both(f, [a])[0] == a * a).all()


def test_decl_buffer_with_form_allocates_for_its_body():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with T.decl_buffer((4,), "float32") as tmp:
                for i in T.serial(4):
                    tmp[i] = A[3 - i]
                for i in T.serial(4):
                    A[i] = tmp[i]
            A[0] = A[0] + 10.0
    """)
    (alloc,) = _nodes(f, n.Allocate)
    assert isinstance(f.body, n.SeqStmt) and f.body.stmts[0] is alloc
    a = np.arange(4, dtype=np.float32)
    assert run_both(f, [a])[0].tolist() == [13.0, 2.0, 1.0, 0.0]


def test_python_decorators_take_tvms_arguments():
    from polypad import T
    from polypad.script import I

    @T.prim_func(private=True, check_well_formed=False)
    def f(A: T.Buffer((4,), "float32")):
        A[0] = 1.0

    @I.ir_module(check_well_formed=False)
    class M:
        @T.prim_func(private=True)
        def g(A: T.Buffer((4,), "float32")):
            A[0] = 1.0

    assert isinstance(f, n.PrimFunc) and f.name == "f"
    assert isinstance(M, n.IRModule) and M["g"].name == "g"


def test_match_buffer_layout_keywords_at_neutral_values():
    f = roundtrip("""
        @T.prim_func
        def f(a: T.handle, B: T.Buffer((4,), "float32", elem_offset=0, align=64)):
            A = T.match_buffer(a, (4,), "float32", elem_offset=0, align=64, offset_factor=1)
            tmp = T.alloc_buffer((4,), "float32", align=64, offset_factor=1)
            for i in T.serial(4):
                tmp[i] = A[i] + 1.0
            for i in T.serial(4):
                B[i] = tmp[i]
    """)
    A, B = f.params
    assert A.shape == (4,) and B.shape == (4,)
    a = np.arange(4, dtype=np.float32)
    assert (run_both(f, [a, np.zeros(4, np.float32)])[1] == a + 1).all()
