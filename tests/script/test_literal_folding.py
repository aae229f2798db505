"""Integer literal arithmetic is folded as TVMScript folds it (in Python, before
anything becomes IR), and an operator on two literals that is IR prints in TVM's
node spelling (``T.Sub(0, 5)``) so that it reads back as itself."""

from __future__ import annotations

import re

import pytest

import polypad as pp
from polypad.errors import ParseError
from polypad.ir.nodes import Add, FloorDiv, IntImm, Sub, Var
from polypad.script import script

FOLDED = '''
@T.prim_func
def g(x: T.Buffer((1 << 4, 2 * 3), "float32"), n: T.int32):
    for j in T.serial(4 * 1024):
        x[0, 0] = x[0, 0] + T.float32(2 ** 3)
        x[1, 7 // 2 + 7 % 2] = T.Cast("float32", n + (-3 + 10) * (1 << 2))
'''

LITERAL = '''
@T.prim_func
def g(x: T.Buffer((16, 6), "float32"), n: T.int32):
    for j in T.serial(4096):
        x[0, 0] = x[0, 0] + T.float32(8)
        x[1, 4] = T.Cast("float32", n + 28)
'''


def test_literal_arithmetic_folds_in_shapes_extents_and_values():
    pp.assert_structural_equal(pp.parse(FOLDED), pp.parse(LITERAL))
    text = pp.script(pp.parse(FOLDED))
    assert "T.Buffer((16, 6)" in text and "4096" in text and "n + 28" in text


def test_the_folding_is_tvms():
    from tvm.script import from_source  # TVM 0.27, as the interop tests use it

    theirs = from_source(FOLDED).script()
    assert "T.Buffer((16, 6)" in theirs and "range(4096)" in theirs
    pp.assert_structural_equal(pp.parse(theirs), pp.parse(FOLDED))


@pytest.mark.parametrize("expr, text", [
    (Sub(IntImm(0), IntImm(5)), "T.Sub(0, 5)"),
    (FloorDiv(IntImm(5), IntImm(4)), "T.FloorDiv(5, 4)"),
    (Add(Sub(IntImm(0), IntImm(5)), Var("i", "int32")), "T.Sub(0, 5) + i"),
    (Add(IntImm(1, "int64"), IntImm(2, "int64")), "T.int64(1) + T.int64(2)"),
])
def test_an_operator_on_two_int32_literals_prints_as_tvm_does(expr, text):
    assert script(expr) == text


def test_tvms_node_spelling_reads_back_as_the_node():
    f = pp.parse('''
@T.prim_func
def main(i: T.int32, s: T.Buffer((1,), "int32")):
    s[0] = T.Sub(0, 5) + i + T.FloorDiv(5, 4) * T.Mul(2, 3) - T.FloorMod(7, 2) + T.Add(1, 1)
''')
    text = pp.script(f)
    assert "T.Sub(0, 5) + i + T.FloorDiv(5, 4) * T.Mul(2, 3) - T.FloorMod(7, 2)" in text
    pp.assert_structural_equal(pp.parse(text), f)


@pytest.mark.parametrize("expr, message", [
    ("1 << 70", "1 << 70 is wider than any integer dtype (more than 64 bits)"),
    ("2 ** 64", "2 ** 64 is wider than any integer dtype"),
    ("2 ** -1", "the operator '**' is not supported; use T.pow"),
])
def test_a_literal_too_wide_or_not_an_integer_is_refused_where_it_is(expr, message):
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        pp.parse(f'''
@T.prim_func
def g(s: T.Buffer((1,), "int64")):
    s[0] = T.int64({expr})
''')
    assert (info.value.filename, info.value.lineno, info.value.col) == ("<string>", 4, 20)


def test_a_shape_too_wide_names_the_dimension():
    with pytest.raises(ParseError, match="a buffer dimension must be"):
        pp.parse('''
@T.prim_func
def g(s: T.Buffer((1 << 70,), "int64")):
    T.evaluate(0)
''')
