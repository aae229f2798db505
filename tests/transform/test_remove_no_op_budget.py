"""``remove_no_op`` under a time limit: it stops at its deadline, and deletes only
what it proved.

A 64-deep nest takes the dataflow of rules 1 and 2 past a small budget:
the pass then returns its function unchanged (it never returns half a
rewrite), having counted the time limit, and ``is_no_op`` on the same store
answers ``Unknown`` saying the budget ran out; under a generous one it keeps
the live store by a decision, no time limit counted.  With a generous budget a real
no-op still goes -- also when a loop nest around it asked the same question
first -- and no budget, however small, makes a live store go: the result runs
like the original in the reference executor.
"""

from __future__ import annotations

import pytest
from deep_support import update_nest as deep_nest
from pass_support import assert_same_results, checked, random_args

import analyses
from analyses import Unknown
from polypad import budget
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse
from polypad.transform import remove_no_op

DEPTH = 64
GENEROUS = 120.0  # seconds: an answer test, never a speed test




def stores(f: n.PrimFunc) -> list[n.BufferStore]:
    return [s for s in walk(f.body) if isinstance(s, n.BufferStore)]


@pytest.fixture(scope="module")
def nest() -> n.PrimFunc:
    return deep_nest()


def test_the_deep_nest_under_a_small_limit_is_kept_and_the_limit_counted(nest):
    with budget.counting_time_limits() as limits:
        got = remove_no_op(nest, budget=0.5)
    assert got is nest  # nothing decided in time: nothing deleted
    assert limits[0] >= 1  # and the caller can tell that time, not a proof, kept it


def test_the_deep_nest_under_a_generous_limit_is_kept_by_a_decision(nest):
    # The store is live (the caller reads A): kept, and no time limit had a say.  The
    # dataflow's last writes, taken level by level of its time space, settle it; one
    # lexmax over the whole time space took single ISL calls of seconds each.
    with budget.counting_time_limits() as limits:
        got = remove_no_op(nest, budget=GENEROUS)
    assert got is nest
    assert limits[0] == 0


def test_the_deep_store_is_unknown_because_of_the_budget(nest):
    decided = analyses.is_no_op(nest, stores(nest)[0], budget=0.5)
    assert isinstance(decided, Unknown), decided
    assert decided.timed_out
    assert "budget" in decided.reason, decided.reason


def test_a_limit_that_runs_out_in_a_later_sweep_deletes_nothing(monkeypatch):
    # The first sweep proves the first store dead and removes it; the budget runs out
    # in the second: the pass returns its input, not the first sweep's half.
    f = parse(DEAD_IN_A_NEST)
    calls = []
    real = analyses.no_op.is_no_op

    def slow_after_first_proof(func, stmt, **kwargs):
        calls.append(stmt)
        if func is not f:  # the function after a removal: pretend time is up
            raise budget.exceeded_error()
        return real(func, stmt, **kwargs)

    monkeypatch.setattr(analyses.no_op, "is_no_op", slow_after_first_proof)
    with budget.counting_time_limits():
        assert remove_no_op(f, budget=GENEROUS) is f
    assert len(calls) >= 2


DEAD_IN_A_NEST = """
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j in T.serial(4):
            B[i] = T.float32(1)
            B[i] = A[i, j]
"""

DEAD_IN_A_NEST_AFTER = """
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        for j in T.serial(4):
            B[i] = A[i, j]
"""

# A whole nest, 12 deep, overwritten by the store after it: the nest goes as one.
DEAD_DEEP_NEST = "\n".join(
    ["@T.prim_func",
     'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):']
    + ["    " * (k + 1) + f"for o{k} in T.serial({2 if k % 4 == 0 else 1}):"
       for k in range(12)]
    + ["    " * 13 + "B[o0 + o4] = A[o8]",
       "    for i in T.serial(4):",
       "        B[i] = A[i] * T.float32(2)"]) + "\n"

DEAD_DEEP_NEST_AFTER = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = A[i] * T.float32(2)
"""


@pytest.mark.parametrize("before, after", [(DEAD_IN_A_NEST, DEAD_IN_A_NEST_AFTER),
                                           (DEAD_DEEP_NEST, DEAD_DEEP_NEST_AFTER)],
                         ids=["inner store", "deep nest"])
def test_a_real_no_op_still_goes_under_a_generous_limit(before, after):
    # In the first, the loops around both stores ask the question of the two together
    # (not a no-op), and the dead store alone is still asked and removed.
    f = parse(before)
    got = checked(remove_no_op(f, budget=GENEROUS))
    assert_structural_equal(got, parse(after))
    for seed in range(3):
        assert_same_results(f, got, random_args(f, seed))


# Live stores beside dead ones (the stores of the constant 7, each overwritten
# before any read): under any budget the result leaves every buffer as the original
# does and keeps every live store.
PROGRAMS = {
    "accumulate": """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = T.float32(7)
    B[0] = T.float32(0)
    for i in T.serial(8):
        B[0] = B[0] + A[i]
""",
    "overwritten_then_read": """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = T.float32(7)
        B[i] = A[i]
        B[i] = B[i] * T.float32(3)
    for i in T.serial(4):
        B[i] = B[i] + T.float32(1)
""",
    "local_then_copied": """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    L = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        L[i] = A[i] + T.float32(1)
        L[i] = L[i] * T.float32(2)
    for i in T.serial(4):
        C[3 - i] = T.float32(7)
    for i in T.serial(4):
        C[3 - i] = L[i]
""",
    "deep": None,  # deep_nest(8): one update under eight loops, no dead store
}


def _dead(store: n.BufferStore) -> bool:
    return isinstance(store.value, n.FloatImm) and store.value.value == 7


@pytest.mark.parametrize("limit", [1e-4, 0.05, GENEROUS])
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_live_store_is_never_removed(name, limit):
    f = deep_nest(8) if PROGRAMS[name] is None else parse(PROGRAMS[name])
    with budget.counting_time_limits() as limits:
        got = checked(remove_no_op(f, budget=limit))
    for seed in range(3):
        assert_same_results(f, got, random_args(f, seed))
    kept = {id(s) for s in stores(got)}
    assert all(id(s) in kept for s in stores(f) if not _dead(s))
    if got is f:  # nothing removed: nothing was dead, or time ran out
        assert not any(_dead(s) for s in stores(f)) or limits[0]
    else:
        assert not any(_dead(s) for s in stores(got))
