"""stores_existing_value(): no-op rule 3, a write of the value already there.

Every Proved is checked by brute force: running the function and comparing,
just before each instance of the store, the value it writes with the
element's content.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from prover_brute_force import violations

import polypad as pp
from analyses import Element, Proved, Refuted
from analyses.stored_value import stores_existing_value
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rfc0077"


def stores(f) -> list[n.BufferStore]:
    return [x for x in walk(f.body) if isinstance(x, n.BufferStore)]


def assert_no_op(f, store, method: str, **options):
    decided = stores_existing_value(f, store, **options)
    assert isinstance(decided, Proved) and decided.method == method, decided
    current = n.BufferLoad(store.buffer, store.indices)
    assert violations(current.equal(store.value), f, store) == []
    return decided


def test_rfc_sum_store_of_the_assumed_zero_is_a_no_op():
    path = EXAMPLES / "remove_noop_sum_before.py"
    f = pp.parse(path.read_text(), filename=str(path))
    init, accumulate = stores(f)
    assert_no_op(f, init, "z3")
    decided = stores_existing_value(f, accumulate)
    ce = decided.counterexample
    (instance,) = ce.instances
    i = instance.indices["i"]
    assert instance.statement == "B[0] = B[0] + A[i]"
    # Any nonzero A[i] changes B[0]; after the first iteration B[0] holds a sum
    # the prover does not track, and the refutation holds whatever it is.
    assert ce.values[f"A[{i}]"] != 0.0
    assert ce.values["B[0]"] == (0.0 if i == 0 else "any")
    assert ce.element == (Element("B", (0,)) if i == 0 else Element("A", (i,)))


def test_adding_a_value_assumed_zero_is_a_no_op():
    f = pp.parse('''
@T.prim_func
def f(out: T.Buffer((1,), "float32"), X: T.Buffer((4,), "float32")):
    T.assume(X[3] == 0.0)
    for i in T.serial(4):
        out[0] = out[0] + X[i]
''')
    store = stores(f)[0]
    (i,) = [lo.var for lo in walk(f.body) if isinstance(lo, n.For)]
    decided = stores_existing_value(f, store)
    assert isinstance(decided, Refuted)
    assert decided.counterexample.instances[0].indices["i"] < 3
    only_last = n.PrimFunc("g", f.params, n.SeqStmt((
        f.body.stmts[0], n.For(i, n.IntImm(3), n.IntImm(1), n.ForKind.SERIAL, store))))
    assert_no_op(only_last, store, "z3")


def test_writing_back_what_was_read_is_a_no_op():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        A[i] = A[i]
''')
    decided = assert_no_op(f, stores(f)[0], "read-back")
    assert decided.detail == "A[i] = A[i] writes back what it reads"


PADDING = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    {before}
    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            A[io, ii] = 0.0
'''


def test_padding_rewritten_with_the_value_already_stored():
    stage = "for io, ii in T.grid(4, 4):\n        if 4 * io + ii >= 14:\n" \
            "            A[io, ii] = 0.0"
    f = pp.parse(PADDING.format(before=stage))
    assert_no_op(f, stores(f)[1], "z3")
    assert not stores_existing_value(f, stores(f)[0])


def test_padding_store_after_the_matching_assumption():
    f = pp.parse(PADDING.format(
        before="for io, ii in T.grid(4, 4):\n        T.assume(4 * io + ii < 14 or "
               "A[io, ii] == 0.0)"))
    assert_no_op(f, stores(f)[0], "z3")


def test_padding_store_after_an_undef_store_is_not_a_no_op():
    f = pp.parse(PADDING.format(before="A[3, 3] = T.undef()\n    A[3, 2] = 0.0\n"
                                       "    A[3, 3] = T.undef()"))
    decided = stores_existing_value(f, stores(f)[-1])
    ce = decided.counterexample
    assert ce.instances[0].indices == {"io": 3, "ii": 3}
    assert ce.element == Element("A", (3, 3)) and ce.values["A[3, 3]"] != 0.0


def test_undef_value_is_not_the_value_already_there():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = T.undef()
''')
    assert isinstance(stores_existing_value(f, stores(f)[0]), Refuted)


def test_strict_ieee_adding_zero_changes_negative_zero():
    f = pp.parse('''
@T.prim_func
def f(B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = B[i] + 0.0
''')
    store = stores(f)[0]
    assert_no_op(f, store, "z3")
    decided = stores_existing_value(f, store, strict_ieee=True)
    value = decided.counterexample.values[f"B[{decided.counterexample.element.indices[0]}]"]
    assert value == 0.0 and math.copysign(1.0, value) == -1.0
    assert decided.counterexample.values["stored B[i] + 0.0"] == 0.0


def test_strict_ieee_same_value_keeps_nan():
    f = pp.parse('''
@T.prim_func
def f(B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = B[i] * 1.0
''')
    assert stores_existing_value(f, stores(f)[0], strict_ieee=True) == Proved("z3-ieee")


def test_only_stores_are_asked_about():
    f = pp.parse(PADDING.format(before="A[0, 0] = 1.0"))
    with pytest.raises(PolypadError, match="needs a BufferStore, not For"):
        stores_existing_value(f, f.body.stmts[1])


@pytest.mark.parametrize("name, proved", [
    # The padding re-stores of zero inside the f loop and in the padding loop.
    ("branching_conv1d_step1", [2, 4]),
    # Accumulations of F[fi] * A[io, ii] where A is assumed zero (io == 0 and
    # ii < 2; io == 2 and ii >= 2): the RFC's next step deletes exactly these.
    ("implicit_default_step9", [2, 4]),
])
def test_no_op_stores_of_rfc_steps(name, proved):
    path = EXAMPLES / f"{name}.py"
    f = pp.parse(path.read_text(), filename=str(path))
    found = [k for k, st in enumerate(stores(f)) if stores_existing_value(f, st)]
    assert found == proved
    for k in proved:
        st = stores(f)[k]
        current = n.BufferLoad(st.buffer, st.indices)
        assert violations(current.equal(st.value), f, st) == []


ZERO_UPDATE = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        T.assume(i < {n} or A[i] == 0.0)
    for i in T.serial({n}, 8):
        B[i] = B[i] + A[i] * {scale}
    for i in T.serial(8):
        B[i] = 1.0
'''


@pytest.mark.parametrize("n_", [2, 5])
def test_an_update_adding_zero_is_rule_3_before_any_dataflow(n_):
    # The update adds 0 (A's tail is assumed 0), and it is overwritten too: the one cheap
    # question of rule 3 is asked first.  Under strict IEEE it is not asked (x + 0.0 is
    # not x for x = -0.0) and the dataflow's rule 1 proves it instead.
    import analyses

    f = pp.parse(ZERO_UPDATE.format(n=n_, scale="T.float32(3.0)"))
    update = f.body.stmts[1]
    decided = analyses.is_no_op(f, update)
    assert isinstance(decided, Proved) and decided.detail.startswith("rule 3")
    strict = analyses.is_no_op(f, update, strict_ieee=True)
    assert isinstance(strict, Proved) and strict.detail.startswith("rule 1")
    (store,) = stores(update)
    current = n.BufferLoad(store.buffer, store.indices)
    # brute force: each instance writes what is there
    assert violations(current.equal(store.value), f, store) == []


def test_an_update_adding_something_still_goes_through_every_rule():
    import analyses

    f = pp.parse(ZERO_UPDATE.format(n=5, scale="T.float32(3.0)").replace(
        "T.assume(i < 5 or A[i] == 0.0)", "T.assume(i < 5 or A[i] == 1.0)"))
    decided = analyses.is_no_op(f, f.body.stmts[1])
    assert isinstance(decided, Proved) and decided.detail.startswith("rule 1")
