"""The narrowed dataflow questions give exactly the restricted full answers.

Both exist for speed (a no-op question is about the writes of one
statement): ``tagged_output_from`` computes the output dependences of a few
sources with time reversed, and ``Dependences(..., about=E)`` leaves out the
statements that touch no element of ``E``.  On every RFC example and on
random programs, each must equal the full relation restricted to those
sources or elements.
"""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from structural_brute import random_program

import polypad as pp
from analyses.dataflow import Dependences, _Flows
from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.model import extract

EXAMPLES = Path(__file__).parents[1] / "examples" / "rfc0077"


def _models():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            try:
                model = extract(f)
            except NotAffineError:
                continue
            yield pytest.param(model, id=f"{path.stem}.{f.name}")


MODELS = list(_models())


def _writers(model):
    return [s for s in model.statements if any(a.kind == "write" for a in s.accesses)]


def _from_statement(relation: isl.UnionMap, name: str) -> isl.UnionMap:
    """The maps of a tagged relation whose source is statement ``name``."""
    out = isl.UnionMap.empty(relation.get_space())
    listed = relation.get_map_list()
    for k in range(listed.n_map()):
        m = listed.get_at(k)
        if m.get_space().domain().unwrap().get_tuple_name(isl.dim_type.in_) == name:
            out = out.union(isl.UnionMap.from_map(m))
    return out


@pytest.mark.parametrize("model", MODELS)
def test_output_from_a_statement_is_the_full_output_restricted(model):
    _assert_output_from_matches(model)


def _assert_output_from_matches(model) -> None:
    full = _Flows(model).tagged("output")
    for s in _writers(model):
        # A fresh _Flows has no full output yet: output_from reverses time.
        narrow = _Flows(model).output_from(frozenset({s.name}))
        assert narrow.is_equal(_from_statement(full, s.name)), s.name
    # Once the full relation is at hand, it is filtered instead.
    deps = Dependences(model)
    deps.tagged("output")
    for s in _writers(model):
        assert deps.tagged_output_from([s.name]).is_equal(_from_statement(full, s.name))


@settings(max_examples=60, deadline=None)
@given(random_program(local=True))
def test_output_from_matches_on_random_programs(text):
    try:
        model = extract(pp.parse(text))
    except NotAffineError:
        return
    _assert_output_from_matches(model)


KINDS = ("flow", "flow_must", "live_out", "output", "anti")


def _assert_about_matches(model) -> None:
    full = _Flows(model)
    statements = isl.UnionSet.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))
    for s in model.statements:
        statements = statements.union(isl.UnionSet.from_set(isl.Set.universe(s.space.space)))
    for s in _writers(model):
        elements = isl.UnionSet.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))
        for a in s.accesses:
            if a.kind == "write":
                elements = elements.union(isl.UnionSet.from_set(a.relation.range()))
        narrow = _Flows(model, None, elements)  # uncached: always narrowed
        # Tagged sources [S -> Buf[e]] with e among the elements.
        tags = isl.UnionMap.from_domain_and_range(statements, elements).wrap()
        for kind in KINDS:
            want = full.tagged(kind).intersect_domain(tags)
            got = narrow.tagged(kind).intersect_domain(tags)
            assert got.is_equal(want), (s.name, kind)


@pytest.mark.parametrize("model", MODELS)
def test_flows_about_a_statements_elements_are_the_full_flows_restricted(model):
    _assert_about_matches(model)


@settings(max_examples=60, deadline=None)
@given(random_program(local=True))
def test_flows_about_elements_match_on_random_programs(text):
    try:
        model = extract(pp.parse(text))
    except NotAffineError:
        return
    _assert_about_matches(model)


# Narrowing the access relations themselves to the elements (rather than
# leaving whole statements out) made ISL pick S0 as the source of S1's read of
# X[1] here; the write of S1 at i0 = 0 is the last one.
OVERWRITTEN_BY_ITS_READER = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for i0 in T.serial(2):
        X[i0 + 1] = 1.0
        X[-i0 + 1] = X[i0] + 1.0
'''


def test_a_write_overwritten_before_the_reader_reads():
    model = extract(pp.parse(OVERWRITTEN_BY_ITS_READER))
    _assert_about_matches(model)
    s0 = model.statements[0]
    elements = isl.UnionSet.from_set(s0.accesses[0].relation.range())
    flow = _Flows(model, None, elements).tagged("flow")
    assert flow.is_equal(isl.UnionMap("{ [S1[0] -> X[1]] -> [S1[1] -> X[1]] }")), flow
