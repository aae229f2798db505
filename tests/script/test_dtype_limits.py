"""``T.min_value(dtype)`` and ``T.max_value(dtype)``: TVM's spelling of a dtype's extremes.

TVM folds them to constants: for an integer its range's ends, for a float the most
negative (largest) *finite* value -- ``-3.4028234663852886e+38`` for ``float32``,
not ``-inf`` -- and for ``bool`` False and True.  Checked against numpy's
``finfo``/``iinfo``, printed back (floats as the call, integers as their value),
read back to the same IR, and stored by the reference executor and Numba.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import ParseError
from polypad.ir import nodes as n
from polypad.ir.dtypes import ALL_TYPES
from polypad.ir.structural import assert_structural_equal
from polypad.script import T, parse, script

STORE = '''
@T.prim_func
def f(B: T.Buffer((2,), "{t}")):
    B[0] = T.min_value("{t}")
    B[1] = T.max_value(dtype="{t}")
'''


def numpy_limits(dtype: str):
    if dtype == "bool":
        return False, True
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    return info.min, info.max


def stored(func: n.PrimFunc) -> tuple[n.Expr, n.Expr]:
    first, second = func.body.stmts
    return first.value, second.value


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_the_limits_are_numpys_finite_extremes(dtype):
    low, high = stored(parse(STORE.format(t=dtype)))
    assert (low.dtype, high.dtype) == (dtype, dtype)
    assert (low.value, high.value) == numpy_limits(dtype)
    assert T.min_value(dtype) == low and T.max_value(dtype) == high


def test_a_float_minimum_is_finite_not_minus_infinity():
    low, high = stored(parse(STORE.format(t="float32")))
    assert low == n.FloatImm(-3.4028234663852886e38, "float32")
    assert high == n.FloatImm(3.4028234663852886e38, "float32")
    low16, _ = stored(parse(STORE.format(t="float16")))
    assert low16 == n.FloatImm(-65504.0, "float16")


@pytest.mark.parametrize(("dtype", "low", "high"), [
    ("float32", 'T.min_value("float32")', 'T.max_value("float32")'),
    ("float64", 'T.min_value("float64")', 'T.max_value("float64")'),
    ("int32", "-2147483648", "2147483647"),
    ("uint8", "0", "255"),
    ("int64", "-9223372036854775808", "9223372036854775807"),
    ("bool", "False", "True"),
])
def test_the_limits_print_and_read_back_the_same(dtype, low, high):
    f = parse(STORE.format(t=dtype))
    text = script(f)
    assert text.splitlines()[-2:] == [f"    B[0] = {low}", f"    B[1] = {high}"]
    assert_structural_equal(parse(text), f)
    # A float extreme written as a literal prints as the call, and reads back the same.
    if dtype.startswith("float"):
        literal = parse(STORE.format(t=dtype).replace(f'T.min_value("{dtype}")',
                                                      f"T.{dtype}({-float(np.finfo(dtype).max)!r})"))
        assert_structural_equal(literal, f)
        assert script(literal) == text


def test_a_float_next_to_the_extreme_stays_a_literal():
    # One ulp inside float32's range: a number, not the call.
    inside = float(np.nextafter(np.float32(-3.4028234663852886e38), np.float32(0)))
    f = parse(STORE.format(t="float32").replace('T.min_value("float32")', repr(inside)))
    assert f"B[0] = {inside!r}" in script(f)


@pytest.mark.parametrize(("dtype", "target"), [
    ("float32", "python"), ("float32", "numba"), ("float64", "numba"),
    ("float16", "python"),  # Numba has no float16
    ("int8", "python"), ("int8", "numba"), ("uint64", "python"), ("uint64", "numba"),
])
def test_the_executors_store_the_limits(dtype, target):
    out = np.zeros(2, dtype)
    codegen.build(parse(STORE.format(t=dtype)), target=target)(out)
    np.testing.assert_array_equal(out, np.array(numpy_limits(dtype), dtype))
    if dtype.startswith("float"):
        assert np.all(np.isfinite(out))


@pytest.mark.parametrize(("call", "message"), [
    ("T.min_value()", "T.min_value needs the argument 'dtype'"),
    ('T.max_value("float32x4")', "vector dtype 'float32x4' is not supported here"),
    ('T.min_value("handle")', "unknown dtype 'handle'"),
    ("T.max_value(32)", "a dtype must be a string literal"),
    ('T.min_value("int32", "x")', "T.min_value takes at most 1 positional argument"),
])
def test_bad_limits_are_parse_errors(call, message):
    with pytest.raises(ParseError, match=message):
        parse(f'''
@T.prim_func
def f(B: T.Buffer((1,), "float32")):
    T.evaluate({call})
''')
