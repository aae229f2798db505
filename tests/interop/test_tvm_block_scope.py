"""TVM 0.27's own ``sch.reorder`` on the block-scope cases of
``tests/schedule/block_scope_programs.py``: it takes those ``Schedule.reorder``
takes, with the same result (read back through ``from_tvm``), and refuses the others
because the loops "are not under the same scope"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import polypad as pp
from polypad import tvm as pptvm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "schedule"))
from block_scope_programs import CASES  # noqa: E402

#: Every block name of the cases: TVM hands out loops by the block they are around.
BLOCKS = ("upd", "B", "B_o", "outer")


def _loop(sch, name: str):
    """TVM's handle of the loop over ``name``, looked up through the blocks' loops."""
    for block in BLOCKS:
        try:
            loops = sch.get_loops(sch.get_sblock(block))
        except Exception:  # no such block in this case  # noqa: BLE001
            continue
        for loop in loops:
            if sch.get(loop).loop_var.name == name:
                return loop
    raise LookupError(name)


@pytest.mark.parametrize("name", list(CASES))
def test_tvm_takes_and_refuses_what_reorder_does(name):
    from tvm import s_tir
    from tvm.script import from_source

    program, order, taken, _ = CASES[name]
    sch = s_tir.Schedule(from_source(program))
    loops = [_loop(sch, x) for x in order]
    if not taken:
        with pytest.raises(Exception, match="not under the same scope"):
            sch.reorder(*loops)
        return
    sch.reorder(*loops)
    # Ours on the function TVM read (its blocks declare the regions TVM infers).
    ours = pp.Schedule(pptvm.from_tvm(from_source(program)))
    ours.reorder(*order)
    pp.assert_structural_equal(pptvm.from_tvm(sch.mod["main"]), ours.func)
