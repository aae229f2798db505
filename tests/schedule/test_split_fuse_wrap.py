"""``split``, ``tile`` and ``fuse`` add no integer wrap-around the original did not have.

A split by 8 of ``for i in T.serial(n)`` used to run ``(n + 7) // 8`` outer
iterations, which wraps to a negative count for ``n > 2**31 - 8`` (int32): the
split loop ran nothing where the original ran ``n`` iterations.  Its guard
``i_0 * 8 + i_1 < n`` wraps there too.  A fuse of extents ``n`` and ``m`` ran
``n * m`` iterations, computed in int32.  Now the plain forms are kept only where
isl shows they cannot wrap (constant extents, extents the assumptions bound); else
the split writes ``n // 8 + (n % 8 + 7) // 8`` and ``i_1 < n - i_0 * 8``, and the
fuse counts in int64.

int8 makes every case cheap to run: each rewrite is run against the original for
every int8 extent (or a window at each end of the range) on the reference executor
and Numba.  The int32 forms are checked by script, and their expressions evaluated
on both executors at the ends of the int32 range.
"""

from __future__ import annotations

import numpy as np
import pytest
from scalar_runs_support import assert_runs_the_same as runs_the_same
from scalar_runs_support import kernels

import codegen
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

INT8 = range(-128, 128)
# Both ends of the int8 range, and around zero, where the plain forms go wrong.
WINDOW8 = [*range(-128, -124), *range(-2, 3), *range(28, 35), *range(119, 128)]

SPLIT8 = '''
@T.prim_func
def f(n: T.int8, B: T.Buffer((128,), "int32")):
    for i in T.serial(n):
        B[i] = B[i] * 3 + 1
'''

# The pad form's extra iterations write C's tail, which nothing reads.
PAD8 = '''
@T.prim_func
def f(n: T.int8, B: T.Buffer((128,), "int32")):
    C = T.alloc_buffer((136,), "int32")
    for i in T.serial(n):
        C[T.Cast("int32", i)] = B[i] * 3 + 1
    for k in T.serial(n):
        B[k] = C[T.Cast("int32", k)]
'''

FUSE8 = '''
@T.prim_func
def f(n: T.int8, m: T.int8, B: T.Buffer((128, 128), "int32")):
    for i, j in T.grid(n, m):
        B[i, j] = B[i, j] * 3 + 1
'''

FUSE8_CONST = '''
@T.prim_func
def f(n: T.int8, B: T.Buffer((128, 4), "int32")):
    for i, j in T.grid(n, T.int8(4)):
        B[i, j] = B[i, j] * 3 + i
'''

def _counting(func: n.PrimFunc) -> list[np.ndarray]:
    """Each buffer holding 0, 1, 2, ... as int32: every element tells where it came from."""
    return [np.arange(int(np.prod(p.shape)), dtype="int32").reshape(p.shape)
            for p in func.params if isinstance(p, n.Buffer)]


def assert_runs_the_same(original: n.PrimFunc, rewritten: n.PrimFunc, values) -> None:
    runs_the_same(original, rewritten, values, inputs=_counting)


def _loops(func: n.PrimFunc) -> list[n.For]:
    return [x for x in walk(func.body) if isinstance(x, n.For)]


def _checked(func: n.PrimFunc) -> n.PrimFunc:
    verify(func)
    assert_structural_equal(parse(script(func)), func)
    return func


# ---------------------------------------------------------------- split


@pytest.mark.parametrize("tail", ["predicate", "partition"])
@pytest.mark.parametrize("factors", [[None, 8], [None, 3], [None, 2, 4]])
def test_split_of_every_int8_extent_runs_as_the_original(tail, factors):
    sch = Schedule(parse(SPLIT8))
    sch.split("i", factors, tail=tail)
    assert_runs_the_same(parse(SPLIT8), _checked(sch.func), [(v,) for v in INT8])


def test_split_of_an_int8_extent_writes_the_forms_that_cannot_wrap():
    sch = Schedule(parse(SPLIT8))
    sch.split("i", [None, 8])
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int8, B: T.Buffer((128,), "int32")):
    for i_0, i_1 in T.grid(n // T.int8(8) + (n % T.int8(8) + T.int8(7)) // T.int8(8), T.int8(8)):
        if i_1 < n - i_0 * T.int8(8):
            B[i_0 * T.int8(8) + i_1] = B[i_0 * T.int8(8) + i_1] * 3 + 1
'''))


def test_pad_of_every_int8_extent_runs_as_the_original():
    sch = Schedule(parse(PAD8))
    sch.split("i", [None, 8], tail="pad")
    outer = _loops(sch.func)[0]
    assert script(outer.extent) == script(parse(SPLIT8.replace(
        "T.serial(n)", "T.serial(n // T.int8(8) + (n % T.int8(8) + T.int8(7)) // T.int8(8))"
    )).body.extent)
    assert_runs_the_same(parse(PAD8), _checked(sch.func), [(v,) for v in INT8])


def test_tile_of_int8_extents_runs_as_the_original():
    sch = Schedule(parse(FUSE8))
    sch.tile(["i", "j"], [4, 8])
    values = [(a, b) for a in (-128, -1, 0, 5, 121, 127) for b in (-128, 0, 3, 125, 127)]
    assert_runs_the_same(parse(FUSE8), _checked(sch.func), values)


SPLIT32 = '''
@T.prim_func
def f(n: T.int32, B: T.Buffer((64,), "int32")):
    {head}for j in T.serial(n):
        B[j % 64] = B[j % 64] + 1
'''


def test_split_of_an_unbounded_int32_extent_has_no_wrapping_sum():
    sch = Schedule(parse(SPLIT32.format(head="")))
    sch.split("j", [None, 8])
    assert_structural_equal(_checked(sch.func), parse('''
@T.prim_func
def f(n: T.int32, B: T.Buffer((64,), "int32")):
    for j_0, j_1 in T.grid(n // 8 + (n % 8 + 7) // 8, 8):
        if j_1 < n - j_0 * 8:
            B[(j_0 * 8 + j_1) % 64] = B[(j_0 * 8 + j_1) % 64] + 1
'''))


@pytest.mark.parametrize("head, plain", [
    ("T.assume(n <= 2147483640)\n    ", True),   # n + 7 fits
    ("T.assume(n <= 2147483641)\n    ", False),  # n + 7 may wrap
    ("T.assume(0 <= n)\n    ", False),
])
def test_split_keeps_the_plain_forms_where_isl_proves_the_sum_fits(head, plain):
    sch = Schedule(parse(SPLIT32.format(head=head)))
    sch.split("j", [None, 8])
    outer = _loops(sch.func)[0]
    guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
    if plain:
        assert (script(outer.extent), script(guard.condition)) == (
            "(n + 7) // 8", "j_0 * 8 + j_1 < n")
    else:
        assert (script(outer.extent), script(guard.condition)) == (
            "n // 8 + (n % 8 + 7) // 8", "j_1 < n - j_0 * 8")


def test_split_of_a_constant_extent_keeps_the_plain_guard_unless_it_wraps():
    text = '''
@T.prim_func
def f(B: T.Buffer((64,), "int32")):
    for j in T.serial({extent}):
        B[j % 64] = B[j % 64] + 1
'''
    conditions = []
    for extent, factor in ((2147483647, 8), (2147483647, 7), (2147483640, 7)):
        sch = Schedule(parse(text.format(extent=extent)))
        sch.split("j", [None, factor])
        guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
        conditions.append(script(guard.condition))
    # 7 * ceil(2147483647 / 7) - 1 = 2147483652 leaves int32; 8 * 2**28 - 1 does not.
    assert conditions == ["j_0 * 8 + j_1 < 2147483647", "j_1 < 2147483647 - j_0 * 7",
                          "j_0 * 7 + j_1 < 2147483640"]


def _evaluate(expr: n.Expr, args: dict[str, int]) -> list[int]:
    """``expr`` (over the int32 or int64 variables named in ``args``) evaluated on both
    executors: a function that stores it into a one-element buffer."""
    names = {v.name: v for v in walk(expr) if isinstance(v, n.Var)}
    params = ", ".join(f"{k}: T.{names[k].dtype}" for k in args)
    text = (f'@T.prim_func\ndef g({params}, out: T.Buffer((1,), "{expr.dtype}")):\n'
            f"    out[0] = {script(expr)}\n")
    values = []
    for target in ("python", "numba"):
        out = np.zeros(1, dtype=expr.dtype)
        codegen.build(parse(text), target=target)(*args.values(), out)
        values.append(int(out[0]))
    return values


LIMIT = 2**31 - 1


@pytest.mark.parametrize("value", [LIMIT, LIMIT - 1, LIMIT - 6, LIMIT - 7, LIMIT - 8,
                                   -LIMIT - 1, -LIMIT, -9, -1, 0, 1, 8, 9])
def test_the_int32_outer_extent_and_guard_are_exact_at_the_ends_of_the_range(value):
    sch = Schedule(parse(SPLIT32.format(head="")))
    sch.split("j", [None, 8])
    outer = _loops(sch.func)[0]
    guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
    count = -(-value // 8)
    assert _evaluate(outer.extent, {"n": value}) == [count] * 2
    if count > 0:
        # The last outer iteration runs exactly the remaining inner ones.
        ran = [_evaluate(n.Cast("int32", guard.condition), {"n": value, "j_0": count - 1,
                                                             "j_1": j})[0] for j in range(8)]
        assert sum(ran) == value - 8 * (count - 1)


# ---------------------------------------------------------------- fuse


def test_fuse_of_every_pair_of_int8_extents_runs_as_the_original():
    sch = Schedule(parse(FUSE8))
    sch.fuse("i", "j")
    fused = _loops(sch.func)[0]
    assert fused.var.dtype == "int64"
    sizes = (-128, -127, -2, -1, 0, 1, 3, 100, 127)
    assert_runs_the_same(parse(FUSE8), _checked(sch.func), [(a, b) for a in sizes for b in sizes])


def test_fuse_of_an_int8_extent_and_a_constant_runs_as_the_original():
    sch = Schedule(parse(FUSE8_CONST))
    sch.fuse("i", "j")
    assert_structural_equal(_checked(sch.func), parse('''
@T.prim_func
def f(n: T.int8, B: T.Buffer((128, 4), "int32")):
    for i_j_fused in T.serial(T.Cast("int64", n) * T.int64(4)):
        B[T.Cast("int8", i_j_fused // T.int64(4)), T.Cast("int8", i_j_fused % T.int64(4))] = (
            B[T.Cast("int8", i_j_fused // T.int64(4)), T.Cast("int8", i_j_fused % T.int64(4))]
            * 3 + T.Cast("int32", T.Cast("int8", i_j_fused // T.int64(4))))
'''))
    assert_runs_the_same(parse(FUSE8_CONST), sch.func, [(v,) for v in WINDOW8])


FUSE32 = '''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((64, 64), "int32")):
    {head}for i, j in T.grid(n, m):
        A[i % 64, j % 64] = i * 3 + j
'''


def test_fuse_of_two_unbounded_int32_extents_counts_in_int64():
    sch = Schedule(parse(FUSE32.format(head="")))
    sch.fuse("i", "j")
    assert_structural_equal(_checked(sch.func), parse('''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((64, 64), "int32")):
    for i_j_fused in T.serial(T.Cast("int64", T.max(n, 0)) * T.Cast("int64", T.max(m, 0))):
        A[T.Cast("int32", i_j_fused // T.Cast("int64", m)) % 64,
          T.Cast("int32", i_j_fused % T.Cast("int64", m)) % 64] = (
            T.Cast("int32", i_j_fused // T.Cast("int64", m)) * 3
            + T.Cast("int32", i_j_fused % T.Cast("int64", m)))
'''))
    fused = _loops(sch.func)[0]
    for a, b in [(65536, 65536), (LIMIT, LIMIT), (LIMIT, 2), (-LIMIT - 1, -2),
                 (-2**30 - 1, 3), (3, -2**30 - 1), (0, LIMIT)]:
        want = max(a, 0) * max(b, 0)
        assert _evaluate(fused.extent, {"n": a, "m": b}) == [want] * 2, (a, b)


@pytest.mark.parametrize("head, extent", [
    ("T.assume(0 <= n and n <= 46340 and 0 <= m and m <= 46340)\n    ", "n * m"),
    ("T.assume(n <= 46340 and m <= 46340)\n    ", "T.max(n, 0) * T.max(m, 0)"),
    ("T.assume(-46340 <= n and n <= 46340 and 0 <= m and m <= 46340)\n    ", "n * m"),
])
def test_fuse_keeps_the_int32_product_where_the_assumptions_bound_it(head, extent):
    sch = Schedule(parse(FUSE32.format(head=head)))
    sch.fuse("i", "j")
    fused = _loops(sch.func)[0]
    assert (fused.var.dtype, script(fused.extent)) == ("int32", extent)


def test_fuse_counts_in_int64_where_the_assumptions_leave_room_to_wrap():
    sch = Schedule(parse(FUSE32.format(head="T.assume(0 <= n and n <= 46341 and 0 <= m "
                                               "and m <= 46341)\n    ")))
    sch.fuse("i", "j")
    assert _loops(sch.func)[0].var.dtype == "int64"


def test_fuse_refuses_a_product_no_counter_holds():
    text = '''
@T.prim_func
def f(n: T.int32, m: T.int32, k: T.int32, A: T.Buffer((4,), "int32")):
    for i, j, l in T.grid(n, m, k):
        A[0] = A[0] + 1
'''
    sch = Schedule(parse(text))
    with pytest.raises(IllegalTransformError, match="more than an int64 counter holds"):
        sch.fuse("i", "j", "l")
    sch.fuse("i", "j")  # two of them fit int64
    assert _loops(sch.func)[0].var.dtype == "int64"


def test_fuse_of_two_unbounded_int64_extents_is_refused_unless_assumed():
    text = '''
@T.prim_func
def f(n: T.int64, m: T.int64, A: T.Buffer((4,), "int32")):
    {head}for i, j in T.grid(n, m):
        A[0] = A[0] + 1
'''
    with pytest.raises(IllegalTransformError, match=r"would run up to "
                       r"85070591730234615847396907784232501249 iterations "
                       r"\(T.max\(n, 0\) \* T.max\(m, 0\)\), more than an int64"):
        Schedule(parse(text.format(head=""))).fuse("i", "j")
    sch = Schedule(parse(text.format(head="T.assume(n <= 2147483648 and m <= 2147483648)\n    ")))
    sch.fuse("i", "j")
    assert _loops(sch.func)[0].var.dtype == "int64"


# ---------------------------------------------------------------- reorder_by_map


def test_a_regenerated_guard_is_exact_on_the_whole_box_of_its_loops():
    # The loops run over their whole box: at n = 2**31 - 1 the last io is 715827882, and
    # 3 * io + 2 < n, computed in int32, wraps to -2**31 < n and would let the
    # instance i = 2**31 through, which the original never runs.
    sch = Schedule(parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((128,), "int32")):
    with T.block("compute"):
        for i in T.serial(n):
            A[i % 128] = A[i % 128] + 1
'''))
    sch.reorder_by_map("compute", "{ compute[i] -> [floor(i/3), i mod 3] }", ("io", "ii"))
    guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
    assert script(guard.condition) == (
        'T.Cast("int64", n) >= 3 * T.Cast("int64", io) + T.Cast("int64", ii) + 1')
    _checked(sch.func)
    # ISL's (n - 1) // 3 + 1 iterations of io wraps at n = -2**31 to 715827883: run in
    # int64 it is -715827882, and the loop runs nothing, as the original.
    outer = _loops(sch.func)[0]
    assert script(outer.extent) == 'T.Cast("int32", (T.Cast("int64", n) - 1) // 3 + 1)'
    for value in (-LIMIT - 1, -LIMIT, -1, 0, 1, 3, 4, LIMIT - 1, LIMIT):
        assert _evaluate(outer.extent, {"n": value}) == [(value - 1) // 3 + 1] * 2
    last = (LIMIT - 1) // 3
    for value, io, ii in [(LIMIT, last, 0), (LIMIT, last, 1), (LIMIT, last, 2),
                          (LIMIT - 1, last, 2), (7, 2, 0), (7, 2, 1)]:
        runs = 0 <= 3 * io + ii < value
        assert _evaluate(n.Cast("int32", guard.condition),
                         {"n": value, "io": io, "ii": ii}) == [int(runs)] * 2, (value, io, ii)


def test_a_regenerated_guard_that_cannot_wrap_keeps_its_reader_form():
    sch = Schedule(parse('''
@T.prim_func
def f(A: T.Buffer((1000,), "int32")):
    with T.block("compute"):
        for i in T.serial(1000):
            A[i] = A[i] + 1
'''))
    sch.reorder_by_map("compute", "{ compute[i] -> [floor(i/3), i mod 3] }", ("io", "ii"))
    guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
    assert script(guard.condition) == "3 * io + ii < 1000"


def test_a_regenerated_bound_the_assumptions_keep_in_range_keeps_its_reader_form():
    text = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8, 4), "int32"), B: T.Buffer((32,), "int32")):
    T.assume({assumption})
    for i in T.serial(n):
        A[i // 4, i % 4] = B[i] + i
'''
    extents = []
    for assumption in ("0 <= n and n <= 32", "n <= 32"):
        sch = Schedule(parse(text.format(assumption=assumption)))
        sch.sequential_buffer_access(None, "A")
        extents.append(script(_checked(sch.func).body.stmts[1].extent))
    # n <= 32 leaves n = -2**31, where n - 1 wraps.
    assert extents == ["(n - 1) // 4 + 1", 'T.Cast("int32", (T.Cast("int64", n) - 1) // 4 + 1)']


def test_a_split_of_an_int64_fused_loop_keeps_the_plain_forms_and_runs_as_the_original():
    # T.Cast("int64", n) * 16 + 7 is far from the end of int64 for every int32 n.
    text = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n, 16), "float32"), B: T.Buffer((n, 16), "float32")):
    for i, j in T.grid(n, 16):
        B[i, j] = A[i, j] * T.float32(2)
'''
    sch = Schedule(parse(text))
    outer, inner = sch.split(sch.fuse("i", "j"), [None, 8])
    sch.parallel(outer)
    sch.vectorize(inner)
    loop = _loops(_checked(sch.func))[0]
    guard = next(x for x in walk(sch.func.body) if isinstance(x, n.IfThenElse))
    assert (script(loop.extent), script(guard.condition)) == (
        '(T.Cast("int64", n) * 16 + 7) // 8',
        'i_j_fused_0 * 8 + i_j_fused_1 < T.Cast("int64", n) * 16')
    built = kernels(parse(text), ("python",)) + kernels(sch.func)
    for size in (0, 1, 3, 7):
        rng = np.random.default_rng(size)
        a = rng.random((size, 16)).astype("float32")
        results = []
        for kernel in built:
            b = np.zeros((size, 16), "float32")
            kernel(size, a, b)
            results.append(b)
        for got in results[1:]:
            np.testing.assert_array_equal(got, results[0])


# ---------------------------------------------------------------- merge_adjacent_loops


def test_a_merge_whose_shift_leaves_int32_rebases_without_it():
    # The second loop's counter is the first's shifted by 2**32 - 648, which no int32
    # constant holds: it is written as i - (-2**31) + 2147483000, every step in range.
    text = '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(-2147483648, -2147483640):
        A[i % 8] = i % 5
    for j in T.serial(2147483000, 2147483008):
        B[j % 8] = j % 7
'''
    sch = Schedule(parse(text))
    sch.merge_adjacent_loops("i", "j")
    assert_structural_equal(_checked(sch.func), parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.serial(-2147483648, -2147483640):
        A[i % 8] = i % 5
        B[(i - -2147483648 + 2147483000) % 8] = (i - -2147483648 + 2147483000) % 7
'''))
    assert_runs_the_same(parse(text), sch.func, [()])
