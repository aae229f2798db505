"""The tiling family, part two: ``reorder``, ``fuse`` and ``tile``, their traces,
Numba runs, a property over random factors, and loops across blocks.

Each rewrite is checked against the script it should print, run against the
original on random inputs (reference executor; a few Numba kernels), and
replayed from its trace; each refusal names its error class and evidence.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tiling_support import HEAD, SCALE, SKEWED, SYMBOLIC, TRANSPOSE, replays, run, same_results

from analyses import Element, Instance
from polypad.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    IllegalTransformError,
    PolypadError,
)
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# ---------------------------------------------------------------- reorder


def test_reorder_interchanges_a_nest():
    sch = Schedule(parse(TRANSPOSE))
    assert sch.reorder("j", "i") is None
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((6, 10), "int32"), B: T.Buffer((10, 6), "int32")):
    with T.block("t"):
        for j in T.serial(10):
            for i in T.serial(6):
                B[j, i] = A[i, j] + i
'''))
    assert str(sch.trace) == "sch.reorder('j', 'i')"
    same_results(parse(TRANSPOSE), sch.func)
    replays(sch, parse(TRANSPOSE))


def test_reorder_refuses_to_interchange_a_skewed_dependence():
    sch = Schedule(parse(SKEWED))
    with pytest.raises(IllegalTransformError, match="reorder would break a dependence") as info:
        sch.reorder("j", "i")
    evidence = info.value.evidence
    # S0(1, 1) writes A[1, 1]; S0(2, 0) reads it, and j-outer runs (2, 0) first.
    assert evidence.instances == (Instance("S0", {"i": 1, "j": 1}),
                                  Instance("S0", {"i": 2, "j": 0}))
    assert evidence.element == Element("A", (1, 1))
    assert evidence.description.startswith("flow dependence")
    assert len(sch.trace) == 0 and sch.func is sch.original


def test_reorder_moves_only_the_named_loops():
    text = '''
@T.prim_func
def f(A: T.Buffer((2, 3, 4), "int32")):
    for i, j, k in T.grid(2, 3, 4):
        A[i, j, k] = i * 100 + j * 10 + k
'''
    sch = Schedule(parse(text))
    sch.reorder("k", "i")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((2, 3, 4), "int32")):
    for k, j, i in T.grid(4, 3, 2):
        A[i, j, k] = i * 100 + j * 10 + k
'''))
    same_results(parse(text), sch.func)


@pytest.mark.parametrize("text, loops, message", [
    ('''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32")):
    for i in T.serial(4):
        A[i, 0] = 0
        if i > 0:
            for j in T.serial(4):
                A[i, j] = 1
''', ("j", "i"), "not perfectly nested"),
    ('''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32")):
    for i in T.serial(4):
        for j in T.serial(i):
            A[i, j] = 1
''', ("j", "i"), "the bounds of the loop over j use i"),
    (SKEWED, ("i", "i"), "named twice"),
    (SKEWED, ("i",), "two or more"),
])
def test_reorder_names_what_is_wrong(text, loops, message):
    with pytest.raises(PolypadError, match=message):
        Schedule(parse(text)).reorder(*loops)


# ---------------------------------------------------------------- fuse


def test_fuse_makes_one_loop_and_runs_the_same():
    sch = Schedule(parse(TRANSPOSE))
    assert sch.fuse("i", "j") == "i_j_fused"
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((6, 10), "int32"), B: T.Buffer((10, 6), "int32")):
    with T.block("t"):
        for i_j_fused in T.serial(60):
            B[i_j_fused % 10, i_j_fused // 10] = A[i_j_fused // 10, i_j_fused % 10] \\
                + i_j_fused // 10
'''))
    assert str(sch.trace) == "sch.fuse('i', 'j')"
    same_results(parse(TRANSPOSE), sch.func)
    replays(sch, parse(TRANSPOSE))


def test_fuse_of_three_loops_with_a_start():
    text = '''
@T.prim_func
def f(A: T.Buffer((2, 3, 5), "int32")):
    for i, j in T.grid(2, 3):
        for k in T.serial(1, 5):
            A[i, j, k] = i * 100 + j * 10 + k
'''
    sch = Schedule(parse(text))
    sch.fuse("i", "j", "k")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((2, 3, 5), "int32")):
    for i_j_k_fused in T.serial(24):
        A[i_j_k_fused // 12, i_j_k_fused % 12 // 4, i_j_k_fused % 4 + 1] = \\
            i_j_k_fused // 12 * 100 + i_j_k_fused % 12 // 4 * 10 + (i_j_k_fused % 4 + 1)
'''))
    same_results(parse(text), sch.func)


def test_split_then_fuse_round_trips():
    sch = Schedule(parse(SCALE))
    outer, inner = sch.split("i", [None, 4])
    assert sch.fuse(outer, inner) == "i_0_i_1_fused"
    assert_structural_equal(sch.func, parse(HEAD + '''
    with T.block("compute"):
        for i_0_i_1_fused in T.serial(16):
            if i_0_i_1_fused // 4 * 4 + i_0_i_1_fused % 4 < 14:
                B[i_0_i_1_fused // 4 * 4 + i_0_i_1_fused % 4] = \\
                    A[i_0_i_1_fused // 4 * 4 + i_0_i_1_fused % 4] * 2
'''))
    same_results(parse(SCALE), sch.func)
    # And back: fusing a nest and splitting it by the inner extent again.
    sch = Schedule(parse(TRANSPOSE))
    fused = sch.fuse("i", "j")
    assert sch.split(fused, [None, 10]) == ["i_j_fused_0", "i_j_fused_1"]
    same_results(parse(TRANSPOSE), sch.func)
    replays(sch, parse(TRANSPOSE))


@pytest.mark.parametrize("loops, message", [
    (("j", "i"), "adjacent loops outermost first"),
    (("i",), "two or more"),
])
def test_fuse_names_what_is_wrong(loops, message):
    with pytest.raises(PolypadError, match=message):
        Schedule(parse(TRANSPOSE)).fuse(*loops)


@pytest.mark.parametrize("primitive", ["fuse", "reorder"])
def test_fuse_and_reorder_refuse_a_loop_that_is_not_serial(primitive):
    text = TRANSPOSE.replace("for j in T.serial(10)", "for j in T.vectorized(10)")
    with pytest.raises(PolypadError, match="the loop over j is vectorized"):
        getattr(Schedule(parse(text)), primitive)("i", "j")
    with pytest.raises(PolypadError, match="the loop over j is vectorized"):
        Schedule(parse(text)).split("j", [None, 2])


# ---------------------------------------------------------------- tile, trace


def test_tile_splits_and_reorders():
    sch = Schedule(parse(TRANSPOSE))
    assert sch.tile(["i", "j"], [4, 5]) == ["i_0", "j_0", "i_1", "j_1"]
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((6, 10), "int32"), B: T.Buffer((10, 6), "int32")):
    with T.block("t"):
        for i_0, j_0, i_1, j_1 in T.grid(2, 2, 4, 5):
            if i_0 * 4 + i_1 < 6:
                B[j_0 * 5 + j_1, i_0 * 4 + i_1] = A[i_0 * 4 + i_1, j_0 * 5 + j_1] + (
                    i_0 * 4 + i_1)
'''))
    assert str(sch.trace) == "sch.tile(loops=['i', 'j'], factors=[4, 5])"
    same_results(parse(TRANSPOSE), sch.func)
    replays(sch, parse(TRANSPOSE))


def test_tile_refuses_a_skewed_dependence_and_changes_nothing():
    sch = Schedule(parse(SKEWED))
    with pytest.raises(IllegalTransformError) as info:
        sch.tile(["i", "j"], [3, 3])
    assert info.value.evidence.element is not None
    # The splits before the refused reorder are undone too.
    assert len(sch.trace) == 0 and sch.func is sch.original


def test_a_trace_of_the_family_prints_and_replays():
    sch = Schedule(parse(TRANSPOSE))
    j0, j1 = sch.split("j", [None, 4], tail="predicate")
    sch.reorder(j0, "i")
    fused = sch.fuse(j0, "i")
    sch.split(fused, [3, None], tail="partition")
    assert str(sch.trace).splitlines() == [
        "sch.split(loop='j', factors=[None, 4])",
        "sch.reorder('j_0', 'i')",
        "sch.fuse('j_0', 'i')",
        "sch.split(loop='j_0_i_fused', factors=[3, None], tail='partition')",
    ]
    same_results(parse(TRANSPOSE), sch.func)
    replays(sch, parse(TRANSPOSE))


@pytest.mark.parametrize("call, error, message", [
    (lambda s: s.get_loops(3), ArgumentTypeError, "Schedule.get_loops: parameter block"),
    (lambda s: s.split(3, [None, 2]), ArgumentTypeError, "Schedule.split: parameter loop"),
    (lambda s: s.split("i", 8), ArgumentTypeError, "Schedule.split: parameter factors"),
    (lambda s: s.split("i", [None, 2], tail="guard"), ArgumentValueError,
     "tail must be one of 'predicate', 'partition' or 'pad'"),
    (lambda s: s.fuse("i", 3), ArgumentTypeError, "Schedule.fuse: parameter loops"),
    (lambda s: s.reorder(None, "i"), ArgumentTypeError, "Schedule.reorder: parameter loops"),
    (lambda s: s.tile("i", [4]), ArgumentTypeError, "Schedule.tile: parameter loops"),
    (lambda s: s.tile(["i"], [4], tail="partition"), ArgumentValueError,
     "tail must be one of 'predicate' or 'pad'"),
    (lambda s: s.tile(["i", "j"], [4]), PolypadError, "2 loops but 1 factors"),
])
def test_arguments_are_checked_at_the_front_door(call, error, message):
    sch = Schedule(parse(TRANSPOSE))
    with pytest.raises(error, match=message):
        call(sch)
    assert len(sch.trace) == 0


# ---------------------------------------------------------------- Numba


@pytest.mark.numba
def test_scheduled_kernels_run_the_same_in_numba():
    sch = Schedule(parse(SYMBOLIC))
    sch.split("i", [None, 4, 8], tail="partition")
    for size in (0, 45):
        for want, got in zip(run(parse(SYMBOLIC), n=size),
                             run(sch.func, "numba", n=size), strict=True):
            np.testing.assert_array_equal(got, want)
    sch = Schedule(parse(TRANSPOSE))
    sch.tile(["i", "j"], [4, 5])
    for want, got in zip(run(parse(TRANSPOSE)), run(sch.func, "numba"), strict=True):
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- property


NEST = '''
@T.prim_func
def f(A: T.Buffer(({a}, {b}), "int32"), B: T.Buffer(({a}, {b}), "int32")):
    for i in T.serial({a}):
        for j in T.serial({b}):
            {body}
'''

# The same nest with a block between the loops, which loops move across.
NEST_BLOCK = NEST.replace("        for j", "        with T.block('b'):\n            for j").replace(
    "            {body}", "                {body}")

BODIES = [
    "B[i, j] = A[i, j] * 2 + i",
    "A[i, j] = A[i, j] + A[i - 1, j] if i > 0 else A[i, j]",
    "B[i, j] = B[i, j - 1] + A[i, j] if j > 0 else A[i, j]",
    "A[i, j] = A[i - 1, j + 1] * 2 if i > 0 and j < {b} - 1 else A[i, j]",
]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(a=st.integers(1, 6), b=st.integers(1, 6), body=st.sampled_from(range(len(BODIES))),
       nest=st.sampled_from([NEST, NEST_BLOCK]),
       steps=st.lists(st.tuples(st.sampled_from(["split", "reorder", "fuse"]),
                                st.integers(0, 5), st.integers(1, 4),
                                st.sampled_from(["predicate", "partition", "pad"])),
                      max_size=3))
def test_random_legal_schedules_run_the_same(a, b, body, nest, steps):
    func = parse(_expand(nest.format(a=a, b=b, body=BODIES[body].format(b=b))))
    sch = Schedule(func)
    for kind, pick, factor, tail in steps:
        loops = sch.get_loops(None)
        try:
            if kind == "split":
                sch.split(loops[pick % len(loops)], [None, factor], tail=tail)
            elif kind == "reorder" and len(loops) >= 2:
                k = pick % (len(loops) - 1)
                sch.reorder(loops[k + 1], loops[k])
            elif kind == "fuse" and len(loops) >= 2:
                k = pick % (len(loops) - 1)
                sch.fuse(loops[k], loops[k + 1])
        except IllegalTransformError as err:
            assert err.evidence is None or err.evidence.instances, err
            event(f"{kind} refused with evidence")
            continue  # the schedule is unchanged
        except PolypadError as err:
            # Structural refusals: not a chain, a tail nest in the way.
            assert "perfectly nested" in str(err) or "adjacent" in str(err), err
            event(f"{kind} not applicable")
            continue
        event(f"{kind} applied")
    verify(sch.func)
    same_results(func, sch.func)
    assert_structural_equal(sch.trace.apply_to(func).func, sch.func)


def _expand(text: str) -> str:
    """The nest's ``x if c else y`` body as an ``if`` statement."""
    lines = text.splitlines()
    last = lines[-1]
    if " if " not in last:
        return text
    indent = last[:len(last) - len(last.lstrip())]
    target, value = last.strip().split(" = ", 1)
    then, rest = value.split(" if ", 1)
    cond, other = rest.split(" else ", 1)
    lines[-1:] = [f"{indent}if {cond}:", f"{indent}    {target} = {then}",
                  f"{indent}else:", f"{indent}    {target} = {other}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- across blocks


ACROSS = '''
@T.prim_func
def f(A: T.Buffer((4, 6), "int32"), B: T.Buffer((6, 4), "int32")):
    for i in T.serial(4):
        with T.block("t"):
            for j in T.serial(6):
                B[j, i] = A[i, j] * 3
'''


def test_loops_move_across_a_block_that_stays_in_place():
    sch = Schedule(parse(ACROSS))
    assert sch.get_loops("t") == ["i", "j"]
    sch.reorder("j", "i")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 6), "int32"), B: T.Buffer((6, 4), "int32")):
    for j in T.serial(6):
        with T.block("t"):
            for i in T.serial(4):
                B[j, i] = A[i, j] * 3
'''))
    same_results(parse(ACROSS), sch.func)
    sch = Schedule(parse(ACROSS))
    sch.fuse("i", "j")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 6), "int32"), B: T.Buffer((6, 4), "int32")):
    for i_j_fused in T.serial(24):
        with T.block("t"):
            B[i_j_fused % 6, i_j_fused // 6] = A[i_j_fused // 6, i_j_fused % 6] * 3
'''))
    sch = Schedule(parse(ACROSS))
    assert sch.tile(["i", "j"], [3, 4]) == ["i_0", "j_0", "i_1", "j_1"]
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 6), "int32"), B: T.Buffer((6, 4), "int32")):
    for i_0 in T.serial(2):
        for j_0 in T.serial(2):
            with T.block("t"):
                for i_1, j_1 in T.grid(3, 4):
                    if i_0 * 3 + i_1 < 4:
                        if j_0 * 4 + j_1 < 6:
                            B[j_0 * 4 + j_1, i_0 * 3 + i_1] = A[i_0 * 3 + i_1, j_0 * 4 + j_1] * 3
'''))
    same_results(parse(ACROSS), sch.func)
    replays(sch, parse(ACROSS))
