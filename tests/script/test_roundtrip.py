"""``parse(script(f))`` is structurally equal to ``f``, and printing is a fixed point."""

from __future__ import annotations

import random
import textwrap

import pytest

from polypad.ir import intrinsics
from polypad.ir import operators as ops
from polypad.ir.nodes import (
    Buffer,
    BufferStore,
    Cast,
    Evaluate,
    For,
    ForKind,
    IntImm,
    LetStmt,
    PrimFunc,
    SeqStmt,
    Var,
)
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse, script

ROW_SUMMATION = """
@T.prim_func
def row_summation(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 14), "float32")
    B = T.match_buffer(b, (16,), "float32")
    for i in T.serial(16):
        B[i] = 0.0
        for j in T.serial(14):
            B[i] = B[i] + A[i, j]
"""

CONV1D = """
@T.prim_func
def func(
    A: T.Buffer[(3, 8), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(18,), "float32"],
):
    for io, ii in T.grid(3, 8):
        T.assume(
            (io == 0 and ii >= 2)
            or (io > 0 and io < 2)
            or (io == 2 and ii < 2)
            or A[io, ii] == 0.0
        )

    for Bi in T.serial(18):
        B[Bi] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[Bi] = B[Bi] + F[fi] * A[(Ai + 2) // 8, (Ai + 2) % 8]
"""

ASSUME_UNDEF = """
@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io,ii in T.grid(4,4):
        T.assume(4*io+ii < 14 or A[io,ii] == T.undef())
    for io, ii in T.grid(4, 4):
        B[io, ii] = 2 * A[io, ii]
    for io,ii in T.grid(4,4):
        if 4*io + ii >= 14:
            B[io,ii] = T.undef()
"""

ALLOC = """
@T.prim_func
def func(A: T.Buffer[14, "float32"], B: T.Buffer[14, "float32"]):
    A_cache = T.alloc_buffer(14, "float32")
    for i in T.serial(14):
        with T.block("A_cache"):
            A_cache[i] = A[i]
    B_cache = T.alloc_buffer([4, 4], dtype="float32", scope="local", axis_separators=[1])
    for i in T.serial(14):
        with T.block("compute"):
            B_cache[i // 4, i % 4] = 2 * A_cache[i]
    for i in T.serial(14):
        B[i] = B_cache[i // 4, i % 4]
"""

MODULE = """
@ir_module
class split_module:
    @T.prim_func
    def transform_A(A: T.Buffer[14, "int32"], B: T.Buffer[(4, 4), "int32"]):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[io, ii] = A[4 * io + ii]
            else:
                B[io, ii] = 0

    @T.prim_func
    def compute_C(B: T.Buffer[(4, 4), "int32"], C: T.Buffer[1, "int32"]):
        for io,ii in T.grid(4,4):
            T.assume(4*io+ii < 14 or B[io,ii]==0)
        C[0] = 0
        for io, ii in T.grid(4, 4):
            C[0] = C[0] + B[io, ii]
"""

ELIF = """
@T.prim_func
def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer(3, "float32"), B: T.Buffer((3, 8), "float32")):
    for io in T.serial(3):
        if io == 0:
            for ii in T.serial(8):
                if not (ii < 2) and not (ii + 1 < 2):
                    B[io, ii] = F[0] * A[io, ii]
        elif io == 2:
            pass
        elif io == 1:
            B[io, 0] = T.if_then_else(T.likely(io < 2), 1.0, -1.0)
        else:
            B[io, 0] = T.max(T.min(A[io, 0], 2.0), -2.5)
"""

LOOP_KINDS = """
@T.prim_func
def func(A: T.Buffer((n, 16), "float32"), n: T.int32, m: T.int64):
    for i in T.parallel(n):
        for j in T.vectorized(4):
            for k in T.unroll(2, 6):
                A[i, j * 4 + k - 2] = T.sqrt(A[i, j]) / 2.0
    for j in T.serial(1, n):
        A[j, 0] = 0.0
    for j in T.serial(T.int64(3), m):
        A[0, 0] = T.Cast("float32", j + 1)
"""

WIDE_CONSTANTS = """
@T.prim_func
def func(A: T.Buffer((4,), "float64"), B: T.Buffer((4,), "int64"), k: T.int64):
    for i in T.serial(T.int64(4)):
        B[i] = k * 3 + T.int64(2) * T.int64(5)
        A[i] = T.float64(1.5) * T.Cast("float64", B[i]) + 0.25
        A[i] = T.float64(1.0) + T.float64(2.0)
        B[i] = T.if_then_else(i < T.int64(2), T.undef(), k)
        A[i] = T.exp(A[i]) + T.float64("inf")
"""

SHADOWED = """
@T.prim_func
def func(A: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        x = i + 1
        x = x * 2
        for i in T.serial(2):
            x = x + i
            A[i] = x
    for i in T.serial(4):
        A[i] = 0
"""

CASES = {
    "row_summation": ROW_SUMMATION, "conv1d": CONV1D, "assume_undef": ASSUME_UNDEF,
    "alloc": ALLOC, "module": MODULE, "elif": ELIF, "loop_kinds": LOOP_KINDS,
    "wide_constants": WIDE_CONSTANTS, "shadowed": SHADOWED,
}


@pytest.mark.parametrize("name", list(CASES))
def test_round_trip(name):
    f = parse(CASES[name])
    text = script(f)
    g = parse(text)
    assert_structural_equal(g, f)
    assert script(g) == text
    older = script(f, spelling="tir")
    assert_structural_equal(parse(older), f)


def test_canonical_text_of_conv1d():
    older = script(parse(CONV1D), spelling="tir")
    assert script(parse(CONV1D)) == older.replace(
        "@T.prim_func", "@T.prim_func(s_tir=True)").replace(
        "Ai = Bi - fi + 2", "Ai: T.let[T.int32] = Bi - fi + 2")  # TVM 0.27's spelling
    assert older == textwrap.dedent("""\
        @T.prim_func
        def func(A: T.Buffer((3, 8), "float32"), F: T.Buffer((3,), "float32"), \
B: T.Buffer((18,), "float32")):
            for io in T.serial(3):
                for ii in T.serial(8):
                    T.assume(io == 0 and ii >= 2 or io > 0 and io < 2 or io == 2 and ii < 2 \
or A[io, ii] == 0.0)
            for Bi in T.serial(18):
                B[Bi] = 0.0
                for fi in T.serial(3):
                    Ai = Bi - fi + 2
                    if 0 <= Ai < 16:
                        B[Bi] = B[Bi] + F[fi] * A[(Ai + 2) // 8, (Ai + 2) % 8]
        """)


def test_canonical_text_of_module_and_shadowing():
    assert script(parse(SHADOWED)).splitlines()[4] == "        x_1: T.let[T.int32] = x * 2"
    text = script(parse(SHADOWED), spelling="tir")
    assert text.splitlines()[2:8] == [
        "    for i in T.serial(4):",
        "        x = i + 1",
        "        x_1 = x * 2",
        "        for i_1 in T.serial(2):",
        "            x_2 = x_1 + i_1",
        "            A[i_1] = x_2",
    ]
    assert text.splitlines()[8] == "    for i in T.serial(4):"  # the scope of i has ended
    mod_text = script(parse(MODULE), spelling="tir")
    assert mod_text.startswith("@I.ir_module\nclass split_module:\n    @T.prim_func\n")
    assert script(parse(MODULE)).startswith(
        "@I.ir_module\nclass split_module:\n    @T.prim_func(s_tir=True)\n")


def test_hand_built_ir_with_clashing_names():
    A = Buffer("A", (4, 4), "int32")
    outer, inner = Var("i"), Var("i")
    t1, t2 = Var("t"), Var("t")
    store = BufferStore(A, t2 + outer, (outer, inner))
    body = For(outer, IntImm(0), IntImm(4), ForKind.SERIAL,
               For(inner, IntImm(0), IntImm(4), ForKind.SERIAL,
                   LetStmt(t1, inner * 2, LetStmt(t2, t1 + inner, store))))
    f = PrimFunc("f", (A,), body)
    text = script(f, spelling="tir")
    assert "for i_1 in T.serial(4):" in text and "t_1 = t + i_1" in text
    assert_structural_equal(parse(text), f)
    assert "t_1: T.let[T.int32] = t + i_1" in script(f)
    assert_structural_equal(parse(script(f)), f)


def test_hand_built_loop_bounds():
    A = Buffer("A", (16,), "int32")
    n = Var("n")
    i, j, k = Var("i"), Var("j"), Var("k")
    body = SeqStmt((
        For(i, IntImm(2), IntImm(5), ForKind.SERIAL, BufferStore(A, i, (i,))),
        For(j, n, n * 2, ForKind.SERIAL, BufferStore(A, j, (j,))),
        For(k, IntImm(1), n - 1, ForKind.SERIAL, BufferStore(A, k, (k,))),
    ))
    f = PrimFunc("f", (A, n), body)
    text = script(f)
    assert "for i in T.serial(2, 7):" in text
    assert "for j in T.serial(n, n + n * 2):" in text
    assert "for k in T.serial(1, n):" in text
    assert_structural_equal(parse(text), f)


# ---------------------------------------------------------------- random expressions


def _random_expr(rng: random.Random, leaves: dict, dtype: str, depth: int):
    """A well-typed random expression of ``dtype`` built with the IR operators."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.5:
            return leaves[dtype]
        if dtype.startswith("int"):
            return IntImm(rng.randint(-9, 9), dtype)
        return ops.const(rng.choice([0.5, -2.0, 3.0, 1e-05]), dtype)
    sub = lambda: _random_expr(rng, leaves, dtype, depth - 1)  # noqa: E731
    choice = rng.randrange(9)
    if choice == 0:
        return ops.add(sub(), sub())
    if choice == 1:
        return ops.sub(sub(), sub())
    if choice == 2:
        return ops.mul(sub(), sub())
    if choice == 3:
        return (ops.floordiv if dtype.startswith("int") else ops.truediv)(sub(), sub())
    if choice == 4:
        return (ops.floormod if dtype.startswith("int") else ops.max_)(sub(), sub())
    if choice == 5:
        return -sub()
    if choice == 6:
        return ops.min_(sub(), sub())
    if choice == 7:
        cond = _random_cond(rng, leaves, depth - 1)
        return intrinsics.undef(dtype) if rng.random() < 0.2 else ops.as_expr(
            sub()) if rng.random() < 0.5 else _select(cond, sub(), sub())
    other = {"int32": "int64", "int64": "int32", "float32": "float64", "float64": "float32"}
    return Cast(dtype, _random_expr(rng, leaves, other[dtype], depth - 1))


def _select(cond, a, b):
    from polypad.script import T

    return T.if_then_else(cond, a, b)


def _random_cond(rng: random.Random, leaves: dict, depth: int):
    dtype = rng.choice(list(leaves))
    a = _random_expr(rng, leaves, dtype, max(depth - 1, 0))
    b = _random_expr(rng, leaves, dtype, max(depth - 1, 0))
    cmp = rng.choice([ops.lt, ops.le, ops.gt, ops.ge, ops.eq, ops.ne])(a, b)
    if depth > 0 and rng.random() < 0.4:
        other = _random_cond(rng, leaves, depth - 1)
        return rng.choice([ops.logical_and, ops.logical_or])(cmp, other)
    if rng.random() < 0.15:
        return ops.logical_not(cmp)
    return cmp


def test_random_expressions_round_trip():
    rng = random.Random(20240607)
    leaves = {"int32": Var("i"), "int64": Var("k", "int64"),
              "float32": Var("x", "float32"), "float64": Var("z", "float64")}
    params = tuple(leaves.values())
    for _ in range(300):
        if rng.random() < 0.3:
            e = _random_cond(rng, leaves, 3)
        else:
            e = _random_expr(rng, leaves, rng.choice(list(leaves)), 4)
        f = PrimFunc("f", params, Evaluate(e))
        text = script(f)
        assert_structural_equal(parse(text), f)
