"""analyses.padding_writes: which store instances a later pad value overwrites unread.

The RFC's example and its conditions, the answer checked by execution (any value may be
stored at the instances found, and not at one more), and the exact counterexample of
each refusal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inputs_support import make_inputs

import codegen
from analyses import Counterexample, Element, Instance, Proved, Refuted, Unknown
from analyses.padding_writes import describe, known_value, pad_value_overwrites
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.verify import verify
from polypad.ir.visitor import Rewriter, walk
from polypad.script import parse
from polypad.transform import introduce_padding_conditionals, remove_overcompute_through_branching

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"

READ_ONE = """
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32"),
         C: T.Buffer((4,), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("read"):
        C[0] = B[3, 3]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""


def _run(kernel, args):
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*out)
    return out


@pytest.mark.parametrize("block", ["compute", None])
def test_rfc_example(block):
    path = EXAMPLES / "branching_conv1d_before.py"
    found = pad_value_overwrites(parse(path.read_text()), block)
    assert isinstance(found.decision, Proved) and found.left_out is None
    assert [(s.label, [show(c.condition) for c in s.cases], [c.pad_store for c in s.cases])
            for s in found.stores] == [
        ("compute_0", ["io == 3 and ii >= 2"], ["B_pad_value"]),
        ("compute_1", ["io == 3 and ii >= 2"], ["B_pad_value"]),
    ]
    assert describe(found).splitlines()[0] == (
        "compute_0: where io == 3 and ii >= 2, store 0.0 (left by B_pad_value)")
    # Instance sets, not points: 2 elements, 3 reduction steps each.
    assert found.stores[1].cases[0].instances.count_val().to_python() == 6


def test_a_read_of_one_padding_element_keeps_its_instances():
    found = pad_value_overwrites(parse(READ_ONE), "compute")
    assert [show(s.cases[0].condition) for s in found.stores] == ["ii == 2 and io == 3"] * 2
    assert found.left_out == Counterexample(
        "compute_1(io=3, ii=3, f=2) writes B[3, 3] and read() reads it before a store of a "
        "known value overwrites it",
        instances=(Instance("compute_1", {"io": 3, "ii": 3, "f": 2}), Instance("read", {})),
        element=Element("B", (3, 3)))


def test_known_values():
    f = parse(READ_ONE.replace("(A: T.Buffer", "(n: T.int32, A: T.Buffer"))
    n_var = f.params[0]
    load = n.BufferLoad(f.params[1], (n.IntImm(0), n.IntImm(0)))
    assert known_value(n.FloatImm(1.5, "float32"), f)
    assert known_value(n.Cast("float32", n_var), f)
    assert not known_value(load, f)
    assert not known_value(n.Call("undef", (), "float32"), f)
    assert not known_value(n.Var("i") + 1, f)


def test_values_at_the_kept_instances_are_never_seen():
    """Any value may be stored where the analysis says (999.0 here) -- and not at one
    instance more: 999.0 stored at B[3, 3], which block `read` reads, shows in C."""
    f = parse(READ_ONE)
    found = pad_value_overwrites(f, "compute")
    assert [s.label for s in found.stores] == ["compute_0", "compute_1"]
    args = make_inputs(f, np.random.default_rng(5))
    reference = codegen.build(f, target="python")
    kept = _garbled(f, found, lambda entry, io, ii: entry.cases[0].condition)
    want, got = _run(reference, args), _run(codegen.build(kept, target="python"), args)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(b, a)
    three = n.IntImm(3)
    one_more = _garbled(f, found, lambda entry, io, ii: n.And(n.Eq(io, three), n.Eq(ii, three)))
    assert _run(codegen.build(one_more, target="python"), args)[2][0] == 999.0


def _garbled(f: n.PrimFunc, found, condition) -> n.PrimFunc:
    """``f`` with each store the analysis names storing 999.0 where ``condition`` holds."""
    io, ii = [x.var for x in walk(f.body) if isinstance(x, n.For)][:2]
    new = {}
    for entry in found.stores:
        store = entry.store
        garbage = n.BufferStore(store.buffer, n.FloatImm(999.0, "float32"), store.indices)
        new[id(store)] = n.IfThenElse(condition(entry, io, ii), garbage, store)

    class Put(Rewriter):
        def visit(self, node):
            return new.get(id(node)) or super().visit(node)

    out = Put().visit(f)
    verify(out)
    return out


# ---------------------------------------------------------------- nothing to do

UNCHANGED = {
    "no_pad_value_store": ("""
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii]
""", Counterexample(
        "no later store of a known value overwrites what block 'compute' writes: "
        "compute(io=0, ii=0) writes B[0, 0] and no pad-value store writes it afterwards",
        instances=(Instance("compute", {"io": 0, "ii": 0}),), element=Element("B", (0, 0)))),
    "pad_value_store_before": ("""
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii]
""", Counterexample(
        "no later store of a known value overwrites what block 'compute' writes: "
        "compute(io=0, ii=0) writes B[0, 0] and no pad-value store writes it afterwards",
        instances=(Instance("compute", {"io": 0, "ii": 0}),), element=Element("B", (0, 0)))),
    "read_of_the_padding_between": (READ_ONE.replace(
        "C[0] = B[3, 3]", "for ii in T.serial(4):\n            C[ii] = B[3, ii]"),
        Counterexample(
            "compute_1(io=3, ii=2, f=2) writes B[3, 2] and read(ii=2) reads it before a "
            "store of a known value overwrites it",
            instances=(Instance("compute_1", {"io": 3, "ii": 2, "f": 2}),
                       Instance("read", {"ii": 2})), element=Element("B", (3, 2)))),
    "pad_value_store_guarded_by_data": ("""
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2 and A[0, 0] > 0.0:
                B[io, ii] = 0.0
""", Counterexample(
        "compute(io=3, ii=2) writes B[3, 2], and that value may still be there when func "
        "returns: no store of a known value overwrites it on every path",
        instances=(Instance("compute", {"io": 3, "ii": 2}), Instance("END", {})),
        element=Element("B", (3, 2)))),
    "padding_read_by_a_guard": ("""
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32"),
         C: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii]
            if B[io, ii] > 0.0:
                C[io, ii] = 1.0
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
""", Counterexample(
        "compute_0(io=3, ii=2) writes B[3, 2] and compute_1(io=3, ii=2) reads it before a "
        "store of a known value overwrites it",
        instances=(Instance("compute_0", {"io": 3, "ii": 2}),
                   Instance("compute_1", {"io": 3, "ii": 2})), element=Element("B", (3, 2)))),
}


@pytest.mark.parametrize("name", sorted(UNCHANGED))
def test_nothing_to_do_leaves_the_function_and_says_why(name):
    text, cex = UNCHANGED[name]
    f = parse(text)
    assert introduce_padding_conditionals(f, block="compute") is f
    assert remove_overcompute_through_branching(f, block="compute") is f
    assert remove_overcompute_through_branching(f) is f
    found = pad_value_overwrites(f, "compute")
    assert not found and found.decision == Refuted(cex)


def test_an_index_that_reads_memory_is_unknown():
    f = parse("""
@T.prim_func
def func(A: T.Buffer((5, 4), "int32"), B: T.Buffer((4, 4), "int32"),
         C: T.Buffer((4, 4), "int32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii] % 4
            C[io, B[io, ii]] = 1
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0
""")
    decision = pad_value_overwrites(f, "compute").decision
    assert isinstance(decision, Unknown) and "not quasi-affine" in decision.reason
    assert remove_overcompute_through_branching(f, block="compute") is f




def test_a_store_that_never_runs():
    f = parse("""
@T.prim_func
def func(B: T.Buffer((4,), "float32")):
    with T.block("compute"):
        for i in T.serial(4):
            if i > 5:
                B[i] = 1.0
    for i in T.serial(4):
        B[i] = 0.0
""")
    assert pad_value_overwrites(f, "compute").decision == Refuted(
        Counterexample("no store of block 'compute' ever runs"))
