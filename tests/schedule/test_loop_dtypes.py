"""Loops of any integer dtype survive the primitives that rebuild loops through isl.

isl builds loops over mathematical integers; the conversion back to IR used to
give every constant int32, whatever the counters' dtype, and the band of
``reorder_by_map`` always counted in int32.  Over int8 or int64 loops (TVM prints
``T.int64`` loops for large shapes) the result was ill-formed
(``T.min(n, T.int32(4))``, ``T.max(4 * io - 2, T.int32(0))``, an index map's
``j // T.int32(4)``), or refused (a symbolic int64 extent "would count past its
int32 counter").  Now constants take the dtype of the variables they meet, a
loop's bounds its counter's, and the band counts in the dtype of the counters it
replaces.

Each rewrite is checked against the script it should print, verified, and run
against the original on the reference executor and Numba.  One sweep runs
``reorder_by_map`` of an int8 extent for every int8 value.
"""

from __future__ import annotations

import pytest
from scalar_runs_support import assert_runs_the_same

from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse


def scheduled(text: str, apply) -> tuple[n.PrimFunc, n.PrimFunc]:
    """The function of ``text`` and what ``apply(schedule)`` makes of it, verified and
    replayed from its trace."""
    func = parse(text)
    sch = Schedule(func)
    apply(sch)
    verify(sch.func)
    assert_structural_equal(sch.trace.apply_to(func).func, sch.func)
    return func, sch.func


def loop_dtypes(func: n.PrimFunc) -> dict[str, str]:
    return {x.var.name: x.var.dtype for x in walk(func.body) if isinstance(x, n.For)}


# ---------------------------------------------------------------- int64, by script

REORDER64 = '''
@T.prim_func
def f(n: T.int64, A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    T.assume(0 <= n and n <= 14)
    with T.block("b"):
        for i in T.serial(n):
            B[i // T.int64(4), i % T.int64(4)] = A[i] * 2
'''


def test_reorder_by_map_of_an_int64_loop_counts_in_int64():
    # It used to be refused: the int32 band "would count to 2147483648" at n = 2**33.
    func, out = scheduled(REORDER64, lambda s: s.reorder_by_map(
        "b", "{ b[i] -> [floor(i/4), i mod 4] }", ("io", "ii")))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    T.assume(0 <= n and n <= 14)
    with T.block("b"):
        for io in T.serial((n - T.int64(1)) // T.int64(4) + T.int64(1)):
            for ii in T.serial(T.min(n, T.int64(4))):
                if T.int64(4) * io + ii < n:
                    B[io, ii] = A[T.int64(4) * io + ii] * 2
'''))
    assert_runs_the_same(func, out, [(size,) for size in (0, 1, 5, 8, 14)])


def test_reorder_by_map_of_constant_int64_loops_keeps_int64_counters():
    func, out = scheduled('''
@T.prim_func
def f(A: T.Buffer((3, 5), "float32"), B: T.Buffer((5, 3), "float32")):
    with T.block("t"):
        for i, j in T.grid(T.int64(3), T.int64(5)):
            B[j, i] = A[i, j]
''', lambda s: s.reorder_by_map("t", "{ t[i, j] -> [j] }", ("jj",)))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((3, 5), "float32"), B: T.Buffer((5, 3), "float32")):
    with T.block("t"):
        for jj in T.serial(T.int64(5)):
            for i in T.serial(T.int64(3)):
                B[jj, i] = A[i, jj]
'''))
    assert_runs_the_same(func, out)


STENCIL64 = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
    for i in T.serial(T.int64(18)):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
    for io, ii in T.grid(T.int64(4), T.int64(4)):
        with T.block("C"):
            C[io * T.int64(4) + ii] = B[io * T.int64(4) + ii] + B[io * T.int64(4) + ii + T.int64(2)]
'''


def test_compute_at_over_int64_loops_bounds_the_copy_in_int64():
    # The producer's loop had an int32 extent under its int64 counter.
    func, out = scheduled(STENCIL64, lambda s: s.compute_at("B", "io"))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
    for io in T.serial(T.int64(4)):
        with T.block("B"):
            for i in T.serial(T.int64(4) * io, T.int64(4) * io + T.int64(6)):
                B[i] = A[i] * T.float32(2)
        for ii in T.serial(T.int64(4)):
            with T.block("C"):
                C[io * T.int64(4) + ii] = (B[io * T.int64(4) + ii]
                                           + B[io * T.int64(4) + ii + T.int64(2)])
'''))
    assert_runs_the_same(func, out)


def test_reverse_compute_at_over_int64_loops_clamps_in_int64():
    # ISL's T.max(4 * io - 2, 0) came back with an int32 0: ill-formed.
    func, out = scheduled('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io, ii in T.grid(T.int64(4), T.int64(4)):
        with T.block("B"):
            B[io * T.int64(4) + ii] = A[io * T.int64(4) + ii] * T.float32(2)
    for i in T.serial(T.int64(14)):
        with T.block("C"):
            C[i] = B[i] + B[i + T.int64(2)]
''', lambda s: s.reverse_compute_at("C", "io"))
    low = "T.max(T.int64(4) * io - T.int64(2), T.int64(0))"
    assert_structural_equal(out, parse(f'''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io in T.serial(T.int64(4)):
        for ii in T.serial(T.int64(4)):
            with T.block("B"):
                B[io * T.int64(4) + ii] = A[io * T.int64(4) + ii] * T.float32(2)
        with T.block("C"):
            for i in T.serial({low}, {low} + T.if_then_else(io == T.int64(0), T.int64(2),
                                                              T.int64(4))):
                C[i] = B[i] + B[i + T.int64(2)]
'''))
    assert_runs_the_same(func, out)


def test_cache_read_at_an_int64_loop_copies_with_int64_counters():
    func, out = scheduled('''
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    for io, ii in T.grid(T.int64(2), T.int64(4)):
        with T.block("C"):
            C[io * T.int64(4) + ii] = A[io * T.int64(4) + ii] + A[io * T.int64(4) + ii + T.int64(1)]
''', lambda s: s.cache_read("C", "A", "local", at="io"))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    for io in T.serial(T.int64(2)):
        A_local = T.alloc_buffer((5,), "float32", scope="local")
        with T.block("A_local"):
            for ax0 in T.serial(T.int64(5)):
                A_local[ax0] = A[T.int64(4) * io + ax0]
        for ii in T.serial(T.int64(4)):
            with T.block("C"):
                C[io * T.int64(4) + ii] = A_local[ii] + A_local[ii + T.int64(1)]
'''))
    assert_runs_the_same(func, out)


def test_transform_layout_of_int64_indices_maps_them_in_int64():
    # The map was traced over int32 variables: B[i, j // T.int32(4), j % T.int32(4)].
    func, out = scheduled('''
@T.prim_func
def f(A: T.Buffer((12, 10), "float32"), C: T.Buffer((12, 10), "float32")):
    B = T.alloc_buffer((12, 10), "float32")
    for i, j in T.grid(T.int64(12), T.int64(10)):
        with T.block("b"):
            B[i, j] = A[i, j] * T.float32(2)
    for i, j in T.grid(T.int64(12), T.int64(10)):
        with T.block("c"):
            C[i, j] = B[i, j] + T.float32(1)
''', lambda s: s.transform_layout("b", "B", lambda i, j: [i, j // 4, j % 4], pad_value=0.0))
    stores = [x for x in walk(out.body) if isinstance(x, n.BufferStore) and x.buffer.name == "B"]
    assert [tuple(i.dtype for i in x.indices) for x in stores] == [
        ("int64", "int64", "int64"), ("int32", "int32", "int32")]  # the store, the padding
    assert_runs_the_same(func, out)


def test_fuse_of_a_symbolic_int64_extent_clamps_it_at_zero():
    # It used to be refused: n * 10 may leave int64 at n near -2**63.
    func, out = scheduled('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((12, 10), "float32"), B: T.Buffer((12, 10), "float32")):
    T.assume(n <= 12)
    for i, j in T.grid(n, T.int64(10)):
        B[i, j] = A[i, j] * T.float32(2)
''', lambda s: s.fuse("i", "j"))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((12, 10), "float32"), B: T.Buffer((12, 10), "float32")):
    T.assume(n <= 12)
    for i_j_fused in T.serial(T.max(n, T.int64(0)) * T.int64(10)):
        B[i_j_fused // T.int64(10), i_j_fused % T.int64(10)] = (
            A[i_j_fused // T.int64(10), i_j_fused % T.int64(10)] * T.float32(2))
'''))
    assert_runs_the_same(func, out, [(size,) for size in (-3, 0, 7, 12)])


# ---------------------------------------------------------------- every dtype, by running

# Each: the function (over loops of dtype D), the primitive, the scalar arguments.
SURVEY = {
    "reorder_by_map": ('''
@T.prim_func
def f(n: T.D, A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    T.assume(n <= T.D(14))
    with T.block("b"):
        for i in T.serial(n):
            B[i // T.D(4), i % T.D(4)] = A[i] * 2
''', lambda s: s.reorder_by_map("b", "{ b[i] -> [floor(i/4), i mod 4] }", ("io", "ii")),
        [(0,), (1,), (6,), (14,)]),
    "sequential_buffer_access": ('''
@T.prim_func
def f(n: T.D, A: T.Buffer((8, 4), "int32"), B: T.Buffer((32,), "int32")):
    T.assume(n <= T.D(32))
    for i in T.serial(n):
        A[i // T.D(4), i % T.D(4)] = B[i] + T.Cast("int32", i)
''', lambda s: s.sequential_buffer_access(None, "A"), [(0,), (1,), (6,), (32,)]),
    "reverse_compute_at": ('''
@T.prim_func
def f(n: T.D, A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    T.assume(T.D(1) <= n and n <= T.D(4))
    B = T.alloc_buffer((16,), "float32")
    for io in T.serial(n):
        for ii in T.serial(T.D(4)):
            with T.block("B"):
                B[T.D(4) * io + ii] = A[T.D(4) * io + ii] * T.float32(2)
    for i in T.serial(n * T.D(4) - T.D(2)):
        with T.block("C"):
            C[i] = B[i] + B[i + T.D(2)]
''', lambda s: s.reverse_compute_at("C", "io"), [(1,), (3,), (4,)]),
    "compute_at": ('''
@T.prim_func
def f(n: T.D, A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    T.assume(n <= T.D(4))
    B = T.alloc_buffer((18,), "float32")
    for i in T.serial(n * T.D(4) + T.D(2)):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
    for io in T.serial(n):
        for ii in T.serial(T.D(4)):
            with T.block("C"):
                C[T.D(4) * io + ii] = B[T.D(4) * io + ii] + B[T.D(4) * io + ii + T.D(2)]
''', lambda s: s.compute_at("B", "io"), [(0,), (1,), (4,)]),
    "cache_write_at": ('''
@T.prim_func
def f(n: T.D, A: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    T.assume(n <= T.D(2))
    for io in T.serial(n):
        for ii in T.serial(T.D(4)):
            with T.block("C"):
                C[T.D(4) * io + ii] = A[T.D(4) * io + ii] + A[T.D(4) * io + ii + T.D(1)]
''', lambda s: s.cache_write("C", "C", "local", at="io"), [(0,), (2,)]),
    "transform_layout": ('''
@T.prim_func
def f(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
    B = T.alloc_buffer((6, 10), "float32")
    for i, j in T.grid(T.D(6), T.D(10)):
        with T.block("b"):
            B[i, j] = A[i, j] * T.float32(2)
    for i, j in T.grid(T.D(6), T.D(10)):
        with T.block("c"):
            C[i, j] = B[i, j] + T.float32(1)
''', lambda s: (s.transform_layout("b", "B", lambda i, j: [i, j // 4, j % 4], pad_value=0.0),
                s.sequential_buffer_access("b", "B")), [()]),
}


@pytest.mark.parametrize("dtype", ["int8", "int16", "int64", "uint8"])
@pytest.mark.parametrize("name", list(SURVEY))
def test_every_integer_dtype_gives_well_formed_ir_that_runs_as_the_original(name, dtype):
    text, apply, values = SURVEY[name]
    func, out = scheduled(text.replace("T.D", f"T.{dtype}"), apply)
    assert set(loop_dtypes(out).values()) <= {dtype, "int32"}  # int32: padding stages
    assert_runs_the_same(func, out, values)


# ---------------------------------------------------------------- every int8 extent

SWEEP8 = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), B: T.Buffer((32, 4), "int32")):
    for i in T.serial(n):
        B[i // T.int8(4), i % T.int8(4)] = A[i] * 3 + 1
'''


def test_reorder_by_map_of_every_int8_extent_runs_as_the_original():
    # n - 1 wraps at n = -128 (to 127: 32 iterations of io where the original ran
    # none), and 4 * io + ii < n at the last io: bounds and guard are computed wider
    # where ISL shows int8 may wrap, and cast back where the value fits.
    func, out = scheduled(SWEEP8, lambda s: s.reorder_by_map(
        None, "{ S0[i] -> [floor(i/4), i mod 4] }", ("io", "ii")))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), B: T.Buffer((32, 4), "int32")):
    for io in T.serial(T.Cast("int8", (T.Cast("int64", n) - T.int64(1)) // T.int64(4)
                                      + T.int64(1))):
        for ii in T.serial(T.min(n, T.int8(4))):
            if T.int8(4) * io + ii < n:
                B[io, ii] = A[T.int8(4) * io + ii] * 3 + 1
'''))
    assert_runs_the_same(func, out, [(size,) for size in range(-128, 128)])


def test_a_bound_that_may_leave_a_narrow_counter_stays_in_int64():
    # Without the assumption io may reach 254, where 4 * io - 2 leaves uint8: in uint8
    # T.max(4 * io - 2, 0) wrapped to 254 at io = 0 and the loop ran C[254].
    text = SURVEY["reverse_compute_at"][0].replace(
        "T.assume(T.D(1) <= n and n <= T.D(4))", "T.assume(T.D(1) <= n)")
    func, out = scheduled(text.replace("T.D", "T.uint8"),
                          lambda s: s.reverse_compute_at("C", "io"))
    (loop,) = [x for x in walk(out.body) if isinstance(x, n.For) and x.var.name == "i"]
    assert loop.var.dtype == "uint8"
    assert loop.min.dtype == "int64"
    assert show(loop.min) == 'T.max(4 * T.Cast("int64", io) - 2, 0)'
    assert_runs_the_same(func, out, [(1,), (3,), (4,)])


def test_a_band_inside_int64_loops_counts_in_their_dtype():
    # The block's own statement has no loops: the band maps the enclosing int64
    # counters, and used to count in int32 ("would count to 2147483648").
    func, out = scheduled('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((16, 8), "float32"), C: T.Buffer((4, 8, 4), "float32")):
    T.assume(n <= T.int64(16))
    for i, j in T.grid(n, T.int64(8)):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i // T.int64(4), v_j, v_i % T.int64(4)] = A[v_i, v_j] * T.float32(2)
''', lambda s: s.sequential_buffer_access("B", "C"))
    assert set(loop_dtypes(out).values()) == {"int64"}
    assert_runs_the_same(func, out, [(0,), (5,), (16,)])


def test_a_parallel_uint8_loop_of_128_iterations_runs_every_one_under_numba():
    # numba.prange(np.uint8(128)) runs no iteration: the kernel counts in int64.
    func, out = scheduled('''
@T.prim_func
def f(n: T.uint8, A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.assume(n <= T.uint8(16))
    for i, j in T.grid(n, T.uint8(8)):
        C[i, j] = A[i, j] * T.float32(2)
''', lambda s: s.parallel(s.fuse("i", "j")))
    assert loop_dtypes(out) == {"i_j_fused": "uint8"}
    assert_runs_the_same(func, out, [(1,), (15,), (16,)])
