"""is_no_op where no single instance shows the change: an update in a loop.

``A[i0 + i{d-1}] = A[...] + B[...]`` under ``d`` loops of extent 2 every 8 levels
writes each element of ``A`` more than once from 16 levels on: the last instance's
replaced value comes from an earlier instance of the same statement, so rule 3's
instance-wise refutation does not decide it.  The whole statement, removed and run
on concrete inputs (the reference executor), does: the counterexample's inputs,
run again here, give the two results it reports.
"""

from __future__ import annotations

import numpy as np
import pytest
from deep_support import update_nest
from structural_brute import removal_changes

import analyses
import codegen
from analyses import Refuted, Unknown
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.script import parse


def the_store(f: n.PrimFunc) -> n.BufferStore:
    return next(s for s in walk(f.body) if isinstance(s, n.BufferStore))


def _inputs(values: dict) -> list[np.ndarray]:
    return [np.array(values["input A"], dtype="float32"),
            np.array(values["input B"], dtype="float32")]


@pytest.mark.parametrize("depth", [16, 64])
def test_an_update_written_many_times_is_refuted_by_running_it(depth):
    f = update_nest(depth)
    got = analyses.is_no_op(f, the_store(f), budget=120)
    assert isinstance(got, Refuted), got
    cex = got.counterexample
    assert "removing the statement leaves A[" in cex.description
    # The reported inputs, run with and without the store, give the reported values.
    args = _inputs(cex.values)
    assert removal_changes(f, the_store(f), [args]) == [args]
    (e,) = cex.element.indices
    ran = [a.copy() for a in args]
    codegen.build(f, target="python")(*ran)
    assert cex.values[f"A[{e}] before"] == ran[0][e] != args[0][e]
    assert cex.values[f"A[{e}] after"] == args[0][e]  # without the store, A stays


def test_updates_that_cancel_on_every_valid_input_stay_unknown():
    # Each instance changes A[0], but the two together add B[0] + B[1] = 0: no run
    # can show a change, and no instance alone decides it.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.assume(B[0] + B[1] == T.float32(0))
    for k in T.serial(2):
        A[0] = A[0] + B[k]
''')
    got = analyses.is_no_op(f, the_store(f))
    assert isinstance(got, Unknown), got
    assert "may itself come from the statement" in got.reason
