"""The verifier refuses a tree in which one statement object stands in two places.

Analyses find statements by identity (``is_no_op(f, stmt)``, the GPU barrier plan's
leaves), so a shared statement makes "this statement" mean two places: a barrier
planned for one was found at the other and a needed one vanished.  Expressions,
variables and buffers may be shared (buffers and variables must be).
"""

import pytest

import polypad as pp
from polypad.errors import VerifyError
from polypad.ir import (
    Buffer,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IRModule,
    PrimFunc,
    SeqStmt,
    Var,
    const,
)
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.removal import no_op
from polypad.ir.verify import checked_result, problems, verify

A = Buffer("A", (4,), "float32")


def _loop(var, body):
    return For(var, const(0), const(4), ForKind.SERIAL, body)


def test_one_store_in_two_places_is_refused_naming_it_and_both_paths():
    i, j = Var("i"), Var("j")
    store = BufferStore(A, A[0] * 2.0, (const(0),))
    f = PrimFunc("f", (A,), SeqStmt((_loop(i, store), _loop(j, store))))
    with pytest.raises(VerifyError) as err:
        verify(f)
    message = str(err.value)
    assert "statement `A[0] = A[0] * 2.0` is one object in two places" in message
    assert "f.body.stmts[0].body and f.body.stmts[1].body" in message


def test_a_shared_subtree_is_reported_once_at_its_top_with_its_first_line():
    i = Var("i")
    loop = _loop(i, BufferStore(A, A[i] + 1.0, (i,)))
    f = PrimFunc("f", (A,), IfThenElse(A[0] > 0.0, loop, loop))
    (found,) = problems(f)
    assert found.startswith("statement `for i in T.serial(4): ... (2 lines)` is one object "
                            "in two places, f.body.then_case and f.body.else_case")


def test_a_copy_shares_expressions_variables_and_buffers_and_passes():
    i = Var("i")
    value = A[i] + 1.0  # one expression object in both stores
    first = _loop(i, BufferStore(A, value, (i,)))
    f = PrimFunc("f", (A,), SeqStmt((first, fresh_copy(first))))
    assert problems(f) == []


def test_two_functions_of_a_module_sharing_a_statement_are_refused():
    store = BufferStore(A, A[0] * 2.0, (const(0),))
    module = IRModule("m", (PrimFunc("f", (A,), store), PrimFunc("g", (A,), store)))
    (found,) = problems(module)
    assert "f.body and g.body" in found


def test_empty_bodies_are_new_objects():
    assert no_op() is not no_op() and no_op() == no_op()


def test_a_pass_that_shares_a_statement_is_named_at_its_result(monkeypatch):
    monkeypatch.setenv("POLYPAD_VERIFY_PASSES", "1")
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[0] = 1.0
''')
    doubled = PrimFunc("f", f.params, SeqStmt((f.body, f.body)))
    with pytest.raises(VerifyError, match="(?s)doubling built ill-formed IR from f:.*one object in "
                                          "two places, f.body.stmts.0. and f.body.stmts.1."):
        checked_result(doubled, f, "doubling")
