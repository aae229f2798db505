"""Bitwise operators and shifts: parsing, printing, both executors and the Z3 model.

The meaning is numpy's (docs/semantics.md): two's complement, a left shift
wraps at the width, and a shift by an amount outside ``[0, bits)`` gives 0,
or the sign when shifting right.  The reference executor, the Numba kernel
and the prover must all agree with numpy.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tvmscript_support import parse_error, roundtrip

import analyses
import codegen
from polypad.ir import intrinsics
from polypad.ir import nodes as n
from polypad.ir.structural import structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse, script

_NUMPY = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
          "bitwise_xor": np.bitwise_xor, "shift_left": np.left_shift,
          "shift_right": np.right_shift}


def _calls(f) -> list[str]:
    return [x.op for x in walk(f.body) if isinstance(x, n.Call)]


def test_operators_and_t_functions_parse_to_the_same_ir():
    ops = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            for i in T.serial(4):
                B[i] = (A[i] << 2) ^ (A[i] >> 1) | ~A[i] & 7
    """)
    calls = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            for i in T.serial(4):
                B[i] = T.bitwise_or(T.bitwise_xor(T.shift_left(A[i], 2), T.shift_right(A[i], 1)),
                                    T.bitwise_and(T.bitwise_not(A[i]), 7))
    """)
    assert structural_equal(ops, calls)
    assert sorted(_calls(ops)) == sorted(["bitwise_or", "bitwise_xor", "shift_left",
                                          "shift_right", "bitwise_and", "bitwise_not"])


def test_literals_take_the_other_operands_dtype_and_print_back():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "uint8")):
            for i in T.serial(4):
                A[i] = T.shift_left(A[i], 1) | T.uint8(1)
    """)
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    assert store.value.dtype == "uint8"
    assert "T.shift_left(A[i], 1)" in script(f)


def test_on_bools_the_operators_are_logic():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "bool"), B: T.Buffer((4,), "bool")):
            for i in T.serial(4):
                B[i] = (A[i] & B[i]) | ~A[i] ^ B[i]
    """)
    assert _calls(f) == []
    assert any(isinstance(x, n.And) for x in walk(f.body))
    assert any(isinstance(x, n.Not) for x in walk(f.body))


def test_floats_are_refused_with_the_construct_and_position():
    err = parse_error("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.shift_left(A[1], 2)
    """)
    assert (err.lineno, err.col) == (4, 12)
    assert err.message == "T.shift_left takes integers, not float32"


@pytest.mark.numba
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
def test_executors_agree_with_numpy(dtype):
    bits = np.iinfo(dtype).bits
    f = roundtrip(f"""
        @T.prim_func
        def f(A: T.Buffer((64,), "{dtype}"), S: T.Buffer((64,), "{dtype}"),
              O: T.Buffer((6, 64), "{dtype}")):
            for i in T.serial(64):
                O[0, i] = A[i] & S[i]
                O[1, i] = A[i] | S[i]
                O[2, i] = A[i] ^ S[i]
                O[3, i] = ~A[i]
                O[4, i] = A[i] << S[i]
                O[5, i] = A[i] >> S[i]
    """)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    a = np.concatenate([[info.min, info.max, 0, 1], rng.integers(info.min, info.max, 60,
                                                                 endpoint=True)]).astype(dtype)
    # Shift amounts in range, at the edges and outside (a negative one only if signed).
    amounts = [0, 1, bits - 1, bits, bits + 3] + ([-1] if info.min < 0 else [])
    s = np.resize(np.array(amounts), 64).astype(dtype)
    want = np.stack([np.bitwise_and(a, s), np.bitwise_or(a, s), np.bitwise_xor(a, s),
                     np.invert(a), np.left_shift(a, s), np.right_shift(a, s)])
    for target in ("python", "numba"):
        out = np.zeros((6, 64), dtype)
        codegen.build(f, target=target)(a, s, out)
        np.testing.assert_array_equal(out, want, err_msg=target)


# ---------------------------------------------------------------- the prover


def _truth(claim, x_values, y_values, x, y) -> bool:
    """Whether ``claim`` holds for every pair of values, by the reference executor."""
    from polypad.semantics.interpreter import convert
    interp = _Evaluator()
    for vx, vy in itertools.product(x_values, y_values):
        if not interp.eval(claim, {x: convert(vx, x.dtype), y: convert(vy, y.dtype)}):
            return False
    return True


class _Evaluator:
    """The reference executor's expression evaluator, on a variable assignment."""

    def eval(self, expr, env):
        from polypad.semantics.interpreter import _Interpreter
        body = n.Evaluate(expr)
        it = _Interpreter(n.PrimFunc("claim", (), body))
        it.env = dict(env)
        it.arrays = {}
        return bool(it.eval(expr))


_X = n.Var("x", "int8")
_Y = n.Var("y", "int8")
_CLAIMS = [
    intrinsics.bitwise("bitwise_and", _X, 1) <= 1,
    intrinsics.bitwise("bitwise_and", _X, _Y) <= _X,
    intrinsics.bitwise("shift_left", _X, 8).equal(0),
    intrinsics.bitwise("shift_left", _X, 1).equal(_X * 2),
    intrinsics.bitwise("shift_right", _X, 1) <= _X,
    intrinsics.bitwise("shift_right", _X, _Y) >= -1,
    intrinsics.bitwise("shift_right", _X, 7) >= -1,
    intrinsics.bitwise("bitwise_xor", _X, _X).equal(0),
    intrinsics.bitwise("bitwise_not", _X).equal(-_X - 1),
    intrinsics.bitwise("bitwise_or", _X, _Y) >= _X,
]


@pytest.mark.filterwarnings("ignore:overflow encountered")  # int8 wrap-around, on purpose
@pytest.mark.parametrize("claim", _CLAIMS, ids=lambda c: script(c))
def test_prover_answers_are_never_wrong(claim):
    """Proved only what holds for all int8 values, refuted only with a real counterexample."""
    values = range(-128, 128)
    truth = _truth(claim, values, values, _X, _Y)
    answer = analyses.prove(claim)
    if isinstance(answer, analyses.Proved):
        assert truth
    elif isinstance(answer, analyses.Refuted):
        assert not truth
        from polypad.semantics.interpreter import convert
        params = answer.counterexample.params
        env = {v: convert(params.get(v.name, 0), v.dtype) for v in (_X, _Y)}
        assert not _Evaluator().eval(claim, env), str(answer)
    else:
        assert isinstance(answer, analyses.Unknown)


@pytest.mark.parametrize("strict_ieee", [False, True])
def test_prover_decides_the_simple_facts(strict_ieee):
    assert isinstance(analyses.prove(_CLAIMS[0], strict_ieee=strict_ieee), analyses.Proved)
    assert isinstance(analyses.prove(_CLAIMS[2], strict_ieee=strict_ieee), analyses.Proved)
    refuted = analyses.prove(_CLAIMS[4], strict_ieee=strict_ieee)
    assert isinstance(refuted, analyses.Refuted)
    assert refuted.counterexample.params["x"] < 0  # -1 >> 1 is -1, and -2 >> 1 is -1


def test_bitwise_in_an_index_is_not_quasi_affine():
    from polypad.errors import NotAffineError
    f = parse("""
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(16):
        B[i >> 1] = A[i]
""")
    with pytest.raises(NotAffineError, match="T.shift_right"):
        analyses.dependences(f)


@pytest.mark.numba
def test_shifts_in_parallel_and_vectorized_loops():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
            for i in T.parallel(64):
                B[i] = (A[i] << (i % 40)) ^ (A[i] >> (i % 35))
            for i in T.vectorized(64):
                B[i] = B[i] + (A[i] & 255)
    """)
    a = np.arange(-32, 32, dtype=np.int32) * 1000
    shift = np.arange(64, dtype=np.int32)
    want = (np.left_shift(a, shift % 40) ^ np.right_shift(a, shift % 35)) + (a & 255)
    for target in ("python", "numba"):
        b = np.zeros(64, np.int32)
        codegen.build(f, target=target)(a, b)
        np.testing.assert_array_equal(b, want, err_msg=target)
