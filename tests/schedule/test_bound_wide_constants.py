"""Loop bounds whose isl form needs a constant wider than their variables.

isl writes the bounds of the loops it rebuilds with whatever constants they need:
tiling an int8 loop by 200 gives ``(n + 99) // 200 + 1``, whose 200 no int8
holds.  The reader could not write that form in int8, and the loop kept the
form isl's AST had, unchecked: ``T.Cast("int32", n + 99) // 200 + 1``, whose
int8 ``n + 99`` wraps for ``n >= 29`` -- the loop then ran no iteration where
the original ran ``n``.  Now such a bound is written over int64 copies of its
variables, exact, and cast back where its value fits the counter's dtype
(:func:`polypad.schedule.exact_bounds.bound`: checked, or refused, never left
as isl's AST wrote it).
"""

from __future__ import annotations

import islpy as isl
import pytest
from scalar_runs_support import assert_runs_the_same
from test_loop_dtypes import scheduled

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.model.affine import AffineSpace
from polypad.model.overflow import within_dtypes, wraps_somewhere
from polypad.schedule.exact_bounds import bound
from polypad.script import parse

COUNT8 = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((1,), "int32")):
    with T.block("b"):
        for i in T.serial(n):
            A[0] = A[0] + 1
'''


def test_an_int8_loop_tiled_by_200_runs_every_iteration():
    func, out = scheduled(COUNT8, lambda s: s.reorder_by_map(
        "b", "{ b[i] -> [floor((i + 100)/200), (i + 100) mod 200] }", ("io", "ii")))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int8, A: T.Buffer((1,), "int32")):
    with T.block("b"):
        if n >= 1:
            for io in T.serial(T.Cast("int16", (T.Cast("int64", n) + 99) // 200 + 1)):
                for ii in T.serial(T.int16(200)):
                    if 200 * T.Cast("int64", io) + T.Cast("int64", ii) >= 100 and T.Cast("int64", n) >= 200 * T.Cast("int64", io) + T.Cast("int64", ii) - 99:
                        A[0] = A[0] + 1
'''))  # noqa: E501
    # A[0] counts the iterations: n of them, also where n + 99 leaves int8.
    assert_runs_the_same(func, out, [(size,) for size in (-128, 0, 1, 28, 29, 100, 127)])


def test_an_int32_loop_tiled_past_int32_is_bounded_in_int64():
    func, out = scheduled('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((100,), "int32")):
    with T.block("b"):
        for i in T.serial(n):
            A[i % 100] = A[i % 100] + 1
''', lambda s: s.reorder_by_map(
        "b", "{ b[i] -> [floor(i/3000000000), i mod 3000000000] }", ("io", "ii")))
    # isl's AST form was T.Cast("int64", n - 1) // 3000000000 + 1, whose n - 1 wraps
    # at n = -2**31 to a loop of one iteration over 2**31 inner ones.
    assert_structural_equal(out, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((100,), "int32")):
    with T.block("b"):
        for io in T.serial(T.Cast("int32", (T.Cast("int64", n) - 1) // 3000000000 + 1)):
            for ii in T.serial(T.Cast("int32", T.min(T.Cast("int64", n), 3000000000))):
                if T.Cast("int64", n) >= 3000000000 * T.Cast("int64", io) + T.Cast("int64", ii) + 1:
                    A[ii % 100] = A[ii % 100] + 1
'''))  # noqa: E501
    assert_runs_the_same(func, out, [(size,) for size in (-2**31, -1, 0, 1, 250)])


def test_bound_never_keeps_an_unchecked_form():
    # The bound the int8 tiling gave, as isl's AST wrote it: exact_bounds.bound used to
    # raise NotAffineError for it (isl's form has a 200 no int8 holds), and the loop kept
    # it; now it comes back exact for every int8 n.
    size = n.Var("n", "int8")
    space = AffineSpace(())
    ast_form = n.Add(n.FloorDiv(n.Cast("int32", n.Add(size, n.IntImm(99, "int8"))),
                                n.IntImm(200, "int32")), n.IntImm(1, "int32"))
    where = isl.Set("[n] -> { [] : n >= 1 }")
    runs = within_dtypes(where, space)
    assert wraps_somewhere(ast_form, space, runs)
    got = bound(ast_form, [], space.names, space, where)
    assert not wraps_somewhere(got, space, runs)
    wide = n.Add(n.FloorDiv(n.Add(n.Cast("int64", size), n.IntImm(99, "int64")),
                            n.IntImm(200, "int64")), n.IntImm(1, "int64"))
    assert_structural_equal(got, n.Cast("int8", wide))


def _minus_three_quarters_of_int64(size: n.Var) -> n.Expr:
    """``n - 2**62 - 2**62 - 2**62``: isl's form, ``n - 3 * 2**62``, has a constant no
    int64 holds, so isl cannot write this bound in any dtype."""
    e = size
    for _ in range(3):
        e = n.Sub(e, n.IntImm(2**62, "int64"))
    return e


def test_a_bound_isl_cannot_write_is_kept_only_where_it_cannot_wrap():
    size = n.Var("n", "int64")
    space = AffineSpace(())
    e = _minus_three_quarters_of_int64(size)
    # Where n >= 2**63 - 2**61 no step of it leaves int64: it is the exact value.
    high = isl.Set(f"[n] -> {{ [] : n >= {2**63 - 2**61} }}")
    assert bound(e, [], space.names, space, high) is e


def test_a_bound_isl_cannot_write_that_may_wrap_is_refused_with_the_parameters():
    size = n.Var("n", "int64")
    space = AffineSpace(())
    e = _minus_three_quarters_of_int64(size)
    anywhere = isl.Set("[n] -> { [] : n >= 0 }")
    with pytest.raises(IllegalTransformError) as info:
        bound(e, [], space.names, space, anywhere)
    err = info.value
    value = err.params["n"]
    assert value >= 0 and value - 3 * 2**62 < -2**63  # where the int64 steps wrap
    assert err.evidence.params == err.params
    assert "outside the range [-9223372036854775808, 9223372036854775807] of its int64" \
        in str(err)


def test_compute_at_under_an_int8_loop_bounds_the_producer_exactly():
    # The producer's bounds under the int8 io are 200 * io ...: isl's form has a 200 no
    # int8 holds, and location_ast kept isl's AST form unchecked (here it happened not
    # to wrap); now it is the checked form over int64, cast back to the int32 counter.
    func, out = scheduled('''
@T.prim_func
def f(A: T.Buffer((400,), "int32"), C: T.Buffer((400,), "int32")):
    B = T.alloc_buffer((400,), "int32")
    for i in T.serial(400):
        with T.block("B"):
            B[i] = A[i] * 2
    for io in T.serial(T.int8(2)):
        for ii in T.serial(200):
            with T.block("C"):
                C[T.Cast("int32", io) * 200 + ii] = B[T.Cast("int32", io) * 200 + ii] + 1
''', lambda s: s.compute_at("B", "io"))
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((400,), "int32"), C: T.Buffer((400,), "int32")):
    B = T.alloc_buffer((400,), "int32")
    for io in T.serial(T.int8(2)):
        with T.block("B"):
            for i in T.serial(T.Cast("int32", 200 * T.Cast("int64", io)), T.Cast("int32", 200 * T.Cast("int64", io)) + 200):
                B[i] = A[i] * 2
        for ii in T.serial(200):
            with T.block("C"):
                C[T.Cast("int32", io) * 200 + ii] = B[T.Cast("int32", io) * 200 + ii] + 1
'''))  # noqa: E501
    assert_runs_the_same(func, out)
