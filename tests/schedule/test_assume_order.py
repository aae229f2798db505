"""Schedule primitives keep each ``T.assume`` where what it reads holds the same values.

An assumption is a fact about the values at its point; a primitive that
moves it past a write of what it reads makes it false, and every proof that
used it wrong.  So the dependences every primitive checks count an
assumption's loads as reads: each case below, legal before this was done,
is refused with the two instances and the element (the primitive's
function unchanged), and each legal move is checked three ways: the
expected function, a replay of the trace, and a run of both functions in
the reference executor, which checks every assumption.
"""

import numpy as np
import pytest

import codegen
from analyses import Element, Instance
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse


def refused(text: str, apply, error=IllegalTransformError):
    """The error ``apply(sch)`` raises on ``text``'s function, which stays unchanged."""
    f = parse(text)
    sch = Schedule(f)
    with pytest.raises(error) as info:
        apply(sch)
    assert sch.func is f and not sch.trace.steps
    return info.value


def applied(text: str, apply, expected: str, args: list) -> Schedule:
    """``apply`` gives ``expected``, replays, and computes what the original does on
    ``args`` (copies), with every assumption true in both (the executor checks them)."""
    f = parse(text)
    sch = Schedule(f)
    apply(sch)
    verify(sch.func)
    assert_structural_equal(sch.func, parse(expected))
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    codegen.build(f, target="python")(*want)
    codegen.build(sch.func, target="python")(*got)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
    return sch


def evidence(err, first, second, element):
    cex = err.evidence
    assert cex.instances == (first, second), cex
    assert cex.element == element, cex


# ---------------------------------------------------------------- merge

# Issue 21's reproducer: merged, the assumption would follow the store that changed A[0].
ASSUME_THEN_WRITE = """
@T.prim_func
def f(A: T.Buffer((6,), "float32")):
    for i in T.serial(6):
        T.assume(not (i // 2 == 1) or A[i // 4] == 0.0)
    for j in T.serial(6):
        A[j] = T.Cast("float32", j + 1)
"""


def test_merge_refuses_to_move_an_assumption_after_a_write_of_what_it_reads():
    err = refused(ASSUME_THEN_WRITE, lambda s: s.merge_adjacent_loops("i", "j"))
    assert "RFC condition 2" in str(err)
    # The model counts the load at every instance (not only where `or` evaluates it).
    evidence(err, Instance("S0", {"i": 1}), Instance("S1", {"j": 0}), Element("A", (0,)))


def test_merge_refuses_to_move_an_assumption_before_a_write_of_what_it_reads():
    err = refused("""
@T.prim_func
def f(A: T.Buffer((6,), "float32")):
    for i in T.serial(6):
        A[i] = T.Cast("float32", i + 1)
    for j in T.serial(6):
        T.assume(A[5 - j] > 0.0)
""", lambda s: s.merge_adjacent_loops("i", "j"))
    assert "RFC condition 1" in str(err) and "flow dependence" in str(err)
    evidence(err, Instance("S0", {"i": 3}), Instance("S1", {"j": 2}), Element("A", (3,)))


MERGEABLE = """
@T.prim_func
def f(A: T.Buffer((6,), "float32")):
    for i in T.serial(6):
        T.assume(A[i] == 0.0)
    for j in T.serial(6):
        A[j] = T.Cast("float32", j + 1)
"""


def test_merge_keeps_an_assumption_before_the_write_of_its_own_element():
    applied(MERGEABLE, lambda s: s.merge_adjacent_loops("i", "j"), """
@T.prim_func
def f(A: T.Buffer((6,), "float32")):
    for i in T.serial(6):
        T.assume(A[i] == 0.0)
        A[i] = T.Cast("float32", i + 1)
""", [np.zeros(6, "float32")])


# ---------------------------------------------------------------- loop order

# The assumption at i reads A[i + 1], which the store at i + 1 overwrites.
READS_AHEAD = """
@T.prim_func
def f(A: T.Buffer((9,), "float32")):
    with T.block("compute"):
        for i in T.serial(8):
            T.assume(A[i + 1] == 0.0)
            A[i] = 1.0
"""
ANTI = (Instance("compute_0", {"i": 0}), Instance("compute_1", {"i": 1}), Element("A", (1,)))


@pytest.mark.parametrize("apply", [
    lambda s: s.parallel("i"),
    lambda s: s.vectorize("i"),
    lambda s: s.distribute("compute", ["compute_0"], "facts", position="after"),
    lambda s: s.reorder_by_map(
        "compute", "{ compute_0[i] -> [7 - i, 0]; compute_1[i] -> [7 - i, 1] }", ("r", "p")),
], ids=["parallel", "vectorize", "distribute", "reorder_by_map"])
def test_an_assumption_read_before_a_later_iteration_overwrites_it(apply):
    err = refused(READS_AHEAD, apply)
    assert "anti dependence" in str(err)
    evidence(err, *ANTI)


def test_distribute_refuses_an_assumption_moved_before_the_write_it_reads():
    err = refused("""
@T.prim_func
def f(A: T.Buffer((9,), "float32")):
    with T.block("compute"):
        for i in T.serial(8):
            A[i] = 1.0
            T.assume(i == 0 or A[i - 1] == 1.0)
""", lambda s: s.distribute("compute", ["compute_1"], "facts", position="before"))
    evidence(err, Instance("compute_0", {"i": 0}), Instance("compute_1", {"i": 1}),
             Element("A", (0,)))


def test_reorder_refuses_and_keeps_assumptions_by_their_elements():
    err = refused("""
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        T.assume(A[j, i] == 0.0)
        A[i, j] = 1.0
""", lambda s: s.reorder("j", "i"))
    assert "flow dependence" in str(err)
    evidence(err, Instance("S1", {"i": 0, "j": 1}), Instance("S0", {"i": 1, "j": 0}),
             Element("A", (0, 1)))
    applied("""
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        T.assume(A[i, j] == 0.0)
        A[i, j] = 1.0
""", lambda s: s.reorder("j", "i"), """
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    for j, i in T.grid(4, 4):
        T.assume(A[i, j] == 0.0)
        A[i, j] = 1.0
""", [np.zeros((4, 4), "float32")])


def test_sequential_buffer_access_keeps_an_assumption_before_its_element_is_written():
    err = refused("""
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    with T.block("compute"):
        for i in T.serial(8):
            T.assume(A[i] == 0.0)
            A[7 - i] = 1.0
""", lambda s: s.sequential_buffer_access("compute", "A"))
    evidence(err, Instance("compute_1", {"i": 0}), Instance("compute_0", {"i": 7}),
             Element("A", (7,)))


# ---------------------------------------------------------------- locations and caches


def test_compute_at_computes_what_an_assumption_under_the_loop_reads():
    # Without the assumption the producer would compute B[4io : 4io + 4], and the
    # assumption at ii = 3 would read B[4io + 4] before anything wrote it.
    text = """
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,), "float32")
    for i in T.serial(9):
        with T.block("B"):
            B[i] = A[i]
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("C"):
                T.assume(B[4 * io + ii + 1] >= 1.0)
                C[4 * io + ii] = B[4 * io + ii]
"""
    args = [np.arange(1, 10, dtype="float32"), np.zeros(8, "float32")]
    applied(text, lambda s: s.compute_at("B", "io"), """
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,), "float32")
    for io in T.serial(2):
        with T.block("B"):
            for i in T.serial(4 * io, 4 * io + 5):
                B[i] = A[i]
        for ii in T.serial(4):
            with T.block("C"):
                T.assume(B[4 * io + ii + 1] >= 1.0)
                C[4 * io + ii] = B[4 * io + ii]
""", args)


@pytest.mark.parametrize(("primitive", "text"), [
    ("compute_at", """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        with T.block("B"):
            T.assume(A[i] >= 0.0)
            B[i] = A[i]
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("C"):
                A[7 - 4 * io - ii] = -1.0
                C[4 * io + ii] = B[4 * io + ii]
"""),
    ("reverse_compute_at", """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("B"):
                B[4 * io + ii] = A[4 * io + ii]
                A[4 * io + ii] = 5.0
    for i in T.serial(8):
        with T.block("C"):
            T.assume(A[7 - i] == 5.0)
            C[i] = B[i]
"""),
])
def test_a_moved_block_holding_an_assumption_is_refused_not_dropped(primitive, text):
    # Each instance of the assumption would need an iteration to run at; it used to
    # vanish from the result.
    block = "B" if primitive == "compute_at" else "C"
    err = refused(text, lambda s: getattr(s, primitive)(block, "io"), PolypadError)
    assert f"block {block!r} holds T.assume(" in str(err)
    assert "cannot be placed in the loop" in str(err)


def test_cache_read_serves_the_assumption_in_the_block_too():
    text = """
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    for io in T.serial(2):
        for ii in T.serial(4):
            with T.block("C"):
                T.assume(A[4 * io + ii + 1] >= 0.0)
                C[4 * io + ii] = A[4 * io + ii]
"""
    args = [np.arange(9, dtype="float32"), np.zeros(8, "float32")]
    applied(text, lambda s: s.cache_read("C", "A", "local", at="io"), """
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    for io in T.serial(2):
        A_local = T.alloc_buffer((5,), "float32", scope="local")
        with T.block("A_local"):
            for ax0 in T.serial(5):
                A_local[ax0] = A[4 * io + ax0]
        for ii in T.serial(4):
            with T.block("C"):
                T.assume(A_local[ii + 1] >= 0.0)
                C[4 * io + ii] = A_local[ii]
""", args)


def test_cache_write_keeps_the_assumption_on_the_value_the_block_wrote():
    text = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("C"):
                C[4 * io + ii] = A[4 * io + ii]
                T.assume(C[4 * io + ii] == A[4 * io + ii])
"""
    args = [np.arange(16, dtype="float32"), np.zeros(16, "float32")]
    applied(text, lambda s: s.cache_write("C", "C", "local", at="io"), """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for io in T.serial(4):
        C_local = T.alloc_buffer((4,), "float32", scope="local")
        for ii in T.serial(4):
            with T.block("C"):
                C_local[ii] = A[4 * io + ii]
                T.assume(C_local[ii] == A[4 * io + ii])
        with T.block("C_local"):
            for ax0 in T.serial(4):
                C[4 * io + ax0] = C_local[ax0]
""", args)


def test_store_at_refuses_an_assumption_on_another_iterations_value():
    err = refused("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        B[i] = A[i]
        T.assume(i == 0 or B[i - 1] >= 0.0)
        C[i] = B[i]
""", lambda s: s.store_at("B", "i"))
    evidence(err, Instance("S0", {"i": 0}), Instance("S1", {"i": 1}), Element("B", (0,)))


def test_store_at_keeps_an_assumption_on_the_same_iterations_value():
    applied("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        B[i] = A[i]
        T.assume(B[i] == A[i])
        C[i] = B[i]
""", lambda s: s.store_at("B", "i"), """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        B = T.alloc_buffer((1,), "float32")
        B[0] = A[i]
        T.assume(B[0] == A[i])
        C[i] = B[0]
""", [np.arange(8, dtype="float32"), np.zeros(8, "float32")])


@pytest.mark.numba
def test_the_merged_function_runs_alike_in_numba():
    sch = Schedule(parse(MERGEABLE))
    sch.merge_adjacent_loops("i", "j")
    a, b = np.zeros(6, "float32"), np.zeros(6, "float32")
    codegen.build(sch.func)(a)
    codegen.build(sch.func, target="python")(b)
    np.testing.assert_array_equal(a, np.arange(1, 7, dtype="float32"))
    np.testing.assert_array_equal(a, b)
