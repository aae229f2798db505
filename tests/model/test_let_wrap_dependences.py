"""The dependences of a store through a ``let`` whose value wraps: isl reads the let
variable as its exact value, so the wrap is searched in that value too
(:func:`polypad.model.overflow.wrapping_operation`).  Read exactly, ``j`` and
``j + 256`` store to distinct elements; executed, ``T.Cast("int8", j)`` wraps and they
store to the same one."""

from __future__ import annotations

import numpy as np
import pytest

import analyses
import codegen
from polypad.errors import NotAffineError
from polypad.model.overflow import Wrap
from polypad.script import parse

STORE_THROUGH_LET = parse('''
@T.prim_func
def f(D: T.Buffer((512,), "int32")):
    for j in T.serial(512):
        x: T.int8 = T.Cast("int8", j)
        D[T.Cast("int32", x) + 128] = j
''')


def test_a_store_through_a_wrapping_let_is_not_modelled_exactly():
    with pytest.raises(NotAffineError, match="may wrap around") as caught:
        analyses.dependences(STORE_THROUGH_LET)
    evidence = caught.value.evidence
    assert isinstance(evidence, Wrap)
    assert (evidence.value, evidence.point) == (128, (("j", 128),))
    # What it stands for: the iterations j and j + 256 store to one element.
    D = np.zeros(512, "int32")
    codegen.build(STORE_THROUGH_LET, target="python")(D)
    assert D[0] == 384 and D[128] == 256 and not D[256:].any()
