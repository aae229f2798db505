"""Where a few statements' values are read is the full answer restricted.

``Dependences.tagged_flow_out_of`` (what a no-op question needs: the reads
outside a statement that may see a value it wrote) is read off the forward
flows of inputs narrowed to the statements that touch the elements the
sources write.  On every RFC example and on random programs it must equal
the whole function's ``flow`` and ``live_out`` relations restricted to
those sources and to sinks outside them.
"""

from __future__ import annotations

import islpy as isl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structural_brute import random_program
from test_dataflow_restrictions import MODELS

import polypad as pp
from analyses import flow_inputs as fi
from analyses.dataflow import _Flows
from polypad.errors import NotAffineError
from polypad.model import extract


def _writers(model):
    return [s for s in model.statements if any(a.kind == "write" for a in s.accesses)]


def _elements(statements) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))
    for s in statements:
        for a in s.accesses:
            if a.kind == "write":
                out = out.union(isl.UnionSet.from_set(a.relation.range()))
    return out


def _want(full: _Flows, names: frozenset[str]) -> isl.UnionMap:
    flows = full.tagged("flow").union(full.tagged("live_out"))
    return fi.keep_maps(flows, lambda m: fi.statement_of(m.get_space().domain()) in names
                        and fi.statement_of(m.get_space().range()) not in names)


def _assert_out_of_matches(model) -> None:
    full = _Flows(model)
    # The whole function's flows, a second time (uncached): each group's question
    # reads them afresh (flow_out_of keeps one answer per group of names), and
    # computing them again per group would ask ISL the same dataflow each time.
    whole = _Flows(model)
    writers = _writers(model)
    # One statement, and two neighbours together (a loop around two stores).
    groups = [[s] for s in writers] + [list(p) for p in zip(writers, writers[1:])]
    for group in groups:
        names = frozenset(s.name for s in group)
        want = _want(full, names)
        narrow = _Flows(model, None, _elements(group))  # uncached: always narrowed
        for about_none, flows in ((True, whole), (False, narrow)):
            assert flows.flow_out_of(names).is_equal(want), (sorted(names), about_none)


@pytest.mark.parametrize("model", MODELS)
def test_flows_out_of_a_statement_are_the_forward_flows_restricted(model):
    _assert_out_of_matches(model)


@settings(max_examples=80, deadline=None)
@given(random_program(local=True))
def test_flows_out_of_match_on_random_programs(text):
    try:
        model = extract(pp.parse(text))
    except NotAffineError:
        return
    _assert_out_of_matches(model)


@settings(max_examples=80, deadline=None)
@given(random_program(local=True, param="n"), st.lists(st.booleans(), min_size=6, max_size=6))
def test_flows_out_of_match_with_data_dependent_guards_and_parameters(text, on_data):
    # Some guards also test data: their stores become may-writes, which kill nothing.
    lines = text.splitlines()
    guards = [k for k, line in enumerate(lines) if line.lstrip().startswith("if ")]
    for k, data in zip(guards, on_data):
        if data:
            lines[k] = lines[k].replace("if ", "if A[1] > 0.0 and ", 1)
    try:
        model = extract(pp.parse("\n".join(lines) + "\n"))
    except NotAffineError:
        return
    _assert_out_of_matches(model)


OVERWRITTEN_IN_ITS_OWN_LOOP = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for i in T.serial(4):
        X[i // 2] = A[i]
        B[i] = X[i // 2] + X[0]
    for i in T.serial(8):
        X[i] = 0.0
'''


def test_a_value_overwritten_by_the_statement_itself_reaches_only_the_reads_between():
    model = extract(pp.parse(OVERWRITTEN_IN_ITS_OWN_LOOP))
    _assert_out_of_matches(model)
    got = _Flows(model).flow_out_of(frozenset({"S0"}))
    # S0 at i writes X[i // 2]: S1 at the same i reads it; X[0], last written at
    # i = 1, is read by S1 up to the end of the loop; the last loop reads nothing.
    assert got.is_equal(isl.UnionMap(
        "{ [S0[i] -> X[e]] -> [S1[i] -> X[e]] : 0 <= i <= 3 and e = floor(i/2); "
        "[S0[i] -> X[0]] -> [S1[i] -> X[0]] : 0 <= i <= 1; "
        "[S0[1] -> X[0]] -> [S1[j] -> X[0]] : 2 <= j <= 3 }")), got
