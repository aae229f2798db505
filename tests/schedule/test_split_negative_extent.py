"""``split``, ``tile`` and ``fuse`` of loops whose symbolic extents may be zero or negative.

A loop ``for j in T.serial(n)`` runs nothing for ``n <= 0``; its split must
run nothing either.  The floor remainder ``n % 8`` is positive for a negative
``n`` (``-3 % 8 == 5``), so a partition's tail takes ``T.max(n, 0) % 8`` unless
isl proves ``n >= 0`` where the loop stands.  Each rewrite is checked against
the script it should print, read back from its own script, and run against the
original for ``n`` from -20 to 20 on the reference executor and Numba.  Likewise
the product of two negative extents is positive: ``fuse`` takes ``T.max(e, 0)``
of each extent isl does not prove ``>= 0`` when two or more may be negative.  The
extents here are bounded by nothing but int32, so the split writes the forms that
cannot wrap, and the fuse counts in int64 (test_split_fuse_wrap.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

SIZES = range(-20, 21)

# j is offset by 32 so that a tail that runs for a negative n writes inside B.
BLOCK = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((4, 64), "int32")):
    for i, j in T.grid(4, n):
        with T.block("c"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj + 32] = A[vj + 32] + vi
'''

PLAIN = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for j in T.serial(n):
        B[j + 32] = A[j + 32] * 2
'''

# The extra iterations of a pad write B's padding, which nothing reads.
PADDED = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    T.assume(n <= 20)
    B = T.alloc_buffer((64,), "int32")
    for j in T.serial(n):
        B[j + 32] = A[j + 32] * 2
    for k in T.serial(n):
        C[k + 32] = B[k + 32] + 1
'''


def _arrays(func: n.PrimFunc, size: int) -> list:
    rng = np.random.default_rng(size + 100)
    return [rng.integers(-9, 9, p.shape).astype(p.dtype) if isinstance(p, n.Buffer) else size
            for p in func.params]


def assert_runs_the_same(original: n.PrimFunc, rewritten: n.PrimFunc) -> None:
    """For every ``n`` in SIZES, ``rewritten`` on the reference executor and Numba leaves
    the buffers as ``original`` does on both."""
    kernels = [codegen.build(f, target=t) for f in (original, rewritten)
               for t in ("python", "numba")]
    for size in SIZES:
        results = []
        for kernel in kernels:
            args = _arrays(original, size)
            kernel(*args)
            results.append([a for a in args if isinstance(a, np.ndarray)])
        for got in results[1:]:
            for w, g in zip(results[0], got, strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"n = {size}")


def assert_reads_back(func: n.PrimFunc) -> None:
    assert_structural_equal(parse(script(func)), func)


def test_partition_tail_is_empty_for_a_negative_extent():
    sch = Schedule(parse(PLAIN))
    assert sch.split("j", [None, 8], tail="partition") == ["j_0", "j_1"]
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for j_0, j_1 in T.grid(n // 8, 8):
        B[j_0 * 8 + j_1 + 32] = A[j_0 * 8 + j_1 + 32] * 2
    for j_1_tail in T.serial(T.max(n, 0) % 8):
        B[j_1_tail + n // 8 * 8 + 32] = A[j_1_tail + n // 8 * 8 + 32] * 2
'''))
    verify(sch.func)
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(PLAIN), sch.func)


def test_partition_in_blocks_reads_back_and_runs_the_same():
    # Before the fix the tail ran for n < 0 and its script did not parse back: the
    # parser found vj bound outside [0, n) (n = -2147483647, vj = -2147483648).
    sch = Schedule(parse(BLOCK))
    sch.split("j", [None, 8], tail="partition")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((4, 64), "int32")):
    for i in T.serial(4):
        for j_0, j_1 in T.grid(n // 8, 8):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_0 * 8 + j_1)
                B[vi, vj + 32] = A[vj + 32] + vi
        for j_1_tail in T.serial(T.max(n, 0) % 8):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_1_tail + n // 8 * 8)
                B[vi, vj + 32] = A[vj + 32] + vi
'''))
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(BLOCK), sch.func)


def test_partition_in_three_levels_runs_no_tail_for_a_negative_extent():
    sch = Schedule(parse(BLOCK))
    sch.split("j", [None, 2, 4], tail="partition")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((4, 64), "int32")):
    for i in T.serial(4):
        for j_0, j_1, j_2 in T.grid(n // 8, 2, 4):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_0 * 8 + j_1 * 4 + j_2)
                B[vi, vj + 32] = A[vj + 32] + vi
        for j_1_tail, j_2_tail in T.grid(T.max(n, 0) % 8 // 4, 4):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_1_tail * 4 + j_2_tail + n // 8 * 8)
                B[vi, vj + 32] = A[vj + 32] + vi
        for j_2_tail in T.serial(T.max(n, 0) % 8 % 4):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_2_tail + (n // 8 * 8 + T.max(n, 0) % 8 // 4 * 4))
                B[vi, vj + 32] = A[vj + 32] + vi
'''))
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(BLOCK), sch.func)


@pytest.mark.parametrize("shape, where, extent", [
    ("64", "    T.assume(0 <= n)\n    for j in T.serial(n):\n", "n"),
    ("64", "    for m in T.serial(n):\n        for j in T.serial(m):\n", "m"),
    ("n", "    for j in T.serial(n):\n", "n"),  # the caller's array gives n
])
def test_partition_keeps_the_plain_remainder_where_isl_proves_the_extent_nonnegative(
        shape, where, extent):
    text = (f'@T.prim_func\ndef f(n: T.int32, B: T.Buffer(({shape},), "int32")):\n' + where
            + " " * (4 + 4 * where.count("for")) + "B[j] = B[j] + 1\n")
    sch = Schedule(parse(text))
    sch.split("j", [None, 8], tail="partition")
    tail = next(x for x in _loops(sch.func) if x.var.name == "j_1_tail")
    assert script(tail.extent) == f"{extent} % 8"


def test_predicate_runs_nothing_for_a_negative_extent():
    sch = Schedule(parse(BLOCK))
    sch.split("j", [None, 8], tail="predicate")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((4, 64), "int32")):
    for i in T.serial(4):
        for j_0, j_1 in T.grid(n // 8 + (n % 8 + 7) // 8, 8):
            if j_1 < n - j_0 * 8:
                with T.block("c"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.spatial(n, j_0 * 8 + j_1)
                    B[vi, vj + 32] = A[vj + 32] + vi
'''))
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(BLOCK), sch.func)


def test_pad_runs_nothing_for_a_negative_extent():
    sch = Schedule(parse(PADDED))
    sch.split("j", [None, 8], tail="pad")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    T.assume(n <= 20)
    B = T.alloc_buffer((64,), "int32")
    for j_0, j_1 in T.grid((n + 7) // 8, 8):
        B[j_0 * 8 + j_1 + 32] = A[j_0 * 8 + j_1 + 32] * 2
    for k in T.serial(n):
        C[k + 32] = B[k + 32] + 1
'''))
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(PADDED), sch.func)


def test_tile_of_two_symbolic_extents_runs_nothing_for_a_negative_one():
    text = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64, 64), "int32")):
    for i, j in T.grid(n, n + 3):
        B[i + 32, j + 32] = A[j + 32] + i
'''
    sch = Schedule(parse(text))
    sch.tile(["i", "j"], [2, 8])
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "int32"), B: T.Buffer((64, 64), "int32")):
    for i_0, j_0, i_1, j_1 in T.grid(n // 2 + (n % 2 + 1) // 2,
                                     (n + 3) // 8 + ((n + 3) % 8 + 7) // 8, 2, 8):
        if i_1 < n - i_0 * 2:
            if j_1 < n + 3 - j_0 * 8:
                B[i_0 * 2 + i_1 + 32, j_0 * 8 + j_1 + 32] = A[j_0 * 8 + j_1 + 32] + (
                    i_0 * 2 + i_1)
'''))
    assert_reads_back(sch.func)
    assert_runs_the_same(parse(text), sch.func)


FUSE = '''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((64, 64), "int32")):
    for i, j in T.grid(n, m):
        A[i + 32, j + 32] = i * 3 + j
'''


def test_fuse_of_two_extents_that_may_be_negative_runs_nothing_for_them():
    sch = Schedule(parse(FUSE))
    sch.fuse("i", "j")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((64, 64), "int32")):
    for i_j_fused in T.serial(T.Cast("int64", T.max(n, 0)) * T.Cast("int64", T.max(m, 0))):
        A[T.Cast("int32", i_j_fused // T.Cast("int64", m)) + 32,
          T.Cast("int32", i_j_fused % T.Cast("int64", m)) + 32] = (
            T.Cast("int32", i_j_fused // T.Cast("int64", m)) * 3
            + T.Cast("int32", i_j_fused % T.Cast("int64", m)))
'''))
    assert_reads_back(sch.func)
    kernels = [codegen.build(f, target=t) for f in (parse(FUSE), sch.func)
               for t in ("python", "numba")]
    for size in [(-2, -3), (-1, -1), (-3, 0), (0, -3), (-2, 3), (2, -3), (0, 0), (3, 5)]:
        results = []
        for kernel in kernels:
            a = np.arange(64 * 64, dtype="int32").reshape(64, 64)
            kernel(*size, a)
            results.append(a)
        for got in results[1:]:
            np.testing.assert_array_equal(got, results[0], err_msg=f"n, m = {size}")


@pytest.mark.parametrize("head, extent", [
    ("    for i, j in T.grid(n, 4):\n", 'T.Cast("int64", n) * 4'),
    ("    T.assume(0 <= m)\n    for i, j in T.grid(n, m):\n",
     'T.Cast("int64", n) * T.Cast("int64", m)'),
    ("    T.assume(-1024 <= n and n <= 1024 and 0 <= m and m <= 1024)\n"
     "    for i, j in T.grid(n, m):\n", "n * m"),
])
def test_fuse_keeps_the_plain_product_with_at_most_one_extent_that_may_be_negative(
        head, extent):
    # Without bounds the product may leave int32: it is counted in int64
    # (test_split_fuse_wrap.py), still without T.max.
    text = ('@T.prim_func\ndef f(n: T.int32, m: T.int32, A: T.Buffer((64, 64), "int32")):\n'
            + head + "        A[i, j] = 1\n")
    sch = Schedule(parse(text))
    sch.fuse("i", "j")
    assert script(_loops(sch.func)[0].extent) == extent


def _loops(func: n.PrimFunc) -> list[n.For]:
    return [x for x in walk(func.body) if isinstance(x, n.For)]
