"""``to_tvm`` of a let that ends before its statement list does.

polypad prints it ``with T.LetStmt(v) as x:``, which TVM 0.27 lacks (its lets bind
to the end of their list); ``to_tvm`` hands TVM the let over the rest of the list,
which means the same.
"""

from __future__ import annotations

from polypad import tvm as pptvm
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse, script

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


def test_to_tvm_reads_a_let_chain_then_an_if_as_one_let_over_the_list():
    f = parse(BESIDE)
    assert "with T.LetStmt" in script(f)
    back = pptvm.from_tvm(pptvm.to_tvm(f))
    assert_structural_equal(back, parse(NESTED))
