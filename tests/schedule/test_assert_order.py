"""Schedule primitives on functions holding a plain ``assert``: no store moves across one.

The model holds an assert on scalar values as a statement that may raise
(:mod:`analyses.assert_order`): a move that keeps every store on its side of
every assert instance goes ahead, and is checked three ways (the expected
function, a replay of the trace, and runs of both functions in the reference
executor and Numba at every ``n`` -- where the assert fails too: the same
error and the same buffers); a move across one is refused with
:class:`IllegalTransformError` whose evidence names the assert.
"""

import functools

import numpy as np
import pytest

import codegen
from analyses import Instance
from analyses.assert_order import order_element
from polypad.errors import AssertionFailedError, IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse

# Two loops before a check of n, a nest after it, and a loop with a check per instance.
TAIL = """
    for m in range(8):
        assert m < n - 20, "m < n - 20"
        A[m] = A[m] + 1.0
"""
HEAD = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((4, 8), "float32")):
"""
CHECKED = HEAD + """
    for i in range(8):
        A[i] = A[i] * 2.0
    for j in range(8):
        B[j] = A[j] + B[j]
    assert n > 2, "n must exceed 2"
    for k in range(4):
        for l in range(8):
            C[k, l] = A[l] + B[l] + T.Cast("float32", k)
""" + TAIL

MERGED = HEAD + """
    for i in range(8):
        A[i] = A[i] * 2.0
        B[i] = A[i] + B[i]
    assert n > 2, "n must exceed 2"
    for k in range(4):
        for l in range(8):
            C[k, l] = A[l] + B[l] + T.Cast("float32", k)
""" + TAIL

TILED = HEAD + """
    for i in range(8):
        A[i] = A[i] * 2.0
    for j in range(8):
        B[j] = A[j] + B[j]
    assert n > 2, "n must exceed 2"
    for k_0, l_0, k_1, l_1 in T.grid(2, 2, 2, 4):
        C[k_0 * 2 + k_1, l_0 * 4 + l_1] = (A[l_0 * 4 + l_1] + B[l_0 * 4 + l_1]
                                           + T.Cast("float32", k_0 * 2 + k_1))
""" + TAIL

REORDERED = CHECKED.replace("""    for k in range(4):
        for l in range(8):""", """    for l in range(8):
        for k in range(4):""")

SPLIT = CHECKED.replace(TAIL, """
    for m_0, m_1 in T.grid(2, 4):
        assert m_0 * 4 + m_1 < n - 20, "m < n - 20"
        A[m_0 * 4 + m_1] = A[m_0 * 4 + m_1] + 1.0
""")

PARALLEL_I = CHECKED.replace("for i in range(8):", "for i in T.parallel(8):")

# Every n from failing at the first assert, through failing at each m, to passing all.
N_VALUES = range(0, 30)


def outcome(kernel, n_value: int):
    """The buffers after a call at ``n_value``, and what it raised (or None)."""
    rng = np.random.default_rng(n_value)
    a, b = (rng.uniform(-1, 1, 8).astype("float32") for _ in range(2))
    c = np.zeros((4, 8), "float32")
    try:
        kernel(n_value, a, b, c)
    except AssertionFailedError as error:
        # The message and n; the loop counters are named differently after a tile.
        return (a, b, c), (error.assert_message, error.values["n"])
    return (a, b, c), None


def same_runs(before: n.PrimFunc, after: n.PrimFunc, target: str) -> None:
    old, new = codegen.build(before, target=target), codegen.build(after, target=target)
    raised = set()
    for value in N_VALUES:
        (want, want_error), (got, got_error) = outcome(old, value), outcome(new, value)
        assert got_error == want_error, value
        for x, y in zip(want, got, strict=True):
            np.testing.assert_array_equal(x, y)
        raised.add(want_error is not None and want_error[0])
    # Both asserts fail at some n, and at some n neither does.
    assert raised == {"n must exceed 2", "m < n - 20", False}


def applied(text: str, apply, expected: str) -> Schedule:
    """``apply`` gives ``expected``, keeps every assert, and replays."""
    f = parse(text)
    sch = Schedule(f)
    apply(sch)
    verify(sch.func)
    assert_structural_equal(sch.func, parse(expected))
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)
    return sch


MOVES = {
    "merge": (lambda s: s.merge_adjacent_loops("i", "j"), MERGED),
    "tile": (lambda s: s.tile(["k", "l"], [2, 4]), TILED),
    "reorder": (lambda s: s.reorder("l", "k"), REORDERED),
    "split": (lambda s: s.split("m", [2, 4]), SPLIT),
    "parallel": (lambda s: s.parallel("i"), PARALLEL_I),
}


@functools.cache
def moved(move: str) -> n.PrimFunc:
    apply, expected = MOVES[move]
    return applied(CHECKED, apply, expected).func


@pytest.mark.parametrize("move", sorted(MOVES))
def test_a_move_that_keeps_every_store_on_its_side_of_each_assert_runs_the_same(move):
    after = moved(move)
    assert len([x for x in walk(after.body) if isinstance(x, n.Assert)]) == 2
    same_runs(parse(CHECKED), after, "python")


@pytest.mark.numba
@pytest.mark.parametrize("move", ["merge", "split"])
def test_the_moved_functions_run_the_same_in_numba(move):
    same_runs(parse(CHECKED), moved(move), "numba")


def refused(text: str, apply, error=IllegalTransformError):
    """The error ``apply(sch)`` raises on ``text``'s function, which stays unchanged."""
    f = parse(text)
    sch = Schedule(f)
    with pytest.raises(error) as info:
        apply(sch)
    assert sch.func is f and not sch.trace.steps
    return info.value


def names_the_assert(err, first: Instance, second: Instance, condition: str) -> None:
    cex = err.evidence
    assert cex.instances == (first, second), cex
    assert cex.element == order_element(), cex
    assert f"`assert {condition}`" in cex.description, cex
    assert "no statement with an effect moves across an assert" in cex.description


def test_parallel_refuses_a_loop_holding_an_assert_instance_per_iteration():
    err = refused(CHECKED, lambda s: s.parallel("m"))
    names_the_assert(err, Instance("S4", {"m": 0}), Instance("S4", {"m": 1}), "m < n - 20")
    assert "the loop over m carries an output dependence" in str(err)


def test_vectorize_refuses_it_too():
    err = refused(CHECKED, lambda s: s.vectorize("m"))
    assert "`assert m < n - 20`" in str(err)


NEST = HEAD + """
    for k in range(4):
        for l in range(8):
            C[k, l] = A[l] + B[l] + T.Cast("float32", k)
            assert k * 8 + l < n, "k * 8 + l < n"
"""


@pytest.mark.parametrize("apply", [lambda s: s.reorder("l", "k"),
                                   lambda s: s.tile(["k", "l"], [2, 4])])
def test_reorder_and_tile_would_run_stores_of_other_rows_before_a_failing_check(apply):
    err = refused(NEST, apply)
    assert "flow dependence" in str(err)
    assert "`assert " in str(err) and "< n` at line 9" in str(err)


def test_the_reorders_evidence_is_a_store_run_before_the_check_it_followed():
    err = refused(NEST, lambda s: s.reorder("l", "k"))
    # C[1, 0] would be stored before the check of (k, l) = (0, 7).
    names_the_assert(err, Instance("S1", {"k": 0, "l": 7}), Instance("S0", {"k": 1, "l": 0}),
                     "k * 8 + l < n")


DISTRIBUTED = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = 1.0
        assert i < n, "i < n"
        B[i] = 2.0
"""


@pytest.mark.parametrize("moved, position, first, second, kind", [
    (["S2"], "before", "S1", "S2", "flow"),   # B's stores before the checks
    (["S0"], "after", "S0", "S1", "anti"),    # A's stores after them
])
def test_distribute_refuses_to_move_stores_across_the_check(moved, position, first, second,
                                                            kind):
    err = refused(DISTRIBUTED, lambda s: s.distribute(None, moved, position=position))
    names_the_assert(err, Instance(first, {"i": 0}), Instance(second, {"i": 0}), "i < n")
    assert f"{kind} dependence" in str(err)


def test_reorder_by_map_that_reverses_the_checks_is_refused():
    band = "{ S0[i] -> [3 - i]; S1[i] -> [3 - i]; S2[i] -> [3 - i] }"
    err = refused(DISTRIBUTED, lambda s: s.reorder_by_map(None, band, ("r",)))
    names_the_assert(err, Instance("S1", {"i": 0}), Instance("S0", {"i": 1}), "i < n")


BLOCKS = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("P"):
            vi = T.axis.spatial(4, i)
            A[vi] = 1.0
    assert n > 0, "n > 0"
    for j in range(4):
        with T.block("C"):
            vj = T.axis.spatial(4, j)
            B[vj] = A[vj] + 1.0
"""


def test_compute_at_would_move_the_producer_after_the_check():
    err = refused(BLOCKS, lambda s: s.compute_at("P", "j"))
    names_the_assert(err, Instance("P", {"i": 0}), Instance("S1", {}), "n > 0")


def test_reverse_compute_at_would_move_the_consumer_before_the_check():
    err = refused(BLOCKS, lambda s: s.reverse_compute_at("C", "i"))
    names_the_assert(err, Instance("S1", {}), Instance("C", {"j": 0}), "n > 0")


def test_a_block_holding_an_assert_is_not_placed_in_a_loop():
    text = BLOCKS.replace("            A[vi] = 1.0",
                          "            A[vi] = 1.0\n            assert vi < n, \"vi < n\"")
    err = refused(text, lambda s: s.compute_at("P", "j"), PolypadError)
    assert "holds `assert vi < n` at line 8, which cannot be placed in the loop" in str(err)


CACHED = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi] * 2.0
            assert vi < n, "vi < n"
"""


def same_cached_runs(after: n.PrimFunc) -> None:
    """``CACHED`` and ``after`` leave the same ``C`` and raise the same assert at each n."""
    old, new = (codegen.build(f, target="python") for f in (parse(CACHED), after))
    for value in range(6):
        outs = []
        for kernel in (old, new):
            a, c = np.arange(4, dtype="float32") + 1, np.zeros(4, "float32")
            try:
                kernel(value, a, c)
                outs.append((None, c.tolist()))
            except AssertionFailedError as error:
                outs.append((error.assert_message, c.tolist()))
        assert outs[0] == outs[1], value


@pytest.mark.parametrize("at, late", [(None, "the copy-out after it"),
                                      ("i", "the copy-out at the end of each iteration")])
def test_cache_write_would_write_back_only_after_the_check(at, late):
    # Where the check fails at vi = 2, C[0] and C[1] are stored; the copy-out would not run.
    err = refused(CACHED, lambda s: s.cache_write("B", "C", "local", at=at))
    assert f"{late} would write back stores made before `assert vi < n` at line 8" in str(err)
    assert "`assert vi < n` at line 8 may fail" in err.evidence.description


def test_cache_read_beside_the_check_runs_the_same():
    sch = Schedule(parse(CACHED))
    sch.cache_read("B", "A", "local")
    verify(sch.func)
    assert_structural_equal(sch.func, parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    A_local = T.sblock_alloc_buffer((4,), "float32", scope="local")
    for i in range(4):
        with T.sblock("A_local"):
            A_local[i] = A[i]
    for i in range(4):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            C[vi] = A_local[vi] * 2.0
            assert vi < n, "vi < n"
"""))
    same_cached_runs(sch.func)


GUARDED_LOAD = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            C[vi] = 5.0
            assert n < 8, "n < 8"
            C[vi] = A[n] * 2.0
"""


def test_cache_read_at_a_loop_would_load_before_the_check_that_guards_the_load():
    # At n = 8 the original stores C[0] = 5.0 and fails the check; a copy-in of A[n]
    # at the start of the iteration would read outside A before the check ran.
    err = refused(GUARDED_LOAD, lambda s: s.cache_read("B", "A", "local", at="i"))
    assert "would load A[n] before `assert n < 8` at line 8, which guards it" in str(err)
    assert err.evidence.description == (
        "A[n] is loaded after `assert n < 8` at line 8 in the iteration, and the copy-in "
        "would load it before")


def test_cache_read_at_a_loop_loading_before_the_check_runs_the_same():
    sch = Schedule(parse(CACHED))
    sch.cache_read("B", "A", "local", at="i")
    verify(sch.func)
    assert_structural_equal(sch.func, parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A_local = T.alloc_buffer((1,), "float32", scope="local")
        with T.sblock("A_local"):
            A_local[0] = A[i + 0]
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            C[vi] = A_local[vi - i] * 2.0
            assert vi < n, "vi < n"
"""))
    same_cached_runs(sch.func)


REDUCED = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 4):
        with T.block("R"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = 0.0
            C[vi] = C[vi] + A[vi, vk]
            assert vi * 4 + vk < n, "lt n"
"""


def test_decompose_reduction_keeps_each_init_after_the_checks_before_it():
    err = refused(REDUCED, lambda s: s.decompose_reduction("R", "i"))
    names_the_assert(err, Instance("R_2", {"i": 0, "k": 3}), Instance("R_0", {"i": 1, "k": 0}),
                     "vi * 4 + vk < n")
    # At k, each row's init still runs after the previous row's checks.
    sch = Schedule(parse(REDUCED))
    sch.decompose_reduction("R", "k")
    assert_structural_equal(sch.func, parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        C[i] = 0.0
        for k in range(4):
            with T.sblock("R"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + A[vi, vk]
                assert vi * 4 + vk < n, "lt n"
"""))


BOUND = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = 1.0
        assert i < n, "i < n"
    assert n > 2, "n"
    for j in range(8):
        B[j] = 2.0
"""


def test_bind_refuses_a_loop_holding_an_assert_and_binds_one_beside_it():
    err = refused(BOUND, lambda s: s.bind("i", "threadIdx.x"))
    assert "the loop holds `assert i < n` at line 6" in str(err)
    assert err.evidence.description == "`assert i < n` at line 6 runs in each iteration " \
                                       "of the loop over i"
    # The barrier plan of the bound function sees the asserts between its launches.
    sch = Schedule(parse(BOUND))
    sch.bind("j", "threadIdx.x")
    assert_structural_equal(sch.func, parse(BOUND.replace(
        "for j in range(8):", 'for j in T.thread_binding(8, thread="threadIdx.x"):')))
