"""The views fuzz (``benchmarks/fuzz.py --shapes views``): its programs and its check.

``tests/fuzz_views.py`` writes nests that go through views of ``A`` at
offsets; these tests pin that it is deterministic per seed, that a few
seeds hold every shape it claims (and the parser keeps them: ``int64``
counters, ``T.if_then_else`` in an index), that its accesses stay in bounds
and its assumptions hold on the inputs drawn, that the fuzz script runs a
case of the shape clean, and that its check catches a rewrite through a
view that changes a result.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz_programs import Seeded
from fuzz_support import Report, compare, make_case
from fuzz_views import views_program

from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.script import parse

SEEDS = range(8)


def test_the_same_seed_writes_the_same_program():
    assert views_program(Seeded(5)).text == views_program(Seeded(5)).text
    assert views_program(Seeded(5)).text != views_program(Seeded(6)).text


def test_the_programs_hold_every_shape_and_parse_to_it():
    features: set[str] = set()
    seen: set[str] = set()
    for seed in SEEDS:
        program = views_program(Seeded(seed))
        features |= program.features
        func = parse(program.text)
        nodes = list(walk(func.body))
        views = [x.buffer for x in nodes if isinstance(x, n.DeclBuffer)]
        assert {v.name for v in views} >= {"A_1", "A_2"}, seed
        assert all(v.data is func.params[0] for v in views), seed  # A_3 too: TVM's pointer
        if any(isinstance(x, n.For) and x.var.dtype == "int64" for x in nodes):
            seen.add("int64")
        if any(isinstance(x, (n.BufferStore, n.BufferLoad))
               and any(isinstance(y, n.Select) for i in x.indices for y in walk(i))
               for x in nodes):
            seen.add("select")
        if any(isinstance(x, n.Call) and x.op == "assume" for x in nodes):
            seen.add("assume")
    assert features == {"int64", "select", "reduce", "assume", "nested view"}
    assert seen == {"int64", "select", "assume"}


def test_every_program_runs_in_bounds_on_inputs_that_keep_its_assumptions():
    for seed in SEEDS:
        program = views_program(Seeded(seed))
        case = make_case(program.text, seed, program.n_values, scalars=program.n_values)
        assert case is not None, program.text


def test_the_fuzz_script_runs_a_views_case_clean():
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import fuzz

    outcome = fuzz.run_case(20010, 5, "views")
    assert outcome.invalid is None and outcome.report is not None, outcome.text
    outcome.report.assert_clean(outcome.text)
    assert outcome.report.questions > 0


def test_a_rewrite_through_a_view_that_changes_a_result_is_caught():
    program = views_program(Seeded(0))
    case = make_case(program.text, 0, program.n_values, scalars=program.n_values)
    store = next(s for s in walk(case.func.body) if isinstance(s, n.BufferStore)
                 and s.buffer.name.startswith("A_"))
    wrong = replace(case.func, store, n.BufferStore(store.buffer, store.value + 1,
                                                    store.indices))
    report = Report()
    compare(case, wrong, "adding one", report)
    assert [(f.kind, f.what) for f in report.findings] == [("unsound", "adding one")]
    assert "differs" in report.findings[0].detail
