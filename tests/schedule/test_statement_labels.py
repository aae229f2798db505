"""Statement labels: evidence and primitive arguments name statements the same way."""

from __future__ import annotations

import pytest

from analyses import Instance
from analyses.instances import labels
from polypad.errors import IllegalTransformError, NotFoundError
from polypad.ir.structural import assert_structural_equal
from polypad.model import extract
from polypad.schedule import Schedule
from polypad.script import parse

NESTED = '''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[i] = 0
    with T.block("outer"):
        for i in T.serial(4):
            B[i] = A[i]
            with T.block("inner.x"):
                A[i] = B[i] + 1
            B[i] = B[i] * 2
    with T.block("S0"):
        A[0] = 1
'''


def test_labels_follow_the_innermost_block():
    got = labels(extract(parse(NESTED)))
    # outer holds two statements of its own, inner.x one (sanitized for ISL text);
    # the block called S0 would clash with the model's S0, so it keeps its model name.
    assert got == {"S0": "S0", "S1": "outer_0", "S2": "inner_x", "S3": "outer_1",
                   "S4": "S4"}


REVERSE = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    with T.block("compute"):
        for i in T.serial(8):
            A[i] = i
        for i in T.serial(8):
            B[i] = A[i] * 2
'''


def test_a_name_from_a_refusal_can_be_passed_back_to_a_primitive():
    sch = Schedule(parse(REVERSE))
    with pytest.raises(IllegalTransformError) as info:
        sch.distribute("compute", [0], "late", position="after")
    src, dst = info.value.evidence.instances
    assert (src, dst) == (Instance("compute_0", {"i": 0}), Instance("compute_1", {"i": 0}))
    # The reader named in the evidence is what distribute takes: moving it after is legal.
    sch.distribute("compute", [dst.statement], "late", position="after")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    with T.block("compute"):
        for i in T.serial(8):
            A[i] = i
    with T.block("late"):
        for i in T.serial(8):
            B[i] = A[i] * 2
'''))


def test_an_unknown_label_lists_the_known_ones():
    with pytest.raises(NotFoundError, match="no statement 'compute_0' in block 'compute'; "
                                            "statements: compute"):
        Schedule(parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    with T.block("compute"):
        for i in T.serial(8):
            A[i] = i
''')).reorder_by_map("compute", "{ compute_0[i] -> [7 - i] }", ("r",))
