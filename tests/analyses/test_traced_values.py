"""Counterexamples that need the value a statement left: traced write by write.

A reduction's init, run on every step instead of the first, overwrites a
running value; whether that changes anything depends on the value there,
which no stored fact gives (``C[i, j] = C[i, j] + ...`` states nothing).
At one concrete point the value is fixed by the inputs, and
``analyses.traced_values`` writes it out, so these answer ``Refuted`` with
the instance, the element and the values -- each checked by running the
function both ways (``overcompute_brute``).
"""

from __future__ import annotations

from overcompute_brute import reads_differ, results_differ

import analyses
import polypad as pp
from analyses import Element, Refuted, Unknown, context_at, prove
from analyses import traced_values as tv
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

MATMUL = '''
@T.prim_func
def matmul(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3, 4), "float32"),
           C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 3):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

# Two reductions, the second reading the first: the sum's terms need the final maximum.
SOFTMAX = '''
@T.prim_func
def softmax(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
    m = T.alloc_buffer((2,))
    s = T.alloc_buffer((2,))
    for i, k in T.grid(2, 4):
        with T.block("maximum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                m[vi] = T.float32(-3.4e38)
            m[vi] = T.max(m[vi], x[vi, vk])
    for i, k in T.grid(2, 4):
        with T.block("total"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = 0.0
            s[vi] = s[vi] + T.exp(x[vi, vk] - m[vi])
    for i, k in T.grid(2, 4):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            y[vi, vk] = T.exp(x[vi, vk] - m[vi]) / s[vi]
'''


def ifs(f):
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def stores(f):
    return [x for x in walk(f.body) if isinstance(x, n.BufferStore)]


def test_a_matmul_init_run_on_every_step_is_refuted_with_the_inputs_that_show_it():
    f = pp.parse(MATMUL)
    (init,) = ifs(f)
    decided = analyses.can_remove_conditional(f, init)
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    assert "rule 3 fails" in cex.description  # the no-op rules refute, no run needed
    assert cex.instances[0].indices == {"i": 0, "j": 0, "k": 1}
    assert cex.element == Element("C", (0, 0))
    # What the init overwrites at k = 1 is the first product, from the inputs shown.
    values = cex.values
    assert values["C[0, 0]"] == values["input A[0, 0]"] * values["input B[0, 0]"] != 0.0
    assert results_differ(f, init)


def test_the_prover_traces_a_running_sum_back_to_the_inputs():
    f = pp.parse(MATMUL)
    update = stores(f)[1]
    ctx = context_at(f, update)
    i, j, k = ctx.loop_vars
    claim = n.BufferLoad(update.buffer, update.indices).equal(n.FloatImm(0.0, "float32"))
    decided = prove(claim, ctx.with_condition(k >= 1))
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    (point,) = cex.instances
    (row, col) = cex.element.indices
    assert point.indices["k"] >= 1 and (point.indices["i"], point.indices["j"]) == (row, col)
    # The running sum before step k is the sum of k products, all of them inputs.
    key = f"C[{row}, {col}]"
    products = sum(cex.values[f"input A[{row}, {m}]"] * cex.values[f"input B[{m}, {col}]"]
                   for m in range(point.indices["k"]))
    assert cex.values[key] == products != 0.0


def test_both_inits_of_a_two_reduction_softmax_are_refuted():
    f = pp.parse(SOFTMAX)
    maximum, total = ifs(f)
    for stmt, buffer in ((maximum, "m"), (total, "s")):
        decided = analyses.can_remove_conditional(f, stmt)
        assert isinstance(decided, Refuted), (buffer, decided)
        cex = decided.counterexample
        assert cex.instances[0].indices == {"i": 0, "k": 1}
        assert cex.element == Element(buffer, (0,))
        # Refuted means not a no-op: a later statement reads another value.
        assert reads_differ(f, stmt)
    # The sum restarted on every step changes the result; the maximum restarted changes
    # what the sum adds, though softmax is the same for any maximum subtracted.
    assert results_differ(f, total)


def test_a_value_behind_a_condition_on_data_is_not_traced():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32"), C: T.Buffer((4,), "float32")):
    B[0] = 0.0
    for i in T.serial(4):
        if A[i] > 0.0:
            B[0] = B[0] + A[i]
    for i in T.serial(4):
        C[i] = B[0]
''')
    last = stores(f)[-1]
    decided = prove(n.BufferLoad(f.params[1], (n.IntImm(0),)).equal(
        n.FloatImm(0.0, "float32")), context_at(f, last))
    assert isinstance(decided, Unknown), decided
    assert "which the prover does not track" in decided.reason


def test_a_trace_longer_than_its_limit_is_given_up(monkeypatch):
    monkeypatch.setattr(tv, "MAX_WRITES", 1)
    f = pp.parse(MATMUL)
    update = stores(f)[1]
    ctx = context_at(f, update)
    k = ctx.loop_vars[2]
    claim = n.BufferLoad(update.buffer, update.indices).equal(n.FloatImm(0.0, "float32"))
    decided = prove(claim, ctx.with_condition(k >= 2))
    assert isinstance(decided, Unknown), decided


def test_constant_values_are_the_executed_ones():
    eight = n.IntImm(8, "int8")
    assert tv.constant_value(eight * n.IntImm(16, "int8")) == -128  # int8 wraps
    assert tv.constant_value(n.FloorMod(n.IntImm(-7), n.IntImm(4))) == 1
    assert tv.constant_value(n.FloorDiv(n.IntImm(7), n.IntImm(0))) == 0
    assert tv.constant_value(n.Var("x") + 1) is None
