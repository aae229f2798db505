"""``remove_branching_through_overcompute`` reaches its fixpoint in one run.

A removal can make another conditional removable (RFC 0077, implicit default
pipeline, step 11: `if io == 0` may go only once the nested `if io == 2` has
gone), so one run must already leave nothing for a second run to remove:
``p(p(f)) == p(f)`` for every function of the RFC's walkthroughs, and for the
stages the primitives derive from the "before" forms.
"""

from __future__ import annotations

import pytest
from walk_support import EXAMPLES, rfc

import polypad as pp
from polypad.ir import nodes as n
from polypad.ir.structural import structural_equal
from polypad.ir.visitor import walk
from polypad.transform import explain_branching_through_overcompute as explain
from polypad.transform import remove_branching_through_overcompute as remove


def _with_conditionals():
    """``(stem, function name or None)`` for each RFC example function holding an ``if``."""
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = rfc(path.stem)
        funcs = parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]
        for f in funcs:
            if any(isinstance(x, n.IfThenElse) for x in walk(f.body)):
                name = f.name if isinstance(parsed, n.IRModule) else None
                yield pytest.param(path.stem, name, id=f"{path.stem}.{f.name}")


@pytest.mark.parametrize(("stem", "name"), list(_with_conditionals()))
def test_one_run_is_a_fixpoint_on_the_rfc_examples(stem, name):
    once = remove(rfc(stem, name))
    assert structural_equal(remove(once), once)


def _conv(n_out: int, factor: int, pad: float):
    f = pp.parse(f'''
@T.prim_func
def conv1d(A: T.Buffer(({n_out + 2},), "float32"), F: T.Buffer((3,), "float32"),
           B: T.Buffer(({n_out},), "float32")):
    with T.block("compute"):
        for i in T.serial({n_out}):
            B[i] = 0.0
            for f in T.serial(3):
                B[i] = B[i] + F[f] * A[i + f]
''')
    sch = pp.Schedule(f)
    sch.transform_layout("compute", "A", lambda i: [i // factor, i % factor], pad_value=pad)
    sch.transform_layout("compute", "B", lambda i: [i // factor, i % factor], pad_value=pad)
    sch.sequential_buffer_access("compute", "B")
    return sch.func


def _row_sum(rows: int, cols: int, factor: int):
    f = pp.parse(f'''
@T.prim_func
def row_summation(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    for i in T.serial({rows}):
        B[i] = 0.0
        for j in T.serial({cols}):
            B[i] = B[i] + A[i, j]
''')
    sch = pp.Schedule(f)
    sch.transform_layout(None, "A", lambda i, j: [i, j // factor, j % factor], pad_value=0.0)
    sch.sequential_buffer_access(None, "A")
    return sch.func


@pytest.mark.parametrize("make", [
    pytest.param(lambda: _conv(14, 4, 0.0), id="conv-14-x4-pad0"),
    pytest.param(lambda: _conv(13, 8, 0.0), id="conv-13-x8-pad0"),
    pytest.param(lambda: _conv(14, 4, 1.0), id="conv-14-x4-pad1"),
    pytest.param(lambda: _row_sum(6, 14, 4), id="rowsum-6x14-x4"),
    pytest.param(lambda: _row_sum(3, 29, 8), id="rowsum-3x29-x8"),
])
def test_one_run_is_a_fixpoint_on_derived_stages(make):
    f = make()
    once = remove(f)
    assert structural_equal(remove(once), once)


def test_the_report_has_one_entry_per_conditional_with_its_last_decision():
    f = rfc("implicit_default_step11")
    report = explain(f)
    assert [e.condition for e in report.entries] == ["io == 0", "io == 2"]
    assert all(e.removed for e in report.entries)
    assert not any(isinstance(x, n.IfThenElse) for x in walk(report.func.body))
