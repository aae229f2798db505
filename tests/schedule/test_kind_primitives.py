"""Loop kinds: ``parallel``, ``vectorize``, ``unroll``, and the carried dependences
that refuse the first two.

Each rewrite is checked against the script it should print, run against the
original on random inputs (reference executor), and replayed from its
trace; each refusal names its error class and evidence.  The carried
dependences are checked against running a loop backwards (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kind_support import (
    ACCUMULATE,
    MAP,
    PREFIX_SUM,
    ROW_SUM,
    assert_same,
    check_schedule,
    row_sum,
    run,
)

from analyses import Element, Instance
from analyses.loop_carried import carried_dependence
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_loop, replace
from polypad.ir.loop_names import loop_names
from polypad.ir.substitute import substitute
from polypad.schedule import Schedule
from polypad.script import parse
from polypad.script.printer import script

# ---------------------------------------------------------------- kinds


def test_parallel_and_vectorize_print_their_kinds():
    f = parse(MAP)
    sch = Schedule(f)
    sch.parallel("i")
    sch.vectorize("j")
    check_schedule(f, sch, '''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i in T.parallel(8):
        for j in T.vectorized(4):
            C[i, j] = A[i, j] * T.float32(2)
''')
    assert str(sch.trace).splitlines() == ["sch.parallel(loop='i')", "sch.vectorize(loop='j')"]
    assert_same(run(f), run(sch.func))


def test_unroll_keeps_the_order_of_a_reduction():
    f = row_sum()
    sch = Schedule(f)
    sch.unroll("k")
    check_schedule(f, sch, ROW_SUM.format(t="float32", zero="T.float32(0)").replace(
        "T.serial(16)", "T.unroll(16)"))
    assert str(sch.trace) == "sch.unroll(loop='k')"
    # Unrolling does not reorder: equal to the last bit.
    for w, g in zip(run(f), run(sch.func), strict=True):
        np.testing.assert_array_equal(g, w)


def test_unroll_refuses_a_symbolic_extent():
    sch = Schedule(parse('''
@T.prim_func
def f(A: T.Buffer((n,), "int32"), n: T.int32):
    for i in T.serial(n):
        A[i] = 1
'''))
    with pytest.raises(PolypadError, match="not a constant") as info:
        sch.unroll("i")
    assert type(info.value) is PolypadError
    assert len(sch.trace) == 0


@pytest.mark.parametrize("primitive", ["parallel", "vectorize"])
def test_a_prefix_sum_is_refused(primitive):
    f = parse(PREFIX_SUM)
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError) as info:
        getattr(sch, primitive)("i")
    evidence = info.value.evidence
    # i = 2 reads B[1], which i = 1 wrote: the loop carries the sum.
    assert evidence.instances == (Instance("S0", {"i": 1}), Instance("S0", {"i": 2}))
    assert evidence.element == Element("B", (1,))
    assert "carries a flow dependence" in evidence.description
    assert str(info.value).startswith(f"{primitive} would break a dependence")
    assert len(sch.trace) == 0
    assert sch.func is f


@pytest.mark.parametrize("primitive", ["parallel", "vectorize"])
def test_a_reduction_is_not_reassociated_silently(primitive):
    sch = Schedule(row_sum())
    with pytest.raises(IllegalTransformError) as info:
        getattr(sch, primitive)("k")
    evidence = info.value.evidence
    assert evidence.instances == (Instance("sum_1", {"i": 0, "k": 0}),
                                  Instance("sum_1", {"i": 0, "k": 1}))
    assert evidence.element == Element("B", (0,))
    assert len(sch.trace) == 0


def test_a_loop_around_a_reduction_runs_in_parallel_and_in_lanes():
    # Each i has its own element: i carries nothing and runs in parallel, or in lanes:
    # the lanes go below the loop over k (polypad.semantics.vector_lanes), so each
    # lane sums its row in order and fast-math reassociates nothing.
    f = row_sum()
    sch = Schedule(f)
    sch.vectorize("i")
    assert str(sch.trace) == "sch.vectorize(loop='i')"
    want = run(f)
    for target in ("python", "numba"):
        for w, g in zip(want, run(sch.func, target=target), strict=True):
            np.testing.assert_array_equal(g, w)  # the same sums, in the same order
    sch = Schedule(f)
    sch.parallel("i")
    assert str(sch.trace) == "sch.parallel(loop='i')"


def test_lanes_that_cannot_go_below_a_float_reduction_are_refused():
    # The bounds of k use i: the lanes stay around the loop over k, and fast-math
    # would reassociate the sum inside them.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        for k in T.serial(i + 1):
            B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="fast-math") as info:
        sch.vectorize("i")
    assert info.value.evidence.instances == (Instance("S0", {"i": 1, "k": 0}),
                                             Instance("S0", {"i": 1, "k": 1}))
    assert info.value.evidence.element == Element("B", (1,))
    assert len(sch.trace) == 0
    # Integers are exact in any order.
    sch = Schedule(parse(script(f).replace("float32", "int32")))
    sch.vectorize("i")
    assert str(sch.trace) == "sch.vectorize(loop='i')"


def test_a_dependence_inside_one_iteration_is_not_carried():
    # A[i] is written then read in the same iteration of i, and the loop over j
    # inside reads what i wrote: i carries nothing; j carries the output on C[i].
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for i in T.serial(8):
        A[i] = i
        for j in T.serial(3):
            C[i] = A[i] + j
''')
    sch = Schedule(f)
    sch.parallel("i")
    with pytest.raises(IllegalTransformError) as info:
        sch.vectorize("j")
    assert info.value.evidence.element == Element("C", (0,))
    assert "output dependence" in info.value.evidence.description


NESTS = [PREFIX_SUM, MAP, ROW_SUM.format(t="int32", zero="0"), ACCUMULATE.format(t="int32"), '''
@T.prim_func
def f(A: T.Buffer((6, 6), "int32")):
    for i in T.serial(1, 6):
        for j in T.serial(5):
            A[i, j] = A[i - 1, j + 1] + 1
''', '''
@T.prim_func
def f(A: T.Buffer((6, 6), "int32"), B: T.Buffer((6, 6), "int32")):
    for i, j in T.grid(6, 6):
        with T.block("tmp"):
            T_tmp = T.alloc_buffer((1,), "int32")
            T_tmp[0] = A[i, j] * 3
            B[i, j] = T_tmp[0] + 1
''']


def check_carried_against_backwards(f: n.PrimFunc) -> None:
    """A loop that carries nothing gives the same result run backwards; for a loop
    that carries one, the two instances run in the same iterations of the loops
    around it and in different iterations of it."""
    for name, loop in loop_names(f).items():
        found = carried_dependence(f, loop, name)
        if found is None:
            last = n.Sub(n.Add(loop.min, loop.extent), n.IntImm(1))
            backwards = n.For(loop.var, loop.min, loop.extent, loop.kind,
                              substitute(loop.body, {loop.var: n.Sub(n.Add(last, loop.min),
                                                                     loop.var)}))
            assert_same(run(f), run(replace(f, find_loop(f, name), backwards)))
        else:
            src, dst = found.instances
            outer = list(src.indices)[:list(src.indices).index(loop.var.name)]
            assert src.indices[loop.var.name] != dst.indices[loop.var.name]
            assert all(src.indices[v] == dst.indices[v] for v in outer)


@pytest.mark.parametrize("text", NESTS)
def test_carried_dependences_match_running_a_loop_backwards(text):
    check_carried_against_backwards(parse(text))


@settings(max_examples=25, deadline=None)
@given(write=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       read=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       second=st.booleans())
def test_carried_dependences_of_random_stencils(write, read, second):
    """``A[i + a, j + b] = A[i + c, j + d] + 1`` (and a second statement reading what
    the first wrote): every loop either carries a dependence with the evidence in
    two of its iterations, or runs backwards to the same result."""
    body = f"A[i + {write[0]}, j + {write[1]}] = A[i + {read[0]}, j + {read[1]}] + 1"
    if second:
        body += f"\n            B[i, j] = A[i + {read[1]}, j + {read[0]}] * 2"
    check_carried_against_backwards(parse(f'''
@T.prim_func
def f(A: T.Buffer((6, 6), "int32"), B: T.Buffer((4, 4), "int32")):
    for i, j in T.grid(4, 4):
            {body}
'''))
