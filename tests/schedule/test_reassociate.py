"""``reassociate=True`` on ``reorder_by_map`` and ``sequential_buffer_access``: a
reduction may combine its terms in another order, nothing else may move.

Each accepted order is checked against the script it should print, replayed from its
trace and run against the original (integers bit-exactly, also where ``+`` and ``*``
wrap; floats to rounding); each refusal names its error class, the two instances and
the element.
"""

from __future__ import annotations

import numpy as np
import pytest
from kind_support import assert_same, check_schedule

import codegen
from analyses import Element, Instance
from polypad.errors import ArgumentTypeError, IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

# An initialisation, a chain of updates and a consumer of each B[i].
CHAIN = '''
@T.prim_func
def f(A: T.Buffer((8, 6), "{t}"), B: T.Buffer((8,), "{t}"), C: T.Buffer((8,), "{t}")):
    for i in T.serial(8):
        B[i] = {init}
        for k in T.serial(6):
            B[i] = {update}
        C[i] = B[i] * {two}
'''

UPDATES = {
    "sum": ("0", "B[i] + A[i, k]"),
    "product": ("1", "A[i, k] * B[i]"),  # the reduction operand on the right
    "max": ("-100", "T.max(B[i], A[i, k])"),
    "min": ("100", "T.min(A[i, k], B[i])"),
}

REVERSED = "{ S0[i] -> [i]; S1[i, k] -> [i, 5 - k]; S2[i] -> [i] }"


def chain(op: str = "sum", dtype: str = "int32") -> n.PrimFunc:
    init, update = UPDATES[op]
    if dtype.startswith("float"):
        init = f"T.{dtype}({init})"
    two = "2" if dtype.startswith("int") else f"T.{dtype}(2)"
    return parse(CHAIN.format(t=dtype, init=init, update=update, two=two))


def reversed_chain(op: str, dtype: str) -> str:
    init, update = UPDATES[op]
    if dtype.startswith("float"):
        init = f"T.{dtype}({init})"
    two = "2" if dtype.startswith("int") else f"T.{dtype}(2)"
    return CHAIN.format(t=dtype, init=init, two=two,
                        update=update.replace("A[i, k]", "A[i, 5 - kr]")).replace(
        "for k in T.serial(6)", "for kr in T.serial(6)")


def run_on(func: n.PrimFunc, arrays: list[np.ndarray]) -> list[np.ndarray]:
    copies = [a.copy() for a in arrays]
    with np.errstate(over="ignore"):
        codegen.build(func, target="python")(*copies)
    return copies


def inputs(func: n.PrimFunc, seed: int, *, wide: bool = False) -> list[np.ndarray]:
    """Random inputs; ``wide`` integers make ``+`` and ``*`` wrap around int32."""
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if p.dtype.startswith("float"):
            out.append(rng.standard_normal(p.shape).astype(p.dtype))
        else:
            bound = 2**31 - 1 if wide else 9
            out.append(rng.integers(-bound, bound, p.shape).astype(p.dtype))
    return out


# ---------------------------------------------------------------- accepted orders


@pytest.mark.parametrize("op", list(UPDATES))
@pytest.mark.parametrize("dtype", ["int32", "int8", "float32"])
def test_a_reduction_runs_backwards(op, dtype):
    f = chain(op, dtype)
    sch = Schedule(f)
    sch.reorder_by_map(None, REVERSED, ("i", "kr"), reassociate=True)
    check_schedule(f, sch, reversed_chain(op, dtype))
    assert "reassociate=True" in str(sch.trace)
    for seed in range(3):
        args = inputs(f, seed, wide=dtype != "float32")
        assert_same(run_on(f, args), run_on(sch.func, args))


def test_integer_sums_and_products_stay_bit_exact_where_they_wrap():
    for op in ("sum", "product"):
        f = chain(op)
        sch = Schedule(f)
        sch.reorder_by_map(None, REVERSED, ("i", "kr"), reassociate=True)
        args = inputs(f, 7, wide=True)
        want, got = run_on(f, args), run_on(sch.func, args)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)
        # The inputs do wrap: the exact sum of a row leaves int32.
        if op == "sum":
            exact = args[0].astype(np.int64).sum(axis=1)
            assert (exact != want[1]).any()


def test_the_reduction_loop_can_go_outside():
    """k outermost, i inside: each B[i] still starts from its init and ends before C[i]."""
    f = chain()
    sch = Schedule(f)
    band = "{ S0[i] -> [-1, i]; S1[i, k] -> [k, i]; S2[i] -> [6, i] }"
    sch.reorder_by_map(None, band, ("t", "i"), reassociate=True)
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 6), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for t in T.serial(-1, 7):
        for i in T.serial(8):
            if t >= 0 and t < 6:
                B[i] = B[i] + A[i, t]
            elif t == 6:
                C[i] = B[i] * 2
            else:
                B[i] = 0
''')
    args = inputs(f, 1, wide=True)
    assert_same(run_on(f, args), run_on(sch.func, args))


# ---------------------------------------------------------------- refused orders


def test_without_reassociate_the_backward_float_sum_is_refused():
    sch = Schedule(chain("sum", "float32"))
    with pytest.raises(IllegalTransformError, match="would break a dependence") as info:
        sch.reorder_by_map(None, REVERSED, ("i", "kr"))
    cex = info.value.evidence
    assert cex.instances == (Instance("S1", {"i": 0, "k": 0}), Instance("S1", {"i": 0, "k": 1}))
    assert cex.element == Element("B", (0,))
    assert "reassociate=True" in str(info.value)  # what would make it legal
    assert len(sch.trace) == 0


@pytest.mark.parametrize("op, dtype", [("sum", "int32"), ("product", "int32"),
                                       ("max", "int32"), ("min", "int32")])
def test_an_exact_reduction_runs_backward_without_being_asked(op, dtype):
    # Integers (wrapping, and their min/max) give the same bits in any order.
    f = chain(op, dtype)
    sch = Schedule(f)
    sch.reorder_by_map(None, REVERSED, ("i", "kr"))
    check_schedule(f, sch, reversed_chain(op, dtype))
    args = inputs(f, 3, wide=True)
    for w, g in zip(run_on(f, args), run_on(sch.func, args), strict=True):
        np.testing.assert_array_equal(g, w)



def test_a_float_max_runs_backward_only_when_asked_since_a_zero_keeps_its_first_sign():
    # max keeps the first of two equal terms: -0.0 then 0.0 gives -0.0, backward 0.0.
    f = chain("max", "float32")
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="reassociate=True") as info:
        sch.reorder_by_map(None, REVERSED, ("i", "kr"))
    assert info.value.evidence.element == Element("B", (0,))
    assert len(sch.trace) == 0
    sch.reorder_by_map(None, REVERSED, ("i", "kr"), reassociate=True)
    check_schedule(f, sch, reversed_chain("max", "float32"))
    args = inputs(f, 3)
    args[0][0, :] = [-1.0, -0.0, 0.0, -2.0, -3.0, -4.0]
    want, got = run_on(f, args), run_on(sch.func, args)
    assert np.signbit(want[1][0]) and not np.signbit(got[1][0])  # what the refusal kept
    np.testing.assert_array_equal(got[1][1:], want[1][1:])

# S1(i, 1) first, then the init, then the other updates: value-based dataflow relates
# the init to S1(i, 0) only, which still follows it.  The update S1(i, 1) would be wiped.
INIT_AFTER_AN_UPDATE = ("{ S0[i] -> [i, 1]; S1[i, k] -> [i, 0] : k = 1; "
                        "S1[i, k] -> [i, k + 2] : k != 1; S2[i] -> [i, 9] }")
# The consumer between the updates k = 4 and k = 5.
CONSUMER_TOO_EARLY = "{ S0[i] -> [i, -1]; S1[i, k] -> [i, 5 - k]; S2[i] -> [i, 1] }"


@pytest.mark.parametrize("reassociate", [False, True])
def test_an_update_before_the_init_is_refused(reassociate):
    sch = Schedule(chain())
    with pytest.raises(IllegalTransformError, match="would break a dependence") as info:
        sch.reorder_by_map(None, INIT_AFTER_AN_UPDATE, ("i", "t"), reassociate=reassociate)
    cex = info.value.evidence
    if reassociate:
        # The init and the update it would wipe.
        assert cex.instances == (Instance("S0", {"i": 0}), Instance("S1", {"i": 0, "k": 1}))
        assert "S1(i=0, k=1) reads B[0], which S0(i=0) writes before it" in cex.description
    assert cex.element == Element("B", (0,))
    assert sch.func is not None and len(sch.trace) == 0


def test_a_consumer_before_the_last_update_is_refused():
    sch = Schedule(chain())
    with pytest.raises(IllegalTransformError) as info:
        sch.reorder_by_map(None, CONSUMER_TOO_EARLY, ("i", "t"), reassociate=True)
    cex = info.value.evidence
    assert cex.instances == (Instance("S1", {"i": 0, "k": 0}), Instance("S2", {"i": 0}))
    assert cex.element == Element("B", (0,))


def test_a_subtraction_is_not_reassociated():
    f = parse(CHAIN.format(t="int32", init="0", update="B[i] - A[i, k]", two="2"))
    with pytest.raises(IllegalTransformError) as info:
        Schedule(f).reorder_by_map(None, REVERSED, ("i", "kr"), reassociate=True)
    assert info.value.evidence.instances[0].statement == "S1"


def test_an_update_reading_another_element_is_not_a_reduction():
    # A prefix sum: B[i] reads B[i - 1], so its order is its meaning.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(1, 8):
        B[i] = B[i - 1] + A[i]
''')
    with pytest.raises(IllegalTransformError) as info:
        Schedule(f).reorder_by_map(None, "{ S0[i] -> [8 - i] }", ("j",), reassociate=True)
    assert info.value.evidence.element == Element("B", (1,))


def test_two_reductions_of_one_element_do_not_interleave():
    # A sum then a max into the same B[i]: each chain may run backwards, but the max
    # must not start before the sum has ended.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4, 3), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        for k in T.serial(3):
            B[i] = B[i] + A[i, k]
        for k in T.serial(3):
            B[i] = T.max(B[i], A[i, k])
''')
    backwards = "{ S0[i, k] -> [i, 2 - k]; S1[i, k] -> [i, 5 - k] }"
    sch = Schedule(f)
    sch.reorder_by_map(None, backwards, ("i", "t"), reassociate=True)
    args = inputs(f, 3, wide=True)
    assert_same(run_on(f, args), run_on(sch.func, args))
    interleaved = "{ S0[i, k] -> [i, 2 * k]; S1[i, k] -> [i, 2 * k + 1] }"
    with pytest.raises(IllegalTransformError) as info:
        Schedule(f).reorder_by_map(None, interleaved, ("i", "t"), reassociate=True)
    assert {x.statement for x in info.value.evidence.instances} == {"S0", "S1"}


def test_reassociate_must_be_a_bool():
    with pytest.raises(ArgumentTypeError, match="reassociate"):
        Schedule(chain()).reorder_by_map(None, REVERSED, ("i", "kr"), reassociate="yes")
    with pytest.raises(ArgumentTypeError, match="reassociate"):
        Schedule(chain()).sequential_buffer_access(None, "A", reassociate=1)


# ---------------------------------------------------------------- sequential_buffer_access

# The row sum read through A's transposed layout: walking A in order runs i inside k.
TRANSPOSED = '''
@T.prim_func
def f(A: T.Buffer((6, 8), "{t}"), B: T.Buffer((8,), "{t}")):
    for i in T.serial(8):
        B[i] = {zero}
        for k in T.serial(6):
            B[i] = B[i] + A[5 - k, i]
'''


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_sequential_access_reorders_a_float_sum_only_when_asked(dtype):
    zero = "0" if dtype == "int32" else "T.float32(0)"
    f = parse(TRANSPOSED.format(t=dtype, zero=zero))
    sch = Schedule(f)
    if dtype == "float32":
        with pytest.raises(IllegalTransformError):
            sch.sequential_buffer_access(None, "A")
        assert sch.func is f and len(sch.trace) == 0
    else:  # an integer sum is exact in any order: no need to ask
        plain = Schedule(f)
        plain.sequential_buffer_access(None, "A")
    sch.sequential_buffer_access(None, "A", reassociate=True)
    if dtype == "int32":
        assert_structural_equal(plain.func, sch.func)
    check_schedule(f, sch, f'''
@T.prim_func
def f(A: T.Buffer((6, 8), "{dtype}"), B: T.Buffer((8,), "{dtype}")):
    for i in T.serial(8):
        B[i] = {zero}
    for A_0, A_1 in T.grid(6, 8):
        B[A_1] = B[A_1] + A[A_0, A_1]
''')
    assert str(sch.trace) == ("sch.sequential_buffer_access(block=None, buffer='A', "
                              "reassociate=True)")
    for seed in range(2):
        args = inputs(f, seed, wide=dtype == "int32")
        assert_same(run_on(f, args), run_on(sch.func, args))


def test_a_data_dependent_guard_keeps_the_reduction_and_its_refusals():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 6), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        B[i] = 0
        for k in T.serial(6):
            if A[i, k] > 0:
                B[i] = B[i] + A[i, k]
        C[i] = B[i] * 2
''')
    sch = Schedule(f)
    sch.reorder_by_map(None, REVERSED, ("i", "kr"), reassociate=True)
    for seed in range(2):
        args = inputs(f, seed, wide=True)
        assert_same(run_on(f, args), run_on(sch.func, args))
    with pytest.raises(IllegalTransformError, match="a may-dependence") as info:
        Schedule(f).reorder_by_map(None, INIT_AFTER_AN_UPDATE, ("i", "t"), reassociate=True)
    assert info.value.evidence.instances == (Instance("S0", {"i": 0}),
                                             Instance("S1", {"i": 0, "k": 1}))
