"""domain_touched: exact sets with their predicates, against hand-written sets and
against the accesses a run really makes."""

from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from structural_brute import points, random_args, random_program, trace

import analyses
from analyses.touched import Touched
from polypad.errors import NotFoundError
from polypad.ir import nodes as n
from polypad.ir.nodes import SeqStmt
from polypad.model import to_set
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name):
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


def same(got: isl.Set, text: str):
    assert got.is_equal(isl.Set(text)), f"{got} != {text}"


def test_sequential_access_writes_the_unpadded_elements():
    t = analyses.domain_touched(load("sequential_access_14_after"), "A", "write")
    assert isinstance(t, Touched) and t.exact and t.dropped == ()
    same(t.set, "{ A[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii < 14 }")
    assert str(t) == "A[i, j] for 0 <= i and 0 <= j < 4 and 4 * i + j < 14"
    assert analyses.domain_touched(load("sequential_access_14_after"), "A", "read").is_empty()


def test_a_single_element_prints_as_itself():
    t = analyses.domain_touched(load("never_read_after"), "B")
    same(t.set, "{ B[0] }")
    assert str(t) == "B[0]"


GUARDED = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    if n > 3:
        for i in T.serial(14):
            A[i] = 1.0
    for io in T.serial(4):
        for ii in T.serial(4):
            if 4 * io + ii < n:
                A[4 * io + ii] = 2.0
"""


def test_predicate_on_a_scalar_parameter():
    f = parse(GUARDED)
    first = analyses.domain_touched(f.body.stmts[0], "A")
    same(first.set, "[n] -> { A[i] : 0 <= i < 14 and n >= 4 }")
    assert str(first) == "A[i] for 0 <= i < 14 when n >= 4"
    assert to_set(first.predicate, ()).params().is_equal(isl.Set("[n] -> { : n >= 4 }"))
    assert first.parts[0].when.is_equal(isl.Set("[n] -> { : n >= 4 }"))
    whole = analyses.domain_touched(f, "A", "write")
    same(whole.set, "[n] -> { A[i] : 0 <= i < 14 and n >= 4; A[i] : 0 <= i < 16 and i < n }")
    assert whole.contains((15,), {"n": 16}) and not whole.contains((15,), {"n": 15})
    assert whole.contains((13,), {"n": 4}) and not whole.contains((13,), {"n": 3})


def test_statement_argument_makes_outer_loop_variables_parameters():
    f = parse(GUARDED)
    inner = f.body.stmts[1].body  # the loop over ii, inside the loop over io
    t = analyses.domain_touched(inner, "A")
    # Alone, io is any int32: 4 * io + ii may wrap around, so the guard that
    # compares it is dropped (an over-approximation, and said so).  The
    # index itself is exact: a wrapped index would be outside A anyway.
    same(t.set, "[io] -> { A[i] : 4io <= i < 4io + 4 }")
    assert not t.exact and len(t.dropped) == 1
    assert str(t) == ("A[i] for 4 * io <= i < 4 * io + 4 "
                      "(over-approximated: dropped 4 * io + ii < n)")
    io = t.params["io"]
    assert io.name == "io"
    assert to_set(t.condition(), t.index_vars).is_equal(
        isl.Set("[io] -> { [i] : 4io <= i < 4io + 4 }"))


def test_inside_its_loop_the_counter_is_bounded_and_the_guard_exact():
    f = parse(GUARDED)
    t = analyses.domain_touched(SeqStmt((f.body.stmts[1],)), "A")
    same(t.set, "[n] -> { A[i] : 0 <= i < 16 and i < n }")
    assert t.exact


def test_data_dependent_guard_over_approximates_and_says_so():
    t = analyses.domain_touched(load("simplify_data_dependent_before"), "A", "write")
    assert not t.exact
    assert len(t.dropped) == 1 and isinstance(t.dropped[0], n.Lt)
    same(t.set, "{ A[i] : 0 <= i < 16 }")
    assert str(t) == "A[i] for 0 <= i < 16 (over-approximated: dropped A[i] < 0.0)"


def test_load_under_data_dependent_select_is_flagged():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        B[i] = T.if_then_else(A[i] > 0.0, A[7 - i], 0.0)
""")
    t = analyses.domain_touched(f, "A", "read")
    assert not t.exact and len(t.dropped) == 1
    same(t.set, "{ A[i] : 0 <= i < 8 }")
    assert analyses.domain_touched(f, "B", "write").exact


def test_assume_reads_count_only_when_asked():
    f = load("remove_noop_sum_before")
    assert str(analyses.domain_touched(f, "B", "read")) == "B[0]"
    g = parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(A[i] == 0.0)
""")
    assert analyses.domain_touched(g, "A").is_empty()
    assert str(analyses.domain_touched(g, "A")) == "nothing of A"
    same(analyses.domain_touched(g, "A", assumes=True).set, "{ A[i] : 0 <= i < 4 }")


def test_bad_arguments():
    f = load("never_read_after")
    with pytest.raises(NotFoundError, match="no buffer 'Z'"):
        analyses.domain_touched(f, "Z")
    with pytest.raises(ValueError, match="kind must be one of"):
        analyses.domain_touched(f, "A", "modify")
    with pytest.raises(TypeError):
        analyses.domain_touched("f", "A")


def _at(s: isl.Set, n_value: int) -> set:
    k = s.find_dim_by_name(isl.dim_type.param, "n")
    if k >= 0:
        s = s.fix_val(isl.dim_type.param, k, isl.Val(str(n_value)))
    s = s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param))
    return points(s)


@settings(max_examples=100, deadline=None)
@given(random_program(local=True, param="n"))
def test_random_nests_touch_exactly_what_a_run_touches(text):
    f = parse(text)
    touched = {(name, kind): analyses.domain_touched(f, name, kind)
               for name in ("A", "B", "C", "X") for kind in ("read", "write", "any")}
    for n_value in (0, 3, 9):
        record = trace(f, random_args(f, 0, n=n_value))
        seen = {"read": set().union(*record.reads), "write": set().union(*record.writes)}
        seen["any"] = seen["read"] | seen["write"]
        for (name, kind), t in touched.items():
            assert t.exact
            want = {index for buf, index in seen[kind] if buf == name}
            assert _at(t.set, n_value) == want, (name, kind, n_value)
