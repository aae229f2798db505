"""The tiling family, part one: ``get_loops`` and ``split`` (each tail).

``reorder``, ``fuse`` and ``tile`` are in test_reorder_fuse_tile.py.

Each rewrite is checked against the script it should print, run against the
original on random inputs (reference executor; a few Numba kernels), and
replayed from its trace; each refusal names its error class and evidence.
"""

from __future__ import annotations

import pytest
from tiling_support import HEAD, SCALE, SYMBOLIC, replays, same_results

from analyses import Element, Instance
from polypad.errors import (
    IllegalTransformError,
    NotFoundError,
    PolypadError,
)
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# ---------------------------------------------------------------- get_loops


def test_get_loops_lists_loops_outside_and_inside_the_block():
    sch = Schedule(parse('''
@T.prim_func
def f(A: T.Buffer((4, 8, 8), "int32")):
    for b in T.serial(4):
        with T.block("compute"):
            for i in T.serial(8):
                for j in T.serial(8):
                    A[b, i, j] = i + j
    with T.block("other"):
        for k in T.serial(8):
            A[0, 0, k] = 0
'''))
    assert sch.get_loops("compute") == ["b", "i", "j"]
    assert sch.get_loops("other") == ["k"]
    assert sch.get_loops(None) == ["b", "i", "j", "k"]
    assert len(sch.trace) == 0
    with pytest.raises(NotFoundError, match="no block 'nowhere'"):
        sch.get_loops("nowhere")


def test_get_loops_names_shared_loop_variables_by_block():
    sch = Schedule(parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    with T.block("first"):
        for i in T.serial(8):
            A[i] = i
    with T.block("second"):
        for i in T.serial(8):
            B[i] = A[i]
'''))
    assert sch.get_loops("second") == ["second/i"]
    assert sch.split("second/i", [None, 4]) == ["i_0", "i_1"]
    # The other ``i`` is unique now, and is named plainly.
    assert sch.get_loops("first") == ["i"]
    with pytest.raises(NotFoundError, match="no loop 'second/i'"):
        sch.split("second/i", [None, 2])


def test_an_ambiguous_loop_name_lists_the_candidates():
    text = HEAD + '''
    for i in T.serial(14):
        A[i] = 0
    for i in T.serial(14):
        B[i] = A[i]
'''
    sch = Schedule(parse(text))
    assert sch.get_loops(None) == ["i#0", "i#1"]
    with pytest.raises(NotFoundError, match="2 loops run over a variable called 'i'.*'i#0', 'i#1'"):
        sch.split("i", [None, 4])
    assert sch.split("i#1", [None, 4], tail="partition") == ["i_0", "i_1"]
    assert sch.get_loops(None) == ["i", "i_0", "i_1", "i_1_tail"]
    same_results(parse(text), sch.func)


# ---------------------------------------------------------------- split


def test_split_predicate_guards_an_extent_the_factors_do_not_divide():
    sch = Schedule(parse(SCALE))
    assert sch.split("i", [None, 8]) == ["i_0", "i_1"]
    verify(sch.func)
    assert_structural_equal(sch.func, parse(HEAD + '''
    with T.block("compute"):
        for i_0, i_1 in T.grid(2, 8):
            if i_0 * 8 + i_1 < 14:
                B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
'''))
    same_results(parse(SCALE), sch.func)
    assert str(sch.trace) == "sch.split(loop='i', factors=[None, 8])"


@pytest.mark.parametrize("tail", ["predicate", "partition", "pad"])
def test_split_by_a_divisor_needs_no_tail(tail):
    text = SCALE.replace("14", "16")
    sch = Schedule(parse(text))
    assert sch.split("i", [4, None], tail=tail) == ["i_0", "i_1"]
    assert_structural_equal(sch.func, parse(HEAD.replace("14", "16") + '''
    with T.block("compute"):
        for i_0, i_1 in T.grid(4, 4):
            B[i_0 * 4 + i_1] = A[i_0 * 4 + i_1] * 2
'''))


def test_split_partition_runs_whole_tiles_then_a_tail():
    sch = Schedule(parse(SCALE))
    assert sch.split("i", [None, 8], tail="partition") == ["i_0", "i_1"]
    assert_structural_equal(sch.func, parse(HEAD + '''
    with T.block("compute"):
        for i_0, i_1 in T.grid(1, 8):
            B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
        for i_1_tail in T.serial(6):
            B[i_1_tail + 8] = A[i_1_tail + 8] * 2
'''))
    same_results(parse(SCALE), sch.func)


def test_split_partition_in_three_has_a_tail_per_level():
    sch = Schedule(parse(SCALE))
    assert sch.split("i", [None, 2, 3], tail="partition") == ["i_0", "i_1", "i_2"]
    assert_structural_equal(sch.func, parse(HEAD + '''
    with T.block("compute"):
        for i_0, i_1, i_2 in T.grid(2, 2, 3):
            B[i_0 * 6 + i_1 * 3 + i_2] = A[i_0 * 6 + i_1 * 3 + i_2] * 2
        for i_2_tail in T.serial(2):
            B[i_2_tail + 12] = A[i_2_tail + 12] * 2
'''))
    same_results(parse(SCALE), sch.func)


def test_split_partition_gives_each_tail_its_own_statements():
    """A statement that does not read the counter was one object in the main nest and
    the tail (the verifier, run on every primitive's result, refuses that)."""
    text = HEAD + '''
    for i in T.serial(14):
        B[i] = A[i] * 2
        B[0] = 7
'''
    sch = Schedule(parse(text))
    sch.split("i", [None, 8], tail="partition")
    assert_structural_equal(sch.func, parse(HEAD + '''
    for i_0, i_1 in T.grid(1, 8):
        B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
        B[0] = 7
    for i_1_tail in T.serial(6):
        B[i_1_tail + 8] = A[i_1_tail + 8] * 2
        B[0] = 7
'''))
    main, tail = sch.func.body.stmts
    assert main.body.body.stmts[1] is not tail.body.stmts[1]
    same_results(parse(text), sch.func)


def test_split_of_a_loop_with_a_start_offsets_the_index():
    text = HEAD + '''
    for i in T.serial(3, 14):
        B[i] = A[i - 3]
'''
    sch = Schedule(parse(text))
    sch.split("i", [None, 4], tail="partition")
    assert_structural_equal(sch.func, parse(HEAD + '''
    for i_0, i_1 in T.grid(2, 4):
        B[i_0 * 4 + i_1 + 3] = A[i_0 * 4 + i_1 + 3 - 3]
    for i_1_tail in T.serial(3):
        B[i_1_tail + 11] = A[i_1_tail + 11 - 3]
'''))
    same_results(parse(text), sch.func)


@pytest.mark.parametrize("tail, factors", [
    ("predicate", [None, 8]), ("partition", [None, 8]), ("partition", [None, 4, 8])])
@pytest.mark.parametrize("size", [0, 5, 32, 45, 64])
def test_split_of_a_symbolic_extent_runs_the_same(tail, factors, size):
    sch = Schedule(parse(SYMBOLIC))
    sch.split("i", factors, tail=tail)
    verify(sch.func)
    same_results(parse(SYMBOLIC), sch.func, n=size)


def test_split_partition_of_a_symbolic_extent():
    sch = Schedule(parse(SYMBOLIC))
    sch.split("i", [None, 8], tail="partition")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    T.assume(0 <= n and n <= 64)
    for i_0, i_1 in T.grid(n // 8, 8):
        B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] + 3
    for i_1_tail in T.serial(n % 8):
        B[i_1_tail + n // 8 * 8] = A[i_1_tail + n // 8 * 8] + 3
'''))


@pytest.mark.parametrize("factors, message", [
    ([8], "two or more"),
    ([None, None], "at most one factor may be None"),
    ([0, 8], "positive int or None"),
    ([2, 4], "multiply to 8, less than the extent 14"),
])
def test_split_names_bad_factors(factors, message):
    with pytest.raises(PolypadError, match=message):
        Schedule(parse(SCALE)).split("i", factors)


def test_split_of_a_symbolic_extent_needs_the_outer_factor_free():
    with pytest.raises(PolypadError, match="make the outermost factor None"):
        Schedule(parse(SYMBOLIC)).split("i", [8, None])


def test_split_of_an_unknown_loop_lists_the_loops():
    with pytest.raises(NotFoundError, match="no loop 'k' in function f; loops: 'i'"):
        Schedule(parse(SCALE)).split("k", [None, 2])


# ---------------------------------------------------------------- split, tail="pad"


def test_pad_refuses_a_write_out_of_bounds():
    text = HEAD + '''
    for i in T.serial(14):
        B[i] = 7
'''
    sch = Schedule(parse(text))
    with pytest.raises(IllegalTransformError, match="tail='pad'") as info:
        sch.split("i", [None, 8], tail="pad")
    evidence = info.value.evidence
    assert evidence.element == Element("B", (14,))
    assert evidence.instances == (Instance("S0", {"i_0": 1, "i_1": 6}),)
    assert "outside the shape (14,) of B" in evidence.description
    assert len(sch.trace) == 0 and sch.func is sch.original


@pytest.mark.parametrize("block", [None, "compute"])
def test_pad_refuses_to_overwrite_an_element_the_caller_reads(block):
    body = "for i in T.serial(14):\n        B[i] = A[i] * 2"
    if block is not None:
        body = f"with T.block({block!r}):\n        " + body.replace("\n", "\n    ")
    sch = Schedule(parse(f'''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    {body}
'''))
    with pytest.raises(IllegalTransformError) as info:
        sch.split("i", [None, 8], tail="pad")
    evidence = info.value.evidence
    assert evidence.element == Element("B", (14,))
    # Named as the statement is named in the function the user sees (the prover asks
    # about a copy holding the body twice).
    label = block or "S0"
    assert evidence.instances == (Instance(label, {"i_0": 1, "i_1": 6}), Instance("END", {}))
    assert evidence.description.startswith(f"running the body where not (i_0 * 8 + i_1 < 14) "
                                           f"changes the result: {label}(i_0=1, i_1=6) writes")


PADDED_LOCAL = '''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((16,), "int32")
    for i in T.serial(14):
        B[i] = A[i] * 2
    for k in T.serial(14):
        C[k] = B[k] + 1
'''


def test_pad_over_a_padded_buffer_runs_the_extra_iterations():
    sch = Schedule(parse(PADDED_LOCAL))
    assert sch.split("i", [None, 8], tail="pad") == ["i_0", "i_1"]
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((16,), "int32")
    for i_0, i_1 in T.grid(2, 8):
        B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
    for k in T.serial(14):
        C[k] = B[k] + 1
'''))
    same_results(parse(PADDED_LOCAL), sch.func)
    replays(sch, parse(PADDED_LOCAL))


def test_pad_over_padding_that_is_written_later():
    text = '''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in T.serial(14):
        B[i] = A[i] * 2
    for k in T.serial(14, 16):
        B[k] = 0
'''
    sch = Schedule(parse(text))
    sch.split("i", [None, 8], tail="pad")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i_0, i_1 in T.grid(2, 8):
        B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
    for k in T.serial(14, 16):
        B[k] = 0
'''))
    same_results(parse(text), sch.func)


def test_pad_of_a_symbolic_extent_is_refused_when_not_proved():
    with pytest.raises(IllegalTransformError, match="tail='pad'"):
        Schedule(parse(SYMBOLIC)).split("i", [None, 8], tail="pad")
