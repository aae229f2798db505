"""``transform_layout`` writes a constant index folded: ``B[0, 4]``, not
``B[(T.Mul(4, 1) + 0) // 5, (T.Mul(4, 1) + 0) % 5]`` (a fuzz run's printout).

The map's outputs are substituted with the access's indices and then folded
where that is exact (:mod:`polypad.ir.fold_int`): operators on two constants,
``x * 1`` and ``x + 0``.  Checked by structural equality with the function
written out, and by running both layouts on the reference executor and Numba;
the folding itself keeps an operation that would wrap or divide by zero.
"""

from __future__ import annotations

import pytest
from layout_support import check_layouts

from polypad import Schedule, parse
from polypad.ir import nodes as ir
from polypad.ir.fold_int import fold_int_constants
from polypad.ir.structural import assert_structural_equal
from polypad.script import script

pytestmark = pytest.mark.numba

ROUNDABOUT = "lambda i: [(i * 1 + 0) // 5, (i * 1 + 0) % 5]"

BEFORE = """
@T.prim_func
def func(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32")):
    for i in T.serial(20):
        with T.block("b"):
            vi = T.axis.spatial(20, i)
            B[vi] = A[vi] * T.float32(2)
            B[4] = A[3]
"""

AFTER = """
@T.prim_func
def func(A: T.Buffer((20,), "float32"), B: T.Buffer((4, 5), "float32")):
    for i in T.serial(20):
        with T.block("b"):
            vi = T.axis.spatial(20, i)
            B[vi // 5, vi % 5] = A[vi] * T.float32(2)
            B[0, 4] = A[3]
"""


def test_constant_and_identity_arithmetic_of_the_map_is_folded():
    before = parse(BEFORE)
    sch = Schedule(before)
    sch.transform_layout("b", "B", ROUNDABOUT)
    assert_structural_equal(sch.func, parse(AFTER))
    assert "T.Mul" not in script(sch.func)
    check_layouts(before, sch.func, {"B": (ROUNDABOUT, None)})


def test_folding_keeps_what_would_wrap_or_divide_by_zero():
    big = ir.Mul(ir.IntImm(100, "int8"), ir.IntImm(2, "int8"))
    assert fold_int_constants(big) is big  # 200 is no int8: the program wraps it
    by_zero = ir.FloorDiv(ir.IntImm(4), ir.IntImm(0))
    assert fold_int_constants(by_zero) is by_zero
    folded = fold_int_constants(ir.FloorMod(ir.Add(ir.IntImm(-7), ir.IntImm(0)), ir.IntImm(5)))
    assert folded == ir.IntImm(3)  # floor semantics: -7 % 5 is 3


def test_an_identity_that_widens_its_operand_is_kept():
    x = ir.Var("x", "int32")
    widened = ir.Mul(ir.Add(ir.IntImm(0, "int64"), x), ir.IntImm(1 << 20, "int64"))
    assert fold_int_constants(widened) is widened  # x * 2**20 alone would wrap in int32
    same = ir.Mul(ir.Add(x, ir.IntImm(0, "int32")), ir.IntImm(4, "int32"))
    assert fold_int_constants(same) == ir.Mul(x, ir.IntImm(4, "int32"))
