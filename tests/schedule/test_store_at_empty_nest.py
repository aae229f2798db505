"""``store_at`` beside a nest that never runs names an instance that does.

Splitting a loop of two iterations by three with ``tail="partition"`` leaves a
main nest of no iteration (``for i_0 in T.serial(0)``) and a tail.  Asked to
store ``Y`` inside a later loop, ``store_at`` looked for the first instance
writing ``Y`` outside it in the empty nest too and raised ISL's "void point
does not have coordinates" (the fuzz's seed 7001, ``--shapes blocks``, case
21); it now names the tail's first instance.
"""

from __future__ import annotations

import pytest

from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

PRODUCER_CONSUMER = '''
@T.prim_func
def func(B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    Y = T.alloc_buffer((2,), "float32")
    for i in T.serial(2):
        with T.block("S0"):
            vi = T.axis.spatial(2, i)
            Y[vi] = B[vi]
    for j in T.serial(8):
        with T.block("S1"):
            vj = T.axis.spatial(8, j)
            C[vj] = Y[vj % 2]
'''


def test_store_at_refuses_with_the_tail_instance_not_the_empty_nest():
    sch = Schedule(parse(PRODUCER_CONSUMER))
    sch.split("i", [None, 3], tail="partition")
    split = sch.func
    with pytest.raises(IllegalTransformError) as refused:
        sch.store_at("Y", "j")
    assert str(refused.value).startswith(
        "store_at('Y', 'j'): S0_1(i_1_tail=0) writes Y outside the loop")
    assert refused.value.evidence.instances == (Instance("S0_1", {"i_1_tail": 0}),)
    assert refused.value.evidence.element == Element("Y", (0,))
    assert sch.func is split
