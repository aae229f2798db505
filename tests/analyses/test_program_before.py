"""``Program.before`` is program order: its shortcut agrees with ISL's lexicographic order.

Sites in different top-level items are ordered by their first time
dimension alone, and ``Program.before`` builds that relation directly; every
other pair goes through ``lex_lt_map`` on the 2d+1 times.  On every RFC
example and on random programs, each pair must equal the lexicographic
order of the two sites' times.
"""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from structural_brute import random_program

import polypad as pp
from analyses.program import Program
from polypad.ir import nodes as n

EXAMPLES = Path(__file__).parents[1] / "examples" / "rfc0077"


def _funcs():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            yield pytest.param(f, id=f"{path.stem}.{f.name}")


def _lex_before(program: Program, a, b) -> isl.Map:
    ta, tb = program.time(a), program.time(b)
    common = min(len(a.slots), len(b.slots)) * 2 - 1
    ta = ta.project_out(isl.dim_type.out, common, ta.dim(isl.dim_type.out) - common)
    tb = tb.project_out(isl.dim_type.out, common, tb.dim(isl.dim_type.out) - common)
    return ta.lex_lt_map(tb)


def _assert_program_order(f: n.PrimFunc) -> None:
    program = Program(f)
    for a in program.sites:
        for b in program.sites:
            got, want = program.before(a, b), _lex_before(program, a, b)
            assert got.get_space() == want.get_space(), (a.index, b.index)
            assert got.is_equal(want), (a.index, b.index, got, want)


@pytest.mark.parametrize("f", list(_funcs()))
def test_before_is_the_lexicographic_order_of_the_times(f):
    _assert_program_order(f)


@settings(max_examples=60, deadline=None)
@given(random_program(local=True))
def test_before_is_program_order_on_random_programs(text):
    _assert_program_order(pp.parse(text))
