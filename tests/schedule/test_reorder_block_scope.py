"""``reorder`` and a block that binds ``T.axis``: a scope, as in TVM.

TVM 0.27's ``sch.reorder`` moves loops of one block scope only: the loops inside a
block with axes (whose body holds them), or those around it, but never one across
it ("The loops are not in a chain because they are not under the same scope";
``tests/interop/test_tvm_block_scope.py`` asks TVM itself).  The same here: the
first two reorders are taken (the result is the script expected, runs like the
original on the reference executor and Numba, and replays); the others are refused
by a ``PolypadError`` naming the block, where they used to fail on "a LetStmt".
A block without axes (this syntax's own) is still crossed (``test_guard_sinking``).
"""

from __future__ import annotations

import pytest
from block_scope_programs import CASES
from kind_support import check_schedule, same_bits

from polypad.errors import PolypadError
from polypad.schedule import Schedule
from polypad.script import parse

TAKEN = [name for name, case in CASES.items() if case[2]]
REFUSED = [name for name, case in CASES.items() if not case[2]]


@pytest.mark.parametrize("name", TAKEN)
def test_a_reorder_within_one_scope_is_taken(name):
    program, order, _, expected = CASES[name]
    f = parse(program)
    sch = Schedule(f)
    sch.reorder(*order)
    check_schedule(f, sch, expected)
    same_bits(f, sch.func)


@pytest.mark.parametrize("name", REFUSED)
def test_a_reorder_across_a_block_with_axes_is_refused_naming_it(name):
    program, order, _, _ = CASES[name]
    sch = Schedule(parse(program))
    with pytest.raises(PolypadError, match="not under one block scope: block 'outer' "
                       r"\(axes vi, bound with T.axis\)") as err:
        sch.reorder(*order)
    assert "as in TVM" in str(err.value)


def test_fuse_across_a_block_with_axes_is_refused_the_same_way():
    sch = Schedule(parse(CASES["across a block with an init"][0]))
    with pytest.raises(PolypadError, match="fuse: the loops i, k are not under one block"):
        sch.fuse("i", "k")
