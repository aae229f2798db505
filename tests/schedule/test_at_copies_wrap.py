"""The loops that ``compute_at``, ``reverse_compute_at`` and ``cache_read``/``cache_write``
with ``at=`` put at a loop add no integer wrap-around, and count ``T.assume``.

The copy of a cache at a loop was converted from isl's AST with no check at all:
over ``for i in T.serial(n // 2)`` split by 4, the copy's guard
``ax0 % 2 + n >= 8 * i_0 + ax0 + 2`` wraps at ``n = 127`` (int8) and the copy left
most of the cache unfilled.  Its bounds and guards now go through
:mod:`polypad.schedule.exact_bounds`, as the producers of ``compute_at`` did: the
plain form where isl shows that it cannot wrap where the loops run -- with the
assumptions before the loop -- else the form computed in int64.  ``reorder_by_map``
refused a band whose counters left int32 only where a ``T.assume`` fails, and a
narrow (int8) band whose counters left int8 (now counted in int16, cast back).

Each rewrite is run against the original for every int8 extent on the reference
executor and Numba; the int32 forms are compared by script, with and without the
assumption.
"""

from __future__ import annotations

import pytest
from scalar_runs_support import assert_runs_the_same

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

INT8 = [(v,) for v in range(-128, 128)]

# C reads two elements of B per iteration: the cache's copy has a guard.
HALF8 = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), C: T.Buffer((64,), "int32")):
    B = T.alloc_buffer((128,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for i in T.serial(n // T.int8(2)):
        with T.block("C"):
            C[i] = B[i * T.int8(2)] + B[i * T.int8(2) + T.int8(1)]
'''


def _split(sch: Schedule, block: str, factor: int):
    return sch.split(sch.get_loops(block)[0], [None, factor])


def _applied(text: str, apply) -> tuple:
    func = parse(text)
    sch = Schedule(func)
    apply(sch)
    verify(sch.func)
    return func, sch.func


@pytest.mark.parametrize("factor", [3, 4])
@pytest.mark.parametrize("primitive", ["cache_read", "cache_write", "compute_at",
                                       "reverse_compute_at"])
def test_every_int8_extent_runs_as_the_original(primitive, factor):
    def apply(sch):
        if primitive == "reverse_compute_at":
            outer, _ = _split(sch, "B", factor)
            sch.reverse_compute_at("C", outer)
            return
        outer, _ = _split(sch, "C", factor)
        if primitive == "compute_at":
            sch.compute_at("B", outer)
        elif primitive == "cache_read":
            sch.cache_read("C", "B", "local", at=outer)
        else:
            sch.cache_write("C", "C", "local", at=outer)

    func, out = _applied(HALF8, apply)
    assert_runs_the_same(func, out, INT8)


# The cache's corner T.max(4 * io - 2, 0) wrapped to 254 at io = 0 in uint8: the copy
# loaded B[254].
STENCIL_U8 = '''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
    B = T.alloc_buffer((16,), "int32")
    for i in T.serial(T.uint8(16)):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for io in T.serial(T.uint8(4)):
        for ii in T.serial(T.uint8(4)):
            with T.block("C"):
                C[io * T.uint8(4) + ii] = (
                    B[io * T.uint8(4) + ii]
                    + B[T.max(io * T.uint8(4) + ii, T.uint8(2)) - T.uint8(2)])
'''


def test_a_cache_corner_that_wraps_in_uint8_is_computed_wider():
    func, out = _applied(STENCIL_U8, lambda s: s.cache_read("C", "B", "local", at="io"))
    corner = 'T.Cast("uint8", T.max(4 * T.Cast("int64", io) - 2, 0))'
    copies = [x for x in walk(out.body) if isinstance(x, n.BufferStore)
              and x.buffer.name == "B_local"]
    assert {script(x.value.indices[0]) for x in copies} == {f"{corner} + ax0"}
    assert_runs_the_same(func, out)


# ---------------------------------------------------------------- int32, by script

HALF32 = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((128,), "int32"), C: T.Buffer((64,), "int32")):
    {head}B = T.alloc_buffer((128,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for i in T.serial(n // 2):
        with T.block("C"):
            C[i] = B[i * 2] + B[i * 2 + 1]
'''

ASSUME = "T.assume(0 <= n and n <= 128)\n    "
WIDE_N = 'T.Cast("int64", n)'


@pytest.mark.parametrize("head, guard", [
    (ASSUME, "ax0 % 2 + n >= 8 * i_0 + ax0 + 2"),
    ("", f'ax0 % 2 < 2 and ax0 % 2 >= 0 and {WIDE_N} >= 8 * T.Cast("int64", i_0) '
         '+ 2 * (T.Cast("int64", ax0) // 2) + 2'),
], ids=["assumed", "unbounded"])
def test_cache_read_copy_is_plain_under_the_assumption_and_exact_without(head, guard):
    func, out = _applied(HALF32.format(head=head), lambda s: s.cache_read(
        "C", "B", "local", at=_split(s, "C", 4)[0]))
    assert_structural_equal(out, parse(f'''
@T.prim_func
def f(n: T.int32, A: T.Buffer((128,), "int32"), C: T.Buffer((64,), "int32")):
    {head}B = T.alloc_buffer((128,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for i_0 in T.serial((n // 2 + 3) // 4):
        B_local = T.alloc_buffer((8,), "int32", scope="local")
        with T.block("B_local"):
            for ax0 in T.serial(T.min(7, n - 8 * i_0 - 1) + 1):
                if {guard}:
                    B_local[ax0] = B[8 * i_0 + ax0]
        for i_1 in T.serial(4):
            if i_0 * 4 + i_1 < n // 2:
                with T.block("C"):
                    C[i_0 * 4 + i_1] = B_local[2 * i_1] + B_local[2 * i_1 + 1]
'''))


# Loops from m to n: the copy's start 4 * i_0 + m may wrap unless the assumption bounds m.
SPAN32 = '''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((1024,), "float32"),
      C: T.Buffer((1024,), "float32")):
    {head}B = T.alloc_buffer((1024,), "float32")
    for i in T.serial(m, n):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
    for i in T.serial(m, n):
        with T.block("C"):
            C[i] = B[i] + T.float32(1)
'''
SPAN_ASSUME = "T.assume(0 <= m and m <= n and n <= 1024)\n    "


def _wide(e: str) -> str:
    return f'T.Cast("int64", {e})'


PLAIN_COPY = '''for i in T.serial(4 * i_0 + m, 4 * i_0 + m + T.min(n - 4 * i_0 - m, 4)):'''
WIDE_START = f'T.Cast("int32", 4 * {_wide("i_0")} + {_wide("m")})'
WIDE_COPY = (f'for i in T.serial({WIDE_START}, {WIDE_START} + T.Cast("int32", '
             f'T.min({_wide("n")} - 4 * {_wide("i_0")} - {_wide("m")}, 4))):')


@pytest.mark.parametrize("head, split, copy", [
    (SPAN_ASSUME, ("(n - m + 3) // 4", "i_0 * 4 + i_1 < n - m"), PLAIN_COPY),
    ("", ("(n - m) // 4 + ((n - m) % 4 + 3) // 4", "i_1 < n - m - i_0 * 4"), WIDE_COPY),
], ids=["assumed", "unbounded"])
def test_compute_at_copy_is_plain_under_the_assumption_and_exact_without(head, split, copy):
    func, out = _applied(SPAN32.format(head=head), lambda s: s.compute_at(
        "B", _split(s, "C", 4)[0]))
    extent, guard = split
    assert_structural_equal(out, parse(f'''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((1024,), "float32"),
      C: T.Buffer((1024,), "float32")):
    {head}B = T.alloc_buffer((1024,), "float32")
    for i_0 in T.serial({extent}):
        with T.block("B"):
            {copy}
                B[i] = A[i] * T.float32(2)
        for i_1 in T.serial(4):
            if {guard}:
                with T.block("C"):
                    C[i_0 * 4 + i_1 + m] = B[i_0 * 4 + i_1 + m] + T.float32(1)
'''))


@pytest.mark.parametrize("head, split, copy", [
    (SPAN_ASSUME, ("(n - m + 3) // 4", "i_0 * 4 + i_1 < n - m"), PLAIN_COPY),
    ("", ("(n - m) // 4 + ((n - m) % 4 + 3) // 4", "i_1 < n - m - i_0 * 4"), WIDE_COPY),
], ids=["assumed", "unbounded"])
def test_reverse_compute_at_copy_is_plain_under_the_assumption_and_exact_without(
        head, split, copy):
    func, out = _applied(SPAN32.format(head=head), lambda s: s.reverse_compute_at(
        "C", _split(s, "B", 4)[0]))
    extent, guard = split
    assert_structural_equal(out, parse(f'''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((1024,), "float32"),
      C: T.Buffer((1024,), "float32")):
    {head}B = T.alloc_buffer((1024,), "float32")
    for i_0 in T.serial({extent}):
        for i_1 in T.serial(4):
            if {guard}:
                with T.block("B"):
                    B[i_0 * 4 + i_1 + m] = A[i_0 * 4 + i_1 + m] * T.float32(2)
        with T.block("C"):
            {copy}
                C[i] = B[i] + T.float32(1)
'''))


# ---------------------------------------------------------------- reorder_by_map

SHIFTED = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "int32")):
    {head}for i in T.serial(n, n + 2):
        A[(i - n) % 8] = A[(i - n) % 8] + 1
'''


def test_reorder_by_map_counts_the_assumption_when_the_new_counters_leave_int32():
    # -i leaves int32 at i = -2**31, which T.assume(0 <= n) rules out.
    with pytest.raises(IllegalTransformError, match="would count to 2147483648"):
        Schedule(parse(SHIFTED.format(head=""))).reorder_by_map(None, "{ S0[i] -> [-i] }")
    func, out = _applied(SHIFTED.format(head="T.assume(0 <= n and n <= 100)\n    "),
                         lambda s: s.reorder_by_map(None, "{ S1[i] -> [-i] }"))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "int32")):
    T.assume(0 <= n and n <= 100)
    for b0 in T.serial(-1 * n - 1, -1 * n - 1 + 2):
        A[-1 * b0 - n] = A[-1 * b0 - n] + 1
'''))
    assert_runs_the_same(func, out, [(0,), (5,), (100,)])


# A narrow band whose new counters leave their dtype counts wider (at most int32, the
# default counter dtype), the old counters cast back: -i reaches 128 at i = -128.
SHIFTED8 = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((8,), "int32")):
    for i in T.serial(n, n + T.int8(2)):
        A[(i - n) % T.int8(8)] = A[(i - n) % T.int8(8)] + T.Cast("int32", i)
'''


def test_a_narrow_band_that_leaves_its_dtype_counts_in_a_wider_one():
    func, out = _applied(SHIFTED8, lambda s: s.reorder_by_map(None, "{ S0[i] -> [-i] }"))
    assert_structural_equal(parse(script(out)), out)
    start = 'T.Cast("int16", -1 * T.Cast("int64", n) - 1)'
    assert_structural_equal(out, parse(f'''
@T.prim_func
def f(n: T.int8, A: T.Buffer((8,), "int32")):
    for b0 in T.serial({start}, {start} + T.int16(2)):
        A[-1 * b0 - T.Cast("int16", n)] = (A[-1 * b0 - T.Cast("int16", n)]
                                           + T.Cast("int32", T.Cast("int8", -b0)))
'''))
    # Every n where the original's counter stays in int8 (n + 1 <= 127).
    assert_runs_the_same(func, out, [(v,) for v in range(-128, 127)])


def test_a_narrow_band_past_int32_is_still_refused():
    with pytest.raises(IllegalTransformError, match="of its int32 counter"):
        Schedule(parse(SHIFTED8)).reorder_by_map(None, "{ S0[i] -> [1073741824 * i] }")
