"""Overcompute that runs a block where its ``T.where`` was false widens the block's axes.

``remove_branching_through_overcompute`` may drop a block's predicate when the
extra instances change nothing (here ``D[vi % 8] = -100.0`` at ``vi = 8``
stores what ``vi = 0`` stores).  The block then runs at ``vi = 8``: its axis
needs the domain ``[0, 9)``, as a padded split widens it; before, the
primitive's result bound ``vi`` outside ``[0, 8)`` and was refused with a
``BindingError`` (the fuzz's seed 7001, cases 22, 28, 29, 37, 41, 56).
"""

from __future__ import annotations

import numpy as np

import analyses
import codegen
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse, script
from polypad.transform import remove_branching_through_overcompute

PREDICATED = '''
@T.prim_func
def func(D: T.Buffer((8,), "float32")):
    for io, ii in T.grid(3, 3):
        with T.block("D"):
            vi = T.axis.spatial(8, io * 3 + ii)
            T.where(io * 3 + ii < 8)
            D[vi] = -100.0
'''

WIDENED = '''
@T.prim_func
def func(D: T.Buffer((8,), "float32")):
    for io, ii in T.grid(3, 3):
        with T.block("D"):
            vi = T.axis.spatial(9, io * 3 + ii)
            D[vi % 8] = -100.0
'''


def _runs_the_same(before, after) -> None:
    want = np.arange(8, dtype="float32")
    codegen.build(before, target="python")(want)
    for target in ("python", "numba"):
        got = np.arange(8, dtype="float32")
        codegen.build(after, target=target)(got)
        np.testing.assert_array_equal(got, want, err_msg=target)


def test_the_primitive_widens_the_axis_of_the_block_it_unguards():
    original = parse(PREDICATED)
    sch = Schedule(original)
    sch.remove_branching_through_overcompute(None)
    assert_structural_equal(sch.func, parse(WIDENED))
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert analyses.check_block_bindings(sch.func) == analyses.Proved(
        "isl", "every block axis binding stays in its domain")
    _runs_the_same(original, sch.func)


def test_the_pass_widens_it_too():
    assert_structural_equal(remove_branching_through_overcompute(parse(PREDICATED)),
                            parse(WIDENED))


def test_an_axis_the_predicate_did_not_guard_keeps_its_domain():
    # vj's binding stays in [0, 4) without the predicate: only vi widens.
    text = PREDICATED.replace('D: T.Buffer((8,), "float32")', 'D: T.Buffer((8, 4), "float32")')
    text = text.replace("T.grid(3, 3)", "T.grid(3, 3, 4)").replace("io, ii in", "io, ii, j in")
    text = text.replace("            T.where", "            vj = T.axis.spatial(4, j)\n"
                                              "            T.where")
    text = text.replace("D[vi] = -100.0", "D[vi, vj] = -100.0")
    sch = Schedule(parse(text))
    sch.remove_branching_through_overcompute(None)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def func(D: T.Buffer((8, 4), "float32")):
    for io, ii, j in T.grid(3, 3, 4):
        with T.block("D"):
            vi = T.axis.spatial(9, io * 3 + ii)
            vj = T.axis.spatial(4, j)
            D[vi % 8, vj] = -100.0
'''))
