"""A let whose scope ends before its statement list does prints as ``with T.LetStmt``.

``x = v`` binds ``x`` for the rest of the list, so a let chain followed by an
``if`` in the same loop body printed as ``x = v`` read back with the ``if``
inside the let: a different function.
"""

from __future__ import annotations

import dataclasses

import pytest

from polypad.errors import ParseError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal, structural_equal
from polypad.script import parse, script

NESTED = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        x = A[i] + 1
        y = x * 2
        B[i] = y
        if i < 4:
            B[i] = B[i] + 1
'''

BESIDE = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        with T.LetStmt(A[i] + 1) as x:
            y = x * 2
            B[i] = y
        if i < 4:
            B[i] = B[i] + 1
'''


def _let_chain_then_if() -> n.PrimFunc:
    """NESTED with the ``if`` moved out of the lets, beside them in the loop body."""
    f = parse(NESTED)
    loop, x = f.body, f.body.body
    y = x.body
    store, branch = y.body.stmts
    chain = n.LetStmt(x.var, x.value, n.LetStmt(y.var, y.value, store))
    return dataclasses.replace(f, body=dataclasses.replace(
        loop, body=n.SeqStmt((chain, branch))))


def test_a_let_chain_then_an_if_reads_back_the_same():
    f = _let_chain_then_if()
    assert not structural_equal(f, parse(NESTED))
    text = script(f)
    assert "with T.LetStmt(A[i] + 1) as x:" in text
    assert_structural_equal(parse(text), f)
    assert_structural_equal(parse(BESIDE), f)


def test_a_let_that_ends_its_list_keeps_the_plain_form():
    f = parse(NESTED)
    assert "T.LetStmt" not in script(f)
    assert_structural_equal(parse(script(f)), f)


def test_the_with_form_binds_its_name_for_its_body_only():
    text = BESIDE.replace("B[i] = B[i] + 1", "B[i] = x")
    with pytest.raises(ParseError, match="undefined name 'x'"):
        parse(text)


def test_the_with_form_needs_a_name():
    text = BESIDE.replace(" as x:", ":")
    with pytest.raises(ParseError, match=r"with T.LetStmt\(value\) needs 'as <name>'"):
        parse(text)
