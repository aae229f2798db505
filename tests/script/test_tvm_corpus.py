"""Issue 22's measure: the TVMScript TVM prints, parsed as printed.

Two corpora: 60 functions TVM 0.27 prints (``tests/tvm_corpus.py``, made
with the installed TVM; skipped without it) and 60 older functions from
TVM's test suite (``tests/examples/tvm_legacy``).  Every function parses
(docs/tvmscript.md says 60 of 60 in each; a refusal is listed with its line
and column), is well formed and survives ``parse(script(f))`` exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from polypad.errors import ParseError
from polypad.ir.nodes import IRModule
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.script import parse, script

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tvm_corpus import legacy_corpus  # noqa: E402


def _tvm_corpus():
    pytest.importorskip("tvm")
    from tvm_corpus import corpus

    return corpus()


def _outcomes(functions):
    parsed, refused = {}, {}
    for name, _, text in functions:
        try:
            parsed[name] = parse(text, name)
        except ParseError as err:
            refused[name] = err
    return parsed, refused


def _functions(made):
    return made.funcs if isinstance(made, IRModule) else (made,)


def test_the_tvm_027_corpus_is_sixty_functions_of_four_families():
    functions = _tvm_corpus()
    assert len(functions) == 60
    families = {family for _, family, _ in functions}
    assert families == {"te", "schedule", "lowered", "packed"}
    texts = "\n".join(text for _, _, text in functions)
    for spelling in ("from tvm.script import tirx as T", "@T.prim_func(s_tir=True)",
                     "T.sblock(", "T.sblock_alloc_buffer(", ".view(", "T.let[T.int32]",
                     "T.Ramp(", "T.Broadcast(", '("n", ', "TypeVar(", "T.tvm_struct_get(",
                     "-> T.int32", "T.Select(", "T.rsqrt(", '"layout_free_buffers": [1]'):
        assert spelling in texts, spelling


def test_tvm_027_functions_parse_as_printed():
    parsed, refused = _outcomes(_tvm_corpus())
    assert not refused, "\n".join(str(err).splitlines()[0] for err in refused.values())
    assert len(parsed) == 60


def test_older_functions_parse_as_printed():
    functions = legacy_corpus()
    assert len(functions) == 60
    parsed, refused = _outcomes(functions)
    assert not refused, "\n".join(str(err).splitlines()[0] for err in refused.values())
    assert len(parsed) == 60


def test_every_older_function_names_its_origin():
    for name, _, text in legacy_corpus():
        assert text.startswith("# Origin: apache/tvm, tests/python/"), name
        assert "Apache License 2.0" in text.splitlines()[2], name


@pytest.mark.parametrize("which", ["tvm-0.27", "legacy"])
def test_parsed_functions_are_well_formed_and_round_trip(which):
    functions = _tvm_corpus() if which == "tvm-0.27" else legacy_corpus()
    parsed, _ = _outcomes(functions)
    for name, made in parsed.items():
        for f in _functions(made):
            verify(f)
        printed = script(made)
        again = parse(printed)
        assert_structural_equal(again, made)
        assert script(again) == printed, name  # printing is a fixed point
