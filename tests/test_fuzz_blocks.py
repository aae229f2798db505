"""The block-nest fuzz (``benchmarks/fuzz.py --shapes blocks``): its programs and its check.

``tests/fuzz_blocks.py`` writes TVM-style block nests; these tests pin that
it is deterministic per seed, that what it writes parses with every binding
proved in its domain, that the block primitives of
``tests/fuzz_block_primitives.py`` keep a few seeds' results in both
executors, and that the check catches a rewrite that changes a result.
"""

from __future__ import annotations

import pytest
from fuzz_block_primitives import BLOCK_PRIMITIVES, blocks, check_block_primitives, compare_both
from fuzz_blocks import block_program
from fuzz_programs import Seeded
from fuzz_support import Report, make_case

import analyses
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.script import parse

PROVED = analyses.Proved("isl", "every block axis binding stays in its domain")


def test_the_same_seed_writes_the_same_block_nest():
    assert block_program(Seeded(11)).text == block_program(Seeded(11)).text
    assert block_program(Seeded(11)).text != block_program(Seeded(12)).text


def test_the_block_nests_parse_with_every_binding_in_its_domain():
    kinds = set()
    for seed in range(12):
        func = parse(block_program(Seeded(seed)).text)
        found = blocks(func)
        assert found, seed
        kinds |= {a.kind for b in found for a in b.header.axes}
        kinds |= {"init" for b in found if b.header.init}
        kinds |= {"where" for b in found if b.header.where}
        kinds |= {"nested" for b in found if any(isinstance(s, n.Block) and s is not b
                                                 for s in walk(b.body))}
        assert analyses.check_block_bindings(func) == PROVED, seed
    assert kinds == {"S", "R", "init", "where", "nested"}


def _case(seed: int):
    case = make_case(block_program(Seeded(seed)).text, seed)
    assert case is not None
    return case


@pytest.mark.parametrize("seed", [3, 8])
def test_block_primitives_keep_the_results_in_both_executors(seed):
    report = Report()
    names = ["split+compute_at", "split+rfactor", "cache_write", "decompose_reduction"]
    check_block_primitives(_case(seed), report, Seeded(seed), names)
    report.assert_clean(_case(seed).text)
    assert any(line.startswith("applied: ") for line in report.log), report.log


def test_a_rewrite_that_changes_a_result_is_caught():
    case = _case(3)
    store = next(s for s in walk(case.func.body) if isinstance(s, n.BufferStore)
                 and s.buffer.name in ("C", "D"))
    wrong = replace(case.func, store, n.BufferStore(store.buffer, store.value + store.value,
                                                    store.indices))
    report = Report()
    compare_both(case, wrong, "doubling", report)
    assert [(f.kind, f.what) for f in report.findings] == [("unsound", "doubling")]
    assert "differs" in report.findings[0].detail


def test_every_block_primitive_is_one_the_schedule_has():
    from polypad.schedule import Schedule

    for name in BLOCK_PRIMITIVES:
        for part in name.split("+"):
            assert part == "chain" or hasattr(Schedule, part), part
