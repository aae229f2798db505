"""TVM 0.27's spelling (``tirx``) and the older ``tir`` one read into the same IR.

Each construct is parsed, checked against the IR the other spelling (or a
hand-written function) gives, round-tripped, and where it computes, run on
both executors against numpy.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both

import codegen
from polypad.ir import nodes as n
from polypad.ir.attr_values import AttrCall, AttrMap
from polypad.ir.structural import assert_structural_equal, structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse as parse_text
from polypad.script import script


def parse(text: str):
    return parse_text(textwrap.dedent(text))

TIRX = '''
# from tvm.script import tirx as T
@T.prim_func(s_tir=True)
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    acc = T.sblock_alloc_buffer((8,), scope="local")
    for i, k in T.grid(8, 4):
        with T.sblock("acc"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(acc[v_i])
            T.sblock_attr({"axis": 1})
            with T.init():
                acc[v_i] = T.float32(0.0)
            acc[v_i] = acc[v_i] + A[v_i, v_k]
    for i in range(8):
        with T.sblock("C"):
            v_i = T.axis.spatial(8, i)
            C[v_i] = acc[v_i]
'''


def test_tirx_renames_read_as_the_tir_names():
    older = (TIRX.replace("T.sblock_alloc_buffer", "T.alloc_buffer")
             .replace("T.sblock_attr", "T.block_attr").replace("T.sblock", "T.block")
             .replace("(s_tir=True)", ""))
    assert_structural_equal(roundtrip(TIRX), parse(older))
    f = parse(TIRX)
    a, c = arguments(f)
    run_both(f, [a, c], rtol=1e-6)


def test_alloc_local_is_an_allocation_in_the_local_scope():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        t = T.alloc_local((4,), "float32")
        for i in range(4):
            t[i] = A[i]
    ''')
    (alloc,) = [x for x in walk(f.body) if isinstance(x, n.Allocate)]
    assert alloc.buffer.scope == "local"


SYMBOLIC = '''
@T.prim_func(s_tir=True)
def main(A: T.Buffer(("n", 12), "float32"), B: T.Buffer((12, "m"), "float32"),
         C: T.Buffer((n, m), "float32")):
    n, m = T.int32(), T.int32()
    for i, j in T.grid(n, m):
        C[i, j] = A[i, 0] * B[0, j]
'''


OLDER_SYMBOLIC = '''
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, 12))
    B = T.match_buffer(b, (12, m))
    C = T.match_buffer(c, (n, m))
    for i, j in T.grid(n, m):
        C[i, j] = A[i, 0] * B[0, j]
'''


def test_a_quoted_size_declares_it_and_the_body_names_the_same_variable():
    f = roundtrip(SYMBOLIC)
    n_var, m_var = f.params[3:]
    assert (n_var.name, n_var.dtype, m_var.name) == ("n", "int32", "m")
    assert f.params[0].shape[0] is n_var and f.params[2].shape == (n_var, m_var)
    assert_structural_equal(f, parse(OLDER_SYMBOLIC))
    a, b, c = arguments(f, n=3, m=5)[:3]
    c = run_both(f, [a, b, c, 3, 5])[2]
    np.testing.assert_array_equal(c, np.outer(a[:, 0], b[0, :]))


def test_a_module_type_var_is_an_int64_size():
    f = roundtrip('''
    n = TypeVar("n")
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((n, 8), "float32")):
        for i, j in T.grid(n, 8):
            A[i, j] = 1.0
    ''')
    assert f.params[1].name == "n" and f.params[1].dtype == "int64"
    assert f.params[0].shape[0] is f.params[1]
    err = parse_error('''
    n = TypeVar("m")
    @T.prim_func
    def main(A: T.Buffer((n,), "float32")):
        pass
    ''')
    assert (err.lineno, err.col) == (2, 1) and "n = TypeVar(\"n\")" in err.message


@pytest.mark.parametrize("annotation, dtype", [
    ("T.let[T.int32]", "int32"), ("T.int32", "int32"), ("T.let[T.float32]", "float32"),
    ("T.handle", "handle"), ('T.handle("int32")', "handle"),
    ('T.let[T.handle("int64", "global")]', "handle"),
])
def test_typed_lets(annotation, dtype):
    value = 'T.call_extern("f", dtype="handle")' if dtype == "handle" else "A[0] + 1"
    element = "float32" if dtype == "float32" else "int32"
    f = parse(f'''
@T.prim_func
def f(A: T.Buffer((4,), "{element}")):
    x: {annotation} = {value}
    T.evaluate(x)
''')
    (let,) = [x for x in walk(f.body) if isinstance(x, n.LetStmt)]
    assert let.var.dtype == dtype and let.value.dtype == dtype
    assert_structural_equal(parse(script(f)), f)


def test_a_typed_let_of_another_dtype_is_refused():
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        x: T.let[T.int32] = A[0]
        A[1] = A[0]
    ''')
    assert (err.lineno, err.col, err.message) == (
        4, 25, "x is declared int32 but its value is float32")


def test_function_attributes_keep_lists_dicts_and_targets():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.func_attr({"layout_free_buffers": [1], "d": {"arr": [0, 0], "key": 3},
                     "target": T.target("cuda", host="llvm"), "tir.noalias": T.bool(True),
                     "t2": T.target({"kind": "llvm", "keys": ["cpu"]})})
        A[0] = 0.0
    ''')
    attrs = dict(f.attrs)
    assert attrs["layout_free_buffers"] == (1,)
    assert attrs["d"] == AttrMap((("arr", (0, 0)), ("key", 3)))
    assert attrs["target"] == AttrCall("target", ("cuda",), (("host", "llvm"),))
    assert attrs["tir.noalias"] is True
    assert 'T.target({"kind": "llvm", "keys": ["cpu"]})' in script(f)


def test_loop_and_allocation_annotations_print_back_and_are_not_compared():
    """Both steer TVM's passes only, so neither changes the function: both are kept for
    the printer (TVM compares them), and polypad's structural equality ignores them."""
    plain = parse('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        t = T.alloc_buffer((4,))
        for i in range(4):
            t[i] = A[i]
        for i in T.serial(4):
            A[i] = t[i]
        for i in T.thread_binding(4, thread="threadIdx.x"):
            A[i] = t[i]
    ''')
    annotated = parse('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        t = T.alloc_buffer((4,), annotations={"disable_lower_builtin": True})
        for i in range(4, annotations={"pragma_loop_partition_hint": 1}):
            t[i] = A[i]
        for i in T.serial(0, 4, annotations={"test": [0, 0]}):
            A[i] = t[i]
        for i in T.thread_binding(4, thread="threadIdx.x", annotations={"a": "b"}):
            A[i] = t[i]
    ''')
    assert_structural_equal(annotated, plain)
    for spelling in ("tirx", "tir"):
        text = script(annotated, spelling=spelling)
        assert 'for i in T.serial(4, annotations={"pragma_loop_partition_hint": 1}):' in text
        assert 'for i in T.serial(4, annotations={"test": [0, 0]}):' in text
        assert ('for i in T.thread_binding(4, thread="threadIdx.x", annotations={"a": "b"}):'
                in text)
        assert 'annotations={"disable_lower_builtin": True})' in text
        assert_structural_equal(parse_text(text), annotated)
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4, annotations=[1]):
            A[i] = 0.0
    ''')
    assert (err.lineno, err.col, err.message) == (
        4, 35, 'a loop\'s annotations are a dict: annotations={"pragma_unroll_explicit": 1}')


def test_select_and_truncating_division():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"),
          C: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = T.Select(A[i] > 0, T.Div(A[i], 3), T.Div(A[i], -3))
            C[i] = T.Div(T.Cast("float32", A[i]), 4.0) + T.rsqrt(T.float32(4.0))
    ''')
    a = np.arange(-8, 8, dtype="int32")
    b, c = np.zeros(16, "int32"), np.zeros(16, "float32")
    b, c = run_both(f, [a, b, c], rtol=1e-6)[1:]
    trunc = np.where(a > 0, np.trunc(a / 3), np.trunc(a / -3)).astype("int32")
    np.testing.assert_array_equal(b, trunc)
    np.testing.assert_allclose(c, a / 4.0 + 0.5, rtol=1e-6)


def test_truncating_remainder_has_the_sign_of_the_dividend():
    """TVM's ``T.take(..., mode="wrap")`` prints ``T.truncmod``: C's ``%`` (numpy's fmod),
    unlike ``%`` in the script (floored, of the sign of the divisor)."""
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"),
          C: T.Buffer((16,), "int32")):
        for i in range(16):
            B[i] = T.truncmod(A[i], 3) + T.truncmod(A[i], -5) * 10
            C[i] = T.truncdiv(A[i], -3)
    ''')
    a = np.arange(-8, 8, dtype="int32")
    b, c = run_both(f, [a, np.zeros(16, "int32"), np.zeros(16, "int32")])[1:]
    np.testing.assert_array_equal(b, np.fmod(a, 3) + np.fmod(a, -5) * 10)
    np.testing.assert_array_equal(c, np.trunc(a / -3).astype("int32"))
    text = script(f)
    assert "B[i] = T.truncmod(A[i], 3) + T.truncmod(A[i], -5) * 10" in text
    assert "C[i] = T.Div(A[i], -3)" in text
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        A[0] = T.truncmod(A[1], 2.0)
    ''')
    assert (err.lineno, err.col, err.message) == (
        4, 12, "T.truncmod takes integers, not float32")


def test_tvm_select_prints_back_as_select():
    """TVM's structural equality tells ``T.Select`` from ``T.if_then_else``: polypad
    keeps which one the text wrote for the printer, and means and runs both alike."""
    text = '''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = T.{}(A[i] < 0.0, A[i] * 2.0, A[i])
    '''
    eager = roundtrip(text.format("Select"))
    lazy = roundtrip(text.format("if_then_else"))
    assert "B[i] = T.Select(A[i] < 0.0, A[i] * 2.0, A[i])" in script(eager)
    assert "B[i] = T.Select(" in script(eager, spelling="tir")
    assert "T.Select" not in script(lazy)
    assert structural_equal(eager, lazy)
    a = np.linspace(-1.0, 1.0, 16, dtype="float32")
    got = run_both(eager, [a, np.zeros(16, "float32")])[1]
    np.testing.assert_array_equal(got, run_both(lazy, [a, np.zeros(16, "float32")])[1])
    np.testing.assert_array_equal(got, np.where(a < 0, a * 2, a))


@pytest.mark.parametrize("call", ['T.sqrt(A[i], dtype="float32")',
                                  'T.exp(A[i], dtype="float32")'])
def test_math_with_dtype(call):
    f = parse(f'''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = {call}
    ''')
    assert_structural_equal(f, parse(script(f)))
    assert "dtype" not in script(f)


def test_shift_with_dtype_types_its_literals():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            if T.shift_left(1, i, dtype="int32") >= 1:
                A[i] = 0.0
    ''')
    (shift,) = [x for x in walk(f.body) if isinstance(x, n.Call)]
    assert [a.dtype for a in shift.args] == ["int32", "int32"]
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A[0] = T.exp(A[1], dtype="float64")
    ''')
    assert (err.lineno, err.col, err.message) == (
        4, 30, "T.exp(..., dtype='float64') computes float32")


def test_a_bool_declared_without_value_is_a_symbolic_parameter():
    f = roundtrip('''
    @T.prim_func
    def func() -> None:
        a = T.bool()
        T.evaluate(a == T.bool(False))
    ''')
    assert [(p.name, p.dtype) for p in f.params] == [("a", "bool")]


def test_match_buffer_after_other_statements_and_a_size_declared_in_a_block():
    late = roundtrip('''
    @T.prim_func
    def f(a: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (4,))
        B = T.alloc_buffer((4,))
        C = T.match_buffer(c, (4,))
        for i in range(4):
            B[i] = A[i] * 2.0
        for i in range(4):
            C[i] = B[i] + 1.0
    ''')
    assert [p.name for p in late.params] == ["A", "C"]
    a, c = arguments(late)
    c = run_both(late, [a, c])[1]
    np.testing.assert_allclose(c, a * 2 + 1)
    inner = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.block("B"):
                off = T.int32()
                sub = T.match_buffer(A[i, 0:8], (8,), elem_offset=off)
                for j in range(8):
                    sub[j] = T.Cast("float32", off)
    ''')
    assert len(inner.params) == 1  # the block's match binds `off`: no size is left over
    (a,) = arguments(inner)
    a = run_both(inner, [a])[0]
    np.testing.assert_array_equal(a, np.repeat(np.arange(4) * 8.0, 8).reshape(4, 8))


def test_a_pointer_parameter_declared_at_the_top_is_its_buffer():
    f = roundtrip('''
    @T.prim_func(private=True)
    def before(A_data: T.handle("float32"), A_size: T.int32):
        A_buf = T.decl_buffer(A_size, "float32", data=A_data)
        for i in range(A_size):
            A_buf[i] = A_buf[i] * 2.0
    ''')
    assert [type(p).__name__ for p in f.params] == ["Buffer", "Var"]
    a = np.arange(5, dtype="float32")
    codegen.build(f, target="python")(a, 5)
    np.testing.assert_array_equal(a, np.arange(5) * 2.0)


def test_topi_math_intrinsics_erf_nearbyint_fabs_isnan():
    """What TOPI's GELU, ``round``, ``abs`` of a float and ``isnan`` print: run on both
    executors against numpy (NaNs included), and printed back (``T.fabs`` as ``T.abs``,
    which TVM reads as the same ``fabs``)."""
    import math

    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
          C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "bool")):
        for i in range(8):
            B[i] = T.erf(A[i] * T.float32(0.5))
            C[i] = T.nearbyint(T.fabs(A[i]) * T.float32(2.0))
            D[i] = T.isnan(A[i])
    ''')
    text = script(f)
    for call in ("T.erf(A[i] * 0.5)", "T.nearbyint(T.abs(A[i]) * 2.0)", "T.isnan(A[i])"):
        assert call in text
    a = np.array([-1.75, -1.25, -0.5, 0.25, 0.75, 1.25, np.nan, 3.0], "float32")
    out = run_both(f, [a, np.zeros(8, "float32"), np.zeros(8, "float32"),
                       np.zeros(8, bool)], rtol=1e-6)
    erf = np.array([math.erf(x) for x in (a * np.float32(0.5)).astype("float64")], "float32")
    np.testing.assert_allclose(out[1], erf, rtol=1e-6)
    np.testing.assert_array_equal(out[2], np.rint(np.abs(a) * 2))  # 2.5 -> 2, halves even
    np.testing.assert_array_equal(out[3], np.isnan(a))
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((4,), "int32"), D: T.Buffer((4,), "bool")):
        D[0] = T.isnan(A[0])
    ''')
    assert (err.lineno, err.message) == (4, "T.isnan takes a float, not int32")


def test_isnan_is_false_on_reals_and_refuted_by_a_nan_in_ieee():
    import analyses
    from analyses.evidence import Proved, Refuted

    x = n.Var("x", "float32")
    never = n.Eq(n.Call("isnan", (x,), "bool"), n.BoolImm(False))
    assert isinstance(analyses.prove(never), Proved)
    refuted = analyses.prove(never, strict_ieee=True)
    assert isinstance(refuted, Refuted)
    assert str(refuted) == "refuted: T.isnan(x) == False does not hold; values: x=nan"


def test_call_packed_is_typed_int32_as_tvm_types_it():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.call_packed("tvm.contrib.sort.sort", A.data, 1)
    ''')
    (call,) = [x for x in walk(f.body) if isinstance(x, n.Call)]
    assert call.dtype == "int32"
    assert 'T.call_packed("tvm.contrib.sort.sort", A.data, 1)' in script(f)
