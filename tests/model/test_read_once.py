"""An ``if`` condition or a let value is read once, before its body.

The model reads it again at every statement under it; that is exact unless a
store of the body changes what it reads before a later statement of the same
execution.  Then the function cannot be modelled, and every decider says so
instead of reasoning about values the program never reads (fuzz case 4840,
seed 0: ``sequential_buffer_access`` split the ``if`` in two, and the second
copy re-read a changed ``A[n]``).
"""

from __future__ import annotations

import pytest

import analyses
import polypad as pp
from analyses import Unknown
from polypad.errors import NotAffineError
from polypad.model import extract

REREAD = {
    "second_statement": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    if A[n] > 1:
        A[1] = 1
        A[1] = A[0] * 65536 + 1
''',
    "loop_in_body": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    if A[0] > 0:
        for i in T.serial(8):
            A[i] = 0
''',
    "let": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    x = A[0]
    A[0] = 5
    B[0] = x
''',
    "else_branch": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    if A[0] > 0:
        B[0] = 1
    else:
        A[0] = 1
        B[1] = 2
''',
    # fuzz case 1101, seed 47: the else leaf re-read A[0] after the then store
    "then_before_else": '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        if A[0] > 2:
            A[0] = -2.0
        else:
            B[i] = 3.0
''',
}

READ_ONCE = {
    "single_store": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        if A[i] > 0:
            A[i] = A[i] - 1
''',
    "last_store": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    if A[0] > 0:
        B[0] = 1
        A[0] = 0
''',
    "store_last_in_else": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    if A[0] > 0:
        B[0] = 1
    else:
        A[0] = 1
''',
    "other_buffer": '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    if A[0] > 0:
        for i in T.serial(8):
            B[i] = A[i]
''',
}


@pytest.mark.parametrize("name", sorted(REREAD))
def test_a_read_the_body_may_change_is_not_modelled(name):
    f = pp.parse(REREAD[name])
    with pytest.raises(NotAffineError, match="is read once, before the body"):
        extract(f)
    store = next(s for s in pp.ir.walk(f.body) if isinstance(s, pp.ir.BufferStore))
    got = analyses.is_no_op(f, store)
    assert isinstance(got, Unknown) and "read once, before the body" in got.reason


@pytest.mark.parametrize("name", sorted(READ_ONCE))
def test_a_read_before_every_change_is_modelled(name):
    model = extract(pp.parse(READ_ONCE[name]))
    assert model.statements


def test_splitting_a_guard_its_body_changes_is_refused():
    sch = pp.Schedule(pp.parse(REREAD["second_statement"]))
    with pytest.raises(NotAffineError, match=r"the condition A\[n\] > 1 is read once"):
        sch.sequential_buffer_access(None, "A")
    assert len(sch.trace) == 0
