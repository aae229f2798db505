"""``distribute`` and ``reorder_by_map``: the rewrites, their refusals, their trace."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from analyses import Element, Instance
from polypad.errors import IllegalTransformError, NotFoundError, PolypadError
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

CONV = '''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), F: T.Buffer((3,), "int32"), B: T.Buffer((14,), "int32")):
    with T.block("compute"):
        for i in T.serial(14):
            B[i] = 0
            for f in T.serial(3):
                B[i] = B[i] + F[f] * A[i + f]
            B[i] = B[i] * 2
'''


def same_results(before, after, seed: int = 0, **scalars) -> None:
    """Both functions leave every buffer equal, from the same random inputs;
    ``scalars`` are the leading scalar parameters."""
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-9, 9, p.shape).astype(p.dtype)
              for p in before.params[len(scalars):]]
    want = [a.copy() for a in arrays]
    got = [a.copy() for a in arrays]
    codegen.build(before, target="python")(*scalars.values(), *want)
    codegen.build(after, target="python")(*scalars.values(), *got)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- distribute


def test_distribute_before_and_after():
    sch = Schedule(parse(CONV))
    sch.distribute("compute", ["compute_0"], "init")
    sch.distribute("compute", [1], "finish", position="after")
    verify(sch.func)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), F: T.Buffer((3,), "int32"), B: T.Buffer((14,), "int32")):
    with T.block("init"):
        for i in T.serial(14):
            B[i] = 0
    with T.block("compute"):
        for i in T.serial(14):
            for f in T.serial(3):
                B[i] = B[i] + F[f] * A[i + f]
    with T.block("finish"):
        for i in T.serial(14):
            B[i] = B[i] * 2
'''))
    assert str(sch.trace).splitlines() == [
        "sch.distribute(block='compute', statements=['compute_0'], new_block='init', "
        "position='before')",
        "sch.distribute(block='compute', statements=[1], new_block='finish', "
        "position='after')",
    ]
    assert_structural_equal(sch.trace.apply_to(parse(CONV)).func, sch.func)
    same_results(parse(CONV), sch.func)


def test_distribute_refuses_to_run_a_use_before_its_definition():
    sch = Schedule(parse(CONV))
    with pytest.raises(IllegalTransformError) as info:
        sch.distribute("compute", ["compute_0"], "init", position="after")
    evidence = info.value.evidence
    # compute_1 at i = 0 reads B[0] that compute_0 wrote: moving compute_0 after the
    # block would run it last.  Evidence names statements as the arguments do.
    assert evidence.instances == (Instance("compute_0", {"i": 0}),
                                  Instance("compute_1", {"i": 0, "f": 0}))
    assert evidence.element == Element("B", (0,))
    assert evidence.description.startswith("flow dependence")
    assert len(sch.trace) == 0


@pytest.mark.parametrize("guard", ["n < 4", "n >= 0"])
def test_distribute_orders_statements_of_one_top_level_if(guard):
    # Fuzz case 889 (seed 0): the two stores under one top-level ``if`` have
    # different first program positions; moving the first after the second
    # must be seen to break the output dependence on B[2, 1].
    func = parse(f'''
@T.prim_func
def f(B: T.Buffer((4, 4), "int32"), n: T.int32):
    if {guard}:
        B[2, 1] = 3
        B[2, 1] = -1
''')
    sch = Schedule(func)
    with pytest.raises(IllegalTransformError) as info:
        sch.distribute(None, ["S0"], position="after")
    evidence = info.value.evidence
    assert evidence.description.startswith("output dependence")
    assert evidence.instances == (Instance("S0", {}), Instance("S1", {}))
    assert evidence.element == Element("B", (2, 1))
    assert len(sch.trace) == 0


def test_distribute_keeps_guards_and_else_branches():
    text = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    with T.block("b"):
        for i in T.serial(8):
            if i < 3:
                A[i] = 1
            else:
                A[i] = 2
'''
    sch = Schedule(parse(text))
    sch.distribute("b", ["b_1"], "other")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    with T.block("other"):
        for i in T.serial(8):
            if not i < 3:
                A[i] = 2
    with T.block("b"):
        for i in T.serial(8):
            if i < 3:
                A[i] = 1
'''))
    same_results(parse(text), sch.func)


@pytest.mark.parametrize("args, error, message", [
    (("compute", ["compute_7"], "x"), NotFoundError,
     "no statement 'compute_7' in block 'compute'; statements: compute_0, compute_1"),
    (("compute", [0, 1, 2], "x"), PolypadError, "some, but not all"),
    (("compute", [0], "compute"), PolypadError, "already a block 'compute'"),
    (("compute", [0], "x", "middle"), PolypadError, "'before' or 'after'"),
    ((None, [0], "x"), PolypadError, "with block=None the loop nests are split in place"),
    (("nowhere", [0], "x"), NotFoundError, "no block 'nowhere'"),
])
def test_distribute_names_what_is_wrong(args, error, message):
    with pytest.raises(error, match=message):
        Schedule(parse(CONV)).distribute(*args)


# ---------------------------------------------------------------- reorder_by_map


def test_reorder_by_map_interchanges_loops():
    text = '''
@T.prim_func
def f(A: T.Buffer((3, 5), "float32"), B: T.Buffer((5, 3), "float32")):
    with T.block("t"):
        for i in T.serial(3):
            for j in T.vectorized(5):
                B[j, i] = A[i, j]
'''
    sch = Schedule(parse(text))
    sch.reorder_by_map("t", "{ t[i, j] -> [j] }", ("jj",))
    # The band is the new outer loop; i stays a loop (with its kind) inside it.
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((3, 5), "float32"), B: T.Buffer((5, 3), "float32")):
    with T.block("t"):
        for jj in T.serial(5):
            for i in T.serial(3):
                B[jj, i] = A[i, jj]
'''))
    same_results(parse(text), sch.func)


def test_reorder_by_map_refuses_to_reverse_a_recurrence():
    text = '''
@T.prim_func
def f(A: T.Buffer((14,), "int32")):
    with T.block("scan"):
        for i in T.serial(1, 14):
            A[i] = A[i - 1] + 1
'''
    sch = Schedule(parse(text))
    with pytest.raises(IllegalTransformError) as info:
        sch.reorder_by_map("scan", "{ scan[i] -> [-i] }", ("r",))
    evidence = info.value.evidence
    assert evidence.instances == (Instance("scan", {"i": 1}), Instance("scan", {"i": 2}))
    assert evidence.element == Element("A", (1,))
    assert "reorder_by_map would break a dependence" in str(info.value)


def test_reorder_by_map_rebuilds_lets_and_data_dependent_guards():
    text = '''
@T.prim_func
def f(A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    with T.block("b"):
        for i in T.serial(14):
            x = A[i] * 2
            if A[i] > 0:
                B[i // 4, i % 4] = x + 1
'''
    sch = Schedule(parse(text))
    sch.reorder_by_map("b", "{ b[i] -> [floor(i/4), i mod 4] }", ("io", "ii"))
    verify(sch.func)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    with T.block("b"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                if A[4 * io + ii] > 0:
                    x = A[4 * io + ii] * 2
                    B[io, ii] = x + 1
'''))
    same_results(parse(text), sch.func)


def test_reorder_by_map_runs_a_shorter_band_before_the_deeper_loops():
    text = '''
@T.prim_func
def f(A: T.Buffer((2, 3, 4), "int32"), B: T.Buffer((2, 3), "int32")):
    with T.block("b"):
        for i in T.serial(6):
            B[i // 3, i % 3] = 0
            for j in T.serial(4):
                B[i // 3, i % 3] = B[i // 3, i % 3] + A[i // 3, i % 3, j]
'''
    sch = Schedule(parse(text))
    sch.reorder_by_map("b", "{ b_0[i] -> [floor(i/3), i mod 3]; "
                            "b_1[i, j] -> [floor(i/3), i mod 3, j] }", ("p", "q", "r"))
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((2, 3, 4), "int32"), B: T.Buffer((2, 3), "int32")):
    with T.block("b"):
        for p, q in T.grid(2, 3):
            B[p, q] = 0
            for r in T.serial(4):
                B[p, q] = B[p, q] + A[p, q, r]
'''))
    same_results(parse(text), sch.func)


@pytest.mark.parametrize("band, names, message", [
    ("{ compute_0[i] -> [i] }", ("x",), "compute_1, compute_2 share the loop nest"),
    ("{ compute_0[i] -> [i]; compute_1[i, f] -> [i]; compute_2[i] -> [i] }", ("x", "y"),
     "1 members but 2 names"),
    ("{ compute_0[i] -> [i]; compute_1[i, f] -> [f]; compute_2[i] -> [i] }", ("i",),
     "the new loop 'i' has the name of a loop compute_1 keeps"),
    ("{ compute_0[i, j] -> [i] }", ("x",), "compute_0 has 1 loops but the band gives it 2"),
    ("{ compute_0[i] -> [o] : 0 <= o <= i }", ("x",), "must be a function"),
    ("{ compute_0[i] -> [i] ", ("x",), "cannot read the band"),
    ("{ compute_0[i] -> [i] }", ("for x",), "cannot name a loop"),
])
def test_reorder_by_map_names_what_is_wrong(band, names, message):
    with pytest.raises(PolypadError, match=message):
        Schedule(parse(CONV)).reorder_by_map("compute", band, names)


def test_reorder_by_map_refuses_loops_bounded_by_data():
    func = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((4, 4), "int32")):
    for i in T.serial(A[0]):
        B[i // 4, i % 4] = 1
''')
    with pytest.raises(PolypadError, match=r"loops of S0 depend on data \(i < A\[0\]\)"):
        Schedule(func).reorder_by_map(None, "{ S0[i] -> [floor(i/4), i mod 4] }", ("o", "p"))


# ---------------------------------------------------------------- blocks inside loops

NEST = '''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
      C: T.Buffer((4, 8), "float32")):
    for i in T.serial(4):
        with T.block("compute"):
            for j in T.serial(8):
                B[i, j] = 0.0
                C[i, j] = B[i, j] * 2.0 + A[i, j]
'''


def test_distribute_inside_a_loop_keeps_the_enclosing_loop():
    sch = Schedule(parse(NEST))
    sch.distribute("compute", ["compute_0"], "init")
    verify(sch.func)
    # Both blocks stay inside ``for i``: only the block's own loops are copied.
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
      C: T.Buffer((4, 8), "float32")):
    for i in T.serial(4):
        with T.block("init"):
            for j in T.serial(8):
                B[i, j] = 0.0
        with T.block("compute"):
            for j in T.serial(8):
                C[i, j] = B[i, j] * 2.0 + A[i, j]
'''))
    assert_structural_equal(sch.trace.apply_to(parse(NEST)).func, sch.func)
    same_results(parse(NEST), sch.func)


def test_distribute_inside_a_loop_refuses_to_reverse_the_block_order():
    sch = Schedule(parse(NEST))
    with pytest.raises(IllegalTransformError) as info:
        sch.distribute("compute", ["compute_0"], "init", position="after")
    # At i = 0, compute_1 at j = 0 reads the B[0, 0] that compute_0 wrote just
    # before it; moved after the block, compute_0 would run last in that iteration.
    evidence = info.value.evidence
    assert evidence.description.startswith("flow dependence")
    assert evidence.instances == (Instance("compute_0", {"i": 0, "j": 0}),
                                  Instance("compute_1", {"i": 0, "j": 0}))
    assert evidence.element == Element("B", (0, 0))
    assert len(sch.trace) == 0


def test_reorder_by_map_inside_a_loop_rebuilds_only_the_block():
    sch = Schedule(parse(NEST))
    sch.reorder_by_map("compute", "{ compute_0[i, j] -> [floor(j/4), j mod 4]; "
                                  "compute_1[i, j] -> [floor(j/4), j mod 4] }", ("jo", "ji"))
    verify(sch.func)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
      C: T.Buffer((4, 8), "float32")):
    for i in T.serial(4):
        with T.block("compute"):
            for jo, ji in T.grid(2, 4):
                B[i, 4 * jo + ji] = 0.0
                C[i, 4 * jo + ji] = B[i, 4 * jo + ji] * 2.0 + A[i, 4 * jo + ji]
'''))
    assert_structural_equal(sch.trace.apply_to(parse(NEST)).func, sch.func)
    same_results(parse(NEST), sch.func)


TRIANGLE = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((6, 6), "int32"), B: T.Buffer((6,), "int32")):
    for i in T.serial(6):
        x = B[i]
        if i >= 1 and i < n and x < 5:
            with T.block("tri"):
                for j in T.serial(i):
                    A[i, j] = A[i - 1, j] + x
'''


def test_reorder_by_map_inside_a_loop_sees_the_enclosing_counter_as_a_parameter():
    sch = Schedule(parse(TRIANGLE))
    sch.reorder_by_map("tri", "{ tri[i, j] -> [i - 1 - j] }", ("r",))
    verify(sch.func)
    # The inner loop still runs i times; the guard and the let around the block
    # (``x < 5`` is data: the model leaves it out) stay where they were.
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((6, 6), "int32"), B: T.Buffer((6,), "int32")):
    for i in T.serial(6):
        x = B[i]
        if i >= 1 and i < n and x < 5:
            with T.block("tri"):
                for r in T.serial(i):
                    A[i, i - r - 1] = A[i - 1, i - r - 1] + x
'''))
    assert_structural_equal(sch.trace.apply_to(parse(TRIANGLE)).func, sch.func)
    for n in (0, 4, 6):
        same_results(parse(TRIANGLE), sch.func, n=n)


def test_reorder_by_map_inside_a_loop_refuses_to_reverse_a_recurrence():
    func = parse('''
@T.prim_func
def f(A: T.Buffer((4, 8), "int32")):
    for i in T.serial(4):
        with T.block("scan"):
            for j in T.serial(1, 8):
                A[i, j] = A[i, j - 1] + 1
''')
    sch = Schedule(func)
    with pytest.raises(IllegalTransformError) as info:
        sch.reorder_by_map("scan", "{ scan[i, j] -> [-j] }", ("r",))
    evidence = info.value.evidence
    assert evidence.instances == (Instance("scan", {"i": 0, "j": 1}),
                                  Instance("scan", {"i": 0, "j": 2}))
    assert evidence.element == Element("A", (0, 1))
    assert len(sch.trace) == 0


def test_reorder_by_map_refuses_a_new_loop_named_like_an_enclosing_one():
    with pytest.raises(PolypadError, match="the new loop 'i' has the name of a loop"):
        Schedule(parse(NEST)).reorder_by_map(
            "compute", "{ compute_0[i, j] -> [j]; compute_1[i, j] -> [j] }", ("i",))


def test_reorder_by_map_keeps_a_block_around_one_statement():
    # cache_read wraps each copy in a block inside its loop; the rebuilt copy keeps it.
    text = '''
@T.prim_func
def f(A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    for i in T.serial(14):
        with T.block("copy"):
            B[i // 4, i % 4] = A[i]
'''
    sch = Schedule(parse(text))
    sch.reorder_by_map(None, "{ copy[i] -> [floor(i/4), i mod 4] }", ("io", "ii"))
    verify(sch.func)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            with T.block("copy"):
                B[io, ii] = A[4 * io + ii]
'''))
    same_results(parse(text), sch.func)


def test_reorder_by_map_refuses_to_cut_a_block_apart():
    func = parse('''
@T.prim_func
def f(B: T.Buffer((4, 4), "int32")):
    for i in T.serial(14):
        with T.block("two"):
            B[i // 4, i % 4] = 1
            B[i // 4, i % 4] = B[i // 4, i % 4] + 1
''')
    band = "{ two_0[i] -> [floor(i/4), i mod 4]; two_1[i] -> [floor(i/4), i mod 4] }"
    # The block moves whole (reschedule_blocks): its statements take no bands of their own.
    with pytest.raises(PolypadError, match="two_[01] is a statement of block 'two', which "
                                           "moves whole"):
        Schedule(func).reorder_by_map(None, band, ("o", "p"))


def test_sequential_buffer_access_inside_a_loop():
    text = '''
@T.prim_func
def f(A: T.Buffer((2, 4, 4), "int32"), C: T.Buffer((2,), "int32")):
    for i in T.serial(2):
        with T.block("compute"):
            C[i] = 0
            for j in T.serial(14):
                A[i, j // 4, j % 4] = i * 14 + j
'''
    sch = Schedule(parse(text))
    sch.sequential_buffer_access("compute", "A")
    verify(sch.func)
    # The enclosing ``i`` stays; the block walks A's last two axes in order.
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((2, 4, 4), "int32"), C: T.Buffer((2,), "int32")):
    for i in T.serial(2):
        with T.block("compute"):
            C[i] = 0
            for jo, ji in T.grid(4, 4):
                if 4 * jo + ji < 14:
                    A[i, jo, ji] = i * 14 + (4 * jo + ji)
'''))
    assert str(sch.trace) == "sch.sequential_buffer_access(block='compute', buffer='A')"
    assert_structural_equal(sch.trace.apply_to(parse(text)).func, sch.func)
    same_results(parse(text), sch.func)
