"""Vector dtypes: ``T.Ramp``, ``T.Broadcast``, vector loads and slice stores.

What TVM's ``VectorizeLoop`` prints reads into vector IR, prints back as
TVM writes it (a store as a slice), runs on both executors with a vector
store's meaning (every lane computed, then stored), and the model reads a
vector access as its lanes' accesses.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both

import analyses
from polypad.errors import VerifyError
from polypad.ir import nodes as n
from polypad.ir.lanes import lane, lanes
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.script import parse, script

SAXPY = '''
@T.prim_func
def saxpy(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        B[i * 4:i * 4 + 4] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2.0), 4) + \\
            B[T.Ramp(i * 4, 1, 4)]
'''


def test_vector_ir_and_its_printing():
    f = roundtrip(SAXPY)
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    (ramp,) = store.indices
    assert isinstance(ramp, n.Ramp) and ramp.lanes == 4 and ramp.dtype == "int32x4"
    assert store.value.dtype == "float32x4"
    assert "B[i * 4:i * 4 + 4] = " in script(f)
    a, b = arguments(f)
    out = run_both(f, [a, b])[1]
    np.testing.assert_allclose(out, a * 2 + b)


def test_a_strided_store_is_a_slice_with_a_step():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for j in range(4):
            B[j:j + 16:4] = A[T.Ramp(j * 4, 1, 4)]
    ''')
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    assert store.indices[0].stride.value == 4
    assert "B[j:j + 16:4] = A[T.Ramp(j * 4, 1, 4)]" in script(f)
    a, b = arguments(f)
    out = run_both(f, [a, b])[1]
    np.testing.assert_array_equal(out, a.reshape(4, 4).T.reshape(16))  # a transpose


def test_a_vector_store_computes_every_lane_before_it_stores():
    f = roundtrip('''
    @T.prim_func
    def shift(A: T.Buffer((8,), "float32")):
        A[1:5] = A[T.Ramp(0, 1, 4)]
    ''')
    a = np.arange(8, dtype="float32")
    out = run_both(f, [a])[0]
    np.testing.assert_array_equal(out, [0, 0, 1, 2, 3, 5, 6, 7])  # not 0, 0, 0, 0, 0


def test_vector_lets_and_the_older_broadcast():
    f = roundtrip('''
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        v: T.let[T.float32x4] = A[T.Ramp(0, 2, 4)] * T.Broadcast(T.float32(3.0), 4)
        A[0:4] = v + v
        B[0:4] = T.broadcast(7, 4)
    ''')
    a, b = arguments(f)
    a2, b2 = run_both(f, [a, b])
    np.testing.assert_allclose(a2[:4], a[0:8:2] * 6, rtol=1e-6)
    np.testing.assert_array_equal(b2[:4], 7)


def test_lanes():
    i = n.Var("i")
    ramp = n.Ramp(i * 4, n.IntImm(2), 4)
    assert script(lane(ramp, 3)).strip() == "i * 4 + 6"
    assert [script(x).strip() for x in lanes(n.Broadcast(i, 2))] == ["i", "i"]
    buf = n.Buffer("A", (16,))
    assert script(lane(buf[ramp] + 1.0, 1)).strip() == "A[i * 4 + 2] + 1.0"


def test_the_model_reads_each_lane():
    f = parse(textwrap.dedent(SAXPY))
    touched = analyses.domain_touched(f, "B", "write")
    assert touched.exact and touched.set.count_val().to_python() == 16
    strided = parse(textwrap.dedent('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A[0:16:4] = T.Broadcast(T.float32(1.0), 4)
    '''))
    elements = analyses.domain_touched(strided, "A", "write").set
    assert elements.is_equal(elements.read_from_str(elements.get_ctx(),
                                                    "{ A[e] : e mod 4 = 0 and 0 <= e <= 12 }"))


def test_a_lane_past_the_end_is_refuted_with_that_lane():
    f = parse(textwrap.dedent(SAXPY.replace("range(4)", "range(5)")))
    refuted = analyses.check_bounds(f)
    assert isinstance(refuted, analyses.Refuted)
    assert refuted.counterexample.element.indices == (16,)


def test_value_analyses_read_a_vector_statement_lane_by_lane():
    f = parse(textwrap.dedent(SAXPY))
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    answer = analyses.is_no_op(f, store)
    assert isinstance(answer, analyses.Refuted), answer
    cex = answer.counterexample
    assert cex.element == analyses.Element("B", (0,))
    assert [i.statement for i in cex.instances] == ["S0", "END"]  # lane 0, read by the caller


@pytest.mark.parametrize("build, problem", [
    (lambda A: n.BufferStore(A, n.FloatImm(0.0), (n.Ramp(n.IntImm(0), n.IntImm(1), 4),)),
     "store to A (float32) of a float32 value"),
    (lambda A: n.Evaluate(n.Broadcast(n.Broadcast(n.FloatImm(0.0), 2), 2)),
     "T.Broadcast takes a scalar"),
    (lambda A: n.Evaluate(n.Ramp(n.FloatImm(0.0), n.FloatImm(1.0), 4)),
     "T.Ramp's base and stride must be int"),
])
def test_verify_checks_vectors(build, problem):
    A = n.Buffer("A", (8,))
    with pytest.raises(VerifyError) as info:
        verify(n.PrimFunc("f", (A,), build(A)))
    assert problem in str(info.value)


def test_a_slice_of_variable_length_is_refused():
    err = parse_error('''
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        A[0:n] = T.Broadcast(T.float32(1.0), 4)
    ''')
    assert (err.lineno, err.col) == (4, 7)
    assert err.message.startswith("a vector store's slice spans a constant number of lanes")
