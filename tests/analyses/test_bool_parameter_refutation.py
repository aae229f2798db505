"""A ``T.bool`` parameter in a question whose counterexample the prover traces.

isl's space names every parameter of the function, the ``bool`` ``flag`` of ``if
flag:`` too, though nothing there constrains it.  The refutation's trace pinned every
parameter of that space to isl's value for it in Z3, and ``flag == 0`` on a Z3 Bool
raised ``z3.Z3Exception: True, False or Z3 Boolean expression expected`` out of
``can_remove_conditional`` and ``remove_branching_through_overcompute``.  Only integer
parameters are pinned now; Z3 picks the Bool.
"""

from __future__ import annotations

import analyses
import polypad as pp
from analyses import Unknown
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

FLAG = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), flag: T.bool):
    for i in T.serial(4):
        if flag:
            A[i] = 1
'''


def test_the_conditional_on_a_bool_parameter_is_undecided_not_a_z3_error():
    func = pp.parse(FLAG)
    (guard,) = [x for x in walk(func.body) if isinstance(x, n.IfThenElse)]
    decided = analyses.can_remove_conditional(func, guard)
    assert isinstance(decided, Unknown)
    assert "running the body where not (flag) is not known to be a no-op: S1(i=0) writes " \
        "A[0]" in decided.reason
    assert "needs the value of A[0]" in decided.reason


def test_the_pass_leaves_the_function_as_it_was():
    func = pp.parse(FLAG)
    out = pp.transform.remove_branching_through_overcompute(func)
    pp.assert_structural_equal(out, func)
