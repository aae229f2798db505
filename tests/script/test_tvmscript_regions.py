"""Block regions: ``T.reads``/``T.writes`` checked against the body, inferred when asked,
buffer slices in them, and ``T.match_buffer`` of a region as a view.

The checks are proved against brute force: the elements a block instance
touches are enumerated by running its indices over the loop ranges.
"""

from __future__ import annotations

import itertools
import re
import textwrap

import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both, without_regions

from analyses import Touched
from polypad.errors import ParseError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse, script
from polypad.script.block_regions import Undecided, block_regions

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 6), "float32"),
           C: T.Buffer((8, 6), "float32")):
    for i, j, k in T.grid(8, 6, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(READS)
            T.writes(WRITES)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def matmul(reads: str = "A[vi, vk], B[vk, vj]", writes: str = "C[vi, vj]") -> str:
    return MATMUL.replace("READS", reads).replace("WRITES", writes)


@pytest.mark.parametrize("reads, writes", [
    ("A[vi, vk], B[vk, vj]", "C[vi, vj]"),        # TVM's own: C only in T.writes
    ("[A[vi, vk], B[vk, vj]]", "[C[vi, vj]]"),    # the list form
    ("A[vi, 0:4], B[0:4, vj]", "C[vi, vj]"),      # slices
    ("A[vi, :], B[:, vj]", "C[vi:vi + 1, vj]"),   # whole axes, a unit slice
    ("A, B", "C"),                                 # whole buffers
    ("A[vi, vk], B[vk, vj], C[vi, vj]", "C[0:8, 0:6]"),
])
def test_declared_regions_that_cover_the_body_parse(reads, writes):
    f = roundtrip(matmul(reads, writes))
    # The regions are checked and kept in the block's header: the rest is the same IR.
    plain = parse(textwrap.dedent(matmul()))
    assert script(without_regions(f)) == script(without_regions(plain))
    (block,) = [b for b in walk(f.body) if isinstance(b, n.Block)]
    assert [r.buffer.name for r in block.header.reads] == re.findall(r"([ABC])(?:\[|,|$)",
                                                                     reads)
    assert [r.buffer.name for r in block.header.writes] == ["C"]


# (reads, writes) -> (line, column, message); line 1 is the empty first line.
VIOLATIONS = {
    "read_slice_too_small": (
        ("A[vi, 0:3], B[vk, vj]", "C[vi, vj]"), 8, 13,
        "block 'C' reads A[0, 3] (at i = 0, j = 0, k = 3), which its T.reads does not "
        "declare: it declares A[vi, 0:3]"),
    "read_shifted": (
        ("A[vi, vk + 1], B[vk, vj]", "C[vi, vj]"), 8, 13,
        "block 'C' reads A[0, 0] (at i = 0, j = 0, k = 0), which its T.reads does not "
        "declare: it declares A[vi, vk + 1]"),
    "read_buffer_missing": (
        ("A[vi, vk]", "C[vi, vj]"), 8, 13,
        "block 'C' reads B[0, 0] (at i = 0, j = 0, k = 0), which its T.reads does not "
        "declare: it declares nothing of B"),
    "write_too_small": (
        ("A[vi, vk], B[vk, vj]", "C[vi, 0]"), 9, 13,
        "block 'C' writes C[0, 1] (at i = 0, j = 1, k = 0), which its T.writes does not "
        "declare: it declares C[vi, 0]"),
}


def test_an_empty_region_list_declares_nothing():
    """TVM prints T.writes() (and the older T.writes([])) on the root block and on an
    extern op's block, which write: regions it does not track, so nothing is checked."""
    for writes in ("", "[]"):
        f = parse(matmul("A[vi, vk], B[vk, vj], C[vi, vj]", writes), "kernel.py")
        plain = parse(matmul("A[vi, vk], B[vk, vj]", "C[vi, vj]"))
        assert_structural_equal(without_regions(f), without_regions(plain))
        # The block's header keeps the empty list, which TVM keeps too.
        (block,) = [b for b in walk(f.body) if isinstance(b, n.Block)]
        assert block.header.writes == () and "T.writes()" in script(f)


@pytest.mark.parametrize("name", list(VIOLATIONS))
def test_a_region_that_misses_an_access_is_an_error(name):
    (reads, writes), line, col, message = VIOLATIONS[name]
    with pytest.raises(ParseError) as info:
        parse(matmul(reads, writes), "kernel.py")
    err = info.value
    assert (err.lineno, err.col, err.message) == (line, col, message)


@pytest.mark.parametrize("reads, declared", [
    ("A[vi, 0:3], B[vk, vj]", lambda i, j, k, a, b: a == i and 0 <= b < 3),
    ("A[vi, vk + 1], B[vk, vj]", lambda i, j, k, a, b: (a, b) == (i, k + 1)),
    ("A[vi, 1:4], B[vk, vj]", lambda i, j, k, a, b: a == i and 1 <= b < 4),
    ("A[vi:vi + 1, 2], B[vk, vj]", lambda i, j, k, a, b: (a, b) == (i, 2)),
])
def test_the_named_element_is_the_first_violation_by_enumeration(reads, declared):
    """Brute force over the instances: the body reads A[i, k] at (i, j, k)."""
    violations = [((i, j, k), (i, k)) for i, j, k in itertools.product(range(8), range(6),
                                                                        range(4))
                  if not declared(i, j, k, i, k)]
    (i, j, k), (a, b) = min(violations)
    err = parse_error(matmul(reads))
    assert f"reads A[{a}, {b}] (at i = {i}, j = {j}, k = {k})" in err.message


WHERE = """
@T.prim_func
def pool(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(vi < 6)
            T.reads(READS)
            T.writes(B[vi])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""


def test_where_limits_the_instances_the_regions_must_cover():
    f = roundtrip(WHERE.replace("READS", "A[vi:vi + 3]"))
    # Only instances vi < 6 run: A[0:8] is all they read, though vi + 2 reaches 9 at vi = 7.
    (regions,) = block_regions(f)
    touched = regions.reads["A"]
    for i in range(8):
        want = {(i + d,) for d in range(3)} if i < 6 else set()
        got = {(x,) for x in range(-2, 12) if touched.contains((x,), {"i": i})}
        assert got == want, i
    err = parse_error(WHERE.replace("READS", "A[vi:vi + 2]"))
    assert err.message == ("block 'B' reads A[2] (at i = 0), which its T.reads does not "
                           "declare: it declares A[vi:vi + 2]")


GPU = """
@T.prim_func
def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(128, bx * 32 + tx)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + 1.0
"""


def test_regions_of_a_block_under_thread_loops():
    f = roundtrip(GPU)
    (regions,) = block_regions(f)
    assert regions.block == "B"
    w = regions.writes["B"]
    for bx, tx in itertools.product(range(4), range(32)):
        assert w.contains((bx * 32 + tx,), {"bx": bx, "tx": tx})
        assert not w.contains((bx * 32 + tx + 1,), {"bx": bx, "tx": tx})
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_allclose(out[1], args[0] + 1.0)


def test_inferred_regions_match_brute_force_for_a_convolution():
    f = roundtrip("""
        @T.prim_func
        def conv(A: T.Buffer((10,), "float32"), W: T.Buffer((3,), "float32"),
                 B: T.Buffer((8,), "float32")):
            for x, r in T.grid(8, 3):
                with T.block("B"):
                    vx, vr = T.axis.remap("SR", [x, r])
                    with T.init():
                        B[vx] = T.float32(0)
                    B[vx] = B[vx] + A[vx + vr] * W[vr]
        """)
    (regions,) = block_regions(f)
    assert sorted(regions.reads) == ["A", "B", "W"] and sorted(regions.writes) == ["B"]
    for x, r in itertools.product(range(8), range(3)):
        params = {"x": x, "r": r}
        for name, want in (("A", x + r), ("W", r), ("B", x)):
            touched = regions.reads[name]
            assert isinstance(touched, Touched) and touched.exact
            got = [e for e in range(-1, 12) if touched.contains((e,), params)]
            assert got == [want], (name, x, r)


def test_a_non_affine_index_is_undecided_not_guessed():
    text = """
        @T.prim_func
        def gather(A: T.Buffer((16,), "float32"), Idx: T.Buffer((4,), "int32"),
                   B: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[0:4], Idx[vi])
                    T.writes(B[vi])
                    B[vi] = A[Idx[vi]]
        """
    f = roundtrip(text)  # A[0:4] may be wrong, but that cannot be decided: not refused
    (regions,) = block_regions(f)
    undecided = regions.reads["A"]
    assert isinstance(undecided, Undecided)
    assert undecided.reason.startswith("Idx[i] is not quasi-affine")
    assert str(undecided).startswith("A: undecided (")


def test_buffers_the_block_allocates_are_not_regions():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    t = T.alloc_buffer((1,), "float32")
                    t[0] = A[vi] * 2.0
                    B[vi] = t[0]
        """)
    (regions,) = block_regions(f)
    assert sorted(regions.reads) == ["A"] and sorted(regions.writes) == ["B"]


def test_an_outer_block_covers_its_inner_blocks():
    text = """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
            for i in T.serial(4):
                with T.block("row"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[vi, REGION])
                    T.writes(B[vi, 0:4])
                    for j in T.serial(4):
                        with T.block("B"):
                            vj = T.axis.spatial(4, j)
                            B[vi, vj] = A[vi, vj]
        """
    roundtrip(text.replace("REGION", "0:4"))
    err = parse_error(text.replace("REGION", "1:4"))
    assert err.message == ("block 'row' reads A[0, 0] (at i = 0), which its T.reads does "
                           "not declare: it declares A[vi, 1:4]")
    assert (err.lineno, err.col) == (7, 13)


@pytest.mark.parametrize("body, line, col, message", [
    ("T.reads(A[vi])\n                    T.reads(A[vi])", 8, 13,
     "block 'B' has a second T.reads"),
    ("for j in T.serial(1):\n                        T.reads(A[vi])", 8, 17,
     "T.reads must stand directly in the body of a with T.block(...) statement"),
    ("T.reads(A[0:4:2])", 7, 27, "a region slice takes no step"),
    ("T.reads(A[vi, 0])", 7, 21, "buffer A has 1 dimension but the region has 2"),
    ("T.reads(vi)", 7, 21, "T.reads takes buffer regions such as A[vi, 0:16]"),
    ("T.writes(A[vi], x=1)", 7, 29, "T.writes takes buffer regions, not keywords"),
])
def test_malformed_declarations(body, line, col, message):
    text = f"""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    {body}
                    A[vi] = 0.0
        """
    err = parse_error(text)
    assert (err.lineno, err.col, err.message) == (line, col, message)


# ------------------------------------------------------------ T.match_buffer of a region

VIEW = """
@T.prim_func
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4:vi * 4 + 4])
            T.writes(B[vi, 0:4])
            Asub = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))
            Brow = T.match_buffer(B[vi, 0:4], (4,), "float32", offset_factor=1)
            for x in T.serial(4):
                Brow[x] = Asub[x] * 2.0
"""

VIEW_LOWERED = """
@T.prim_func
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = i
            for x in T.serial(4):
                B[vi, x] = A[vi * 4 + x] * 2.0
"""


def test_match_buffer_of_a_region_is_an_offset_view():
    f = roundtrip(VIEW)
    assert script(without_regions(f)) == script(parse(textwrap.dedent(VIEW_LOWERED)))
    assert "T.reads(A[vi * 4:vi * 4 + 4])" in script(f)
    (store,) = [s for s in walk(f.body) if isinstance(s, n.BufferStore)]
    assert store.buffer is f.params[1]
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_allclose(out[1], (args[0] * 2.0).reshape(4, 4))
    (regions,) = block_regions(f)
    for i in range(4):
        assert all(regions.reads["A"].contains((4 * i + x,), {"i": i}) for x in range(4))
        assert not regions.reads["A"].contains((4 * i + 4,), {"i": i})


def test_a_view_access_outside_the_declared_region_is_caught():
    err = parse_error(VIEW.replace("Asub[x] * 2.0", "Asub[x + 1] * 2.0"))
    assert err.message == ("block 'B' reads A[4] (at i = 0), which its T.reads does not "
                           "declare: it declares A[vi * 4:vi * 4 + 4]")


def test_regions_may_be_declared_through_a_view_and_wider_than_used():
    text = VIEW.replace("T.reads(A[vi * 4:vi * 4 + 4])", "T.reads(A[0:16])")
    text = text.replace("            T.writes(B[vi, 0:4])\n", "")
    text = text.replace("for x in T.serial(4):",
                        "T.writes(Brow[0:4])\n            for x in T.serial(4):")
    f = roundtrip(text)
    assert script(without_regions(f)) == script(without_regions(roundtrip(VIEW)))
    assert "T.reads(A[0:16])" in script(f) and "T.writes(B[vi, 0:4])" in script(f)
    err = parse_error(text.replace("T.writes(Brow[0:4])", "T.writes(Brow[1:4])"))
    assert err.message == ("block 'B' writes B[0, 0] (at i = 0), which its T.writes does not "
                           "declare: it declares Brow[1:4]")


@pytest.mark.parametrize("line, col, message, old, new", [
    (10, 53, "T.match_buffer of a float32 region as int32: the dtypes must be the same",
     "(4,), \"float32\", offset_factor=1", "(4,), \"int32\""),
    (10, 20, "T.match_buffer matches a 2-dimensional region with a 3-dimensional buffer",
     "(4,), \"float32\", offset_factor=1", "(1, 1, 4)"),
    (10, 35, "T.match_buffer region B[vi, 0:4] has extent 1 on axis 0, where the buffer "
            "shape needs 2", "(4,), \"float32\", offset_factor=1", "(2, 4)"),
    (10, 13, "the buffer name 'Asub' is already in use here", "Brow = ", "Asub = "),
    (12, 27, "buffer 'Asub' is used as a value; index it, as in Asub[i]",
     "Asub[x] * 2.0", "Asub"),
    (10, 35, "T.match_buffer takes buffer regions such as A[vi, 0:16]",
     "T.match_buffer(B[vi, 0:4]", "T.match_buffer(vi"),
    (10, 35, "T.match_buffer inside a block matches a buffer region, such as "
             "A[vi * 4:vi * 4 + 4]", "T.match_buffer(B[vi, 0:4]", "T.match_buffer(1.0"),
])
def test_match_buffer_region_errors(line, col, message, old, new):
    text = VIEW.replace(old, new, 1) if old != "Brow = " else VIEW.replace(
        "Brow = T.match_buffer", "Asub = T.match_buffer")
    err = parse_error(text)
    assert (err.lineno, err.col, err.message) == (line, col, message)


def test_a_slice_as_a_value_is_refused():
    err = parse_error("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = A[0:2]
        """)
    assert err.message.startswith("a slice is not supported as a value")


STENCIL = """
@T.prim_func
def stencil(A: T.Buffer((12,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(vi < LIMIT)
            T.reads(A[vi + LO:vi + HI])
            T.writes(B[vi])
            B[vi] = SUM
"""


@pytest.mark.parametrize("limit", [3, 8])
@pytest.mark.parametrize("lo, hi", [(0, 1), (0, 3), (1, 3), (2, 4), (0, 4)])
@pytest.mark.parametrize("offsets", [(0,), (1, 2), (0, 3), (2,)])
def test_the_check_agrees_with_brute_force(limit, lo, hi, offsets):
    """Refused exactly when some running instance reads outside its declared slice."""
    text = (STENCIL.replace("LIMIT", str(limit)).replace("LO", str(lo))
            .replace("HI", str(hi)).replace("SUM", " + ".join(f"A[vi + {d}]" for d in offsets)))
    bad = [(i, i + d) for i in range(limit) for d in offsets if not lo <= d < hi]
    if not bad:
        roundtrip(text)
        return
    i, element = min(bad)
    err = parse_error(text)
    assert err.message.startswith(f"block 'B' reads A[{element}] (at i = {i}), ")
