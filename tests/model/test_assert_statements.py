"""The model holds a plain ``assert``: an instance per iteration, ordered against stores.

An assert on scalar values is a statement of the model (it used to refuse the
whole function); the dependences keep every store on its side of every assert
instance through the pseudo-location ``assert_order[]`` (analyses/assert_order.py);
the deciders built on them answer about such functions.  An assert that reads a
buffer is still refused, by a message that says what polypad does with it.
"""

import islpy as isl
import pytest

import analyses
from analyses import Instance, Proved, Refuted, Unknown
from analyses.assert_order import order_element
from analyses.loop_carried import carried_dependence
from polypad.errors import UnmodelledError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.script import parse

# The brief's function: a loop, a check of n, a loop.
AROUND = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = 1.0
    for j in range(8):
        C[j] = 2.0
    assert n > 2, "n"
    for k in range(8):
        B[k] = A[k]
""")

PER_ITERATION = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32")):
    for i in range(8):
        x: T.let[T.float32] = A[i]
        assert i < n and x == x, "i < n"
        A[i] = x + 1.0
""")


def umap(text: str) -> isl.UnionMap:
    return isl.UnionMap(text)


def test_an_assert_is_a_statement_with_an_instance_per_iteration():
    m = extract(PER_ITERATION)
    check, store = m.statements
    assert isinstance(check.stmt, n.Assert) and check.is_assert and not check.is_store
    assert check.domain.is_equal(isl.Set("{ S0[i] : 0 <= i <= 7 }"))
    # It writes nothing, and reads what its condition reads (through the let).
    assert {a.kind for a in check.accesses} == {"read"}  # A[i] for each x
    assert check.reads.is_equal(umap("{ S0[i] -> A[i] : 0 <= i <= 7 }"))


def test_the_dependences_keep_each_store_between_the_asserts_around_it():
    d = analyses.dependences(AROUND)
    assert d.flow.is_equal(umap("{ S2[] -> S3[k] : 0 <= k <= 7; S0[i] -> S3[i] : 0 <= i <= 7 }"))
    assert d.anti.is_equal(umap("{ S0[i] -> S2[] : 0 <= i <= 7; S1[j] -> S2[] : 0 <= j <= 7 }"))
    assert d.output.is_empty()
    # No buffer is an input or an output through the pseudo-location.
    assert d.live_in.is_empty()
    assert d.live_out.range().is_equal(isl.UnionSet("{ A[e] : 0 <= e <= 7; B[e] : 0 <= e <= 7;"
                                                    " C[e] : 0 <= e <= 7 }"))


def test_a_loop_holding_one_per_iteration_carries_them():
    d = analyses.dependences(PER_ITERATION)
    assert d.output.is_equal(umap("{ S0[i] -> S0[i + 1] : 0 <= i <= 6 }"))
    assert d.anti.is_equal(umap("{ S1[i] -> S0[i + 1] : 0 <= i <= 6; S0[i] -> S1[i] : "
                                "0 <= i <= 7 }"))
    (loop,) = [x for x in walk(PER_ITERATION.body) if isinstance(x, n.For)]
    found = carried_dependence(PER_ITERATION, loop, "i")
    assert found.element == order_element()
    assert found.instances == (Instance("S0", {"i": 0}), Instance("S0", {"i": 1}))
    assert "`assert i < n and x == x` at line 6" in found.description


def test_merging_loops_on_one_side_is_proved_and_across_one_refuted():
    assert isinstance(analyses.can_merge_loops(AROUND, "i", "j"), Proved)
    checked = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = 1.0
        assert i < n, "i < n"
    for j in range(8):
        B[j] = A[j]
""")
    answer = analyses.can_merge_loops(checked, "i", "j")
    assert isinstance(answer, Refuted), answer
    cex = answer.counterexample
    assert cex.instances == (Instance("S1", {"i": 7}), Instance("S2", {"j": 0}))
    assert cex.element == order_element()
    assert "S2(j=0) stores after S1(i=7), which is `assert i < n` at line 6" in cex.description


def test_an_assert_that_reads_a_buffer_is_refused_by_a_true_message():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    assert A[0] > 0.0, "A[0] must be positive"
    for i in range(8):
        B[i] = A[i]
""")
    reason = ("'f' cannot be modelled: assert at line 4 is a check whose condition reads a "
              "buffer, a pointer or an opaque call itself, which polypad neither runs nor "
              "models (it runs and models an assert on scalar values, a let's value loaded "
              "from a buffer included)")
    with pytest.raises(UnmodelledError) as info:
        extract(f)
    assert str(info.value) == reason
    answer = analyses.check_bounds(f)
    assert isinstance(answer, Unknown) and answer.reason == reason


def test_a_buffer_named_like_the_pseudo_location_keeps_its_own_tuple():
    f = parse("""
@T.prim_func
def f(n: T.int32, assert_order: T.Buffer((4,), "float32")):
    for i in range(4):
        assert i < n, "i < n"
        assert_order[i] = 1.0
""")
    m = extract(f)
    assert m.buffer_name(f.params[1]) == "assert_order_1"
    d = analyses.dependences(f)
    assert d.flow.is_equal(umap("{ S0[i] -> S1[i] : 0 <= i <= 3 }"))
    assert d.live_out.is_equal(umap("{ S1[i] -> assert_order_1[i] : 0 <= i <= 3 }"))
