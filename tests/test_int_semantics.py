"""Fixed-width integers: one meaning (numpy's wrap-around) in both executors, the
prover and every pass that reasons about integers."""

import islpy as isl
import numpy as np
import pytest

import analyses
import codegen
import polypad as pp
from analyses import Proved, Refuted, Unknown
from polypad.errors import DTypeError, ParseError, VerifyError
from polypad.ir import nodes as n
from polypad.ir.verify import verify
from polypad.model.ranges import value_range, wrap, wrapping_operations
from polypad.transform import remove_no_op, simplify

WRAPPING = pp.parse('''
@T.prim_func
def wrapping(A: T.Buffer((6,), "int32"), B: T.Buffer((6,), "int32"),
             C: T.Buffer((6,), "int8"), D: T.Buffer((6,), "int16")):
    for i in T.serial(6):
        B[i] = A[i] * 65536 // 65536
        if i + 2147483647 < 0:
            A[i] = 1
        C[i] = C[i] + C[i] * 3
        D[i] = T.int16(A[i]) - D[i] % 7
''')


def run(kernel, a, c, d):
    a, c, d = a.copy(), c.copy(), d.copy()
    b = np.zeros(6, np.int32)
    kernel(a, b, c, d)
    return a, b, c, d


def expected(a, c, d):
    """The same program in numpy's own fixed-width arithmetic."""
    with np.errstate(over="ignore"):
        b = a * np.int32(65536) // np.int32(65536)
        a2 = a.copy()
        idx = np.arange(6, dtype=np.int32)
        a2[(idx + np.int32(2147483647)) < 0] = 1
        c2 = c + c * np.int8(3)
        d2 = a2.astype(np.int16) - d % np.int16(7)
    return a2, b, c2, d2


@pytest.mark.parametrize("target", ["python", "numba"])
def test_both_executors_wrap_like_numpy(target):
    rng = np.random.default_rng(7)
    a = np.array([70000, -70000, 5, 2**31 - 1, -2**31, 123456789], np.int32)
    c = rng.integers(-128, 128, 6).astype(np.int8)
    d = rng.integers(-2**15, 2**15, 6).astype(np.int16)
    got = run(codegen.build(WRAPPING, target=target), a, c, d)
    for g, e in zip(got, expected(a, c, d)):
        np.testing.assert_array_equal(g, e)
    assert got[1][0] == 4464 and list(got[0][1:]) == [1] * 5


def test_numba_source_wraps_only_what_may_overflow():
    source = codegen.build(WRAPPING).source
    assert "np.int32(A[i] * 65536) // 65536" in source
    assert "np.int32(i + 2147483647) < 0" in source
    assert "np.int8(C[i] + np.int8(C[i] * np.int8(3)))" in source
    # i ranges over 0..5: index arithmetic needs no wrap.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((24,), "float32")):
    for i, j in T.grid(6, 4):
        A[4 * i + j] = 1.0
''')
    assert "A[4 * i + j] = " in codegen.build(f).source


def test_wrapping_store_is_not_a_no_op():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[i] = A[i] * 65536 // 65536
''')
    decided = analyses.is_no_op(f, f.body.body)
    assert isinstance(decided, Refuted)
    values = decided.counterexample.values
    (stored,) = [v for k, v in values.items() if k.startswith("stored")]
    (held,) = [v for k, v in values.items() if k.startswith("A[")]
    assert wrap(held * 65536, "int32") // 65536 == stored != held
    pp.assert_structural_equal(remove_no_op(f), f)


def test_no_op_under_a_range_assumption_may_go():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        T.assume(A[i] < 1000 and A[i] > -1000)
    for i in T.serial(4):
        A[i] = A[i] * 2 // 2
''')
    assert isinstance(analyses.is_no_op(f, f.body.stmts[1].body), Proved)
    pp.assert_structural_equal(remove_no_op(f), pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        T.assume(A[i] < 1000 and A[i] > -1000)
'''))


def test_wrapping_guard_is_kept_by_every_pass():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        if i + 2147483647 < 0:
            A[i] = 1
''')
    for p in (simplify, remove_no_op):
        pp.assert_structural_equal(p(f), f)
    a = np.zeros(4, np.int32)
    codegen.build(remove_no_op(f), target="python")(a)
    assert list(a) == [0, 1, 1, 1]


@pytest.mark.parametrize("n_value", [2, 3])
def test_simplify_keeps_an_index_whose_let_wrapped(n_value):
    # Fuzz case 1713 (seed 0): x1's value wraps for n >= 2, so ISL's exact
    # reading of the index (4 - n) is not the executed one.
    f = pp.parse('''
@T.prim_func
def f(B: T.Buffer((4, 4), "int32"), n: T.int32):
    T.assume(2 <= n and n < 4)
    x1 = (1073741824 * n + 3) // 4
    B[3, ((n + 2 * x1) // 3) % 4] = B[2, 3]
''')
    g = simplify(f)
    pp.assert_structural_equal(g, f)
    for target in ("python", "numba"):
        want = np.arange(16, dtype=np.int32).reshape(4, 4)
        got = want.copy()
        codegen.build(f, target="python")(want, n_value)
        codegen.build(g, target=target)(got, n_value)
        np.testing.assert_array_equal(got, want)
        assert want[3, 3 if n_value == 2 else 2] == 11


def test_simplify_keeps_an_index_isl_would_write_with_a_wide_constant():
    # Fuzz case 3929 (seed 0): ISL's form of the index has the coefficient
    # 1073741824 * 2, which int32 cannot hold; simplify keeps the index.
    f = pp.parse('''
@T.prim_func
def f(B: T.Buffer((4, 4), "int32"), n: T.int32):
    T.assume(1 <= n and n < 3)
    x1 = n + -3
    B[(-1 * n + 1073741824 * x1 + 2) % 4, 2] = 7
''')
    pp.assert_structural_equal(simplify(f), f)


def test_pw_aff_to_expr_refuses_a_constant_its_dtype_cannot_hold():
    import islpy as isl

    from polypad.errors import NotAffineError
    from polypad.model import pw_aff_to_expr

    n_var = n.Var("n", "int32")
    with pytest.raises(NotAffineError, match="2147483648"):
        pw_aff_to_expr(isl.PwAff("[n] -> { [(2147483648 * n)] }"), [], [n_var])


def test_rebuilt_loops_keep_a_let_whose_value_wraps():
    # Fuzz case 3714 (seed 0): regenerating the nest must not turn the
    # (unused) let into a form with an int32-overflowing constant.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    T.assume(1 <= n and n < 4)
    for i3 in T.serial(0, 2):
        for i4 in T.serial(n):
            x5 = 1073741824 * n + i3 + -3
            A[2 * i3 + x5 - x5] = 2
''')
    sch = pp.Schedule(f)
    sch.sequential_buffer_access(None, "A")
    for n_value in (1, 3):
        want, got = np.zeros(8, np.int32), np.zeros(8, np.int32)
        codegen.build(f, target="python")(want, n_value)
        codegen.build(sch.func, target="python")(got, n_value)
        np.testing.assert_array_equal(got, want)


def test_a_store_whose_index_wraps_may_write_any_element():
    # Fuzz case 9321 (seed 0): for n = 3 the index wraps to 3, not the exact 1,
    # so the store overwrites A[3] and the assumption about A[3] no longer holds.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), C: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(3 <= n and n < 5)
    for p in T.serial(8):
        T.assume(p < 2 or A[p] == 1)
    for i1 in T.serial(n):
        A[((1073741824 * n + 3) // 3) % 8] = 3 * n + -1 * i1 + 3
    C[1] = T.if_then_else(A[3] * 1073741824 >= 0, 1, 0)
''')
    store = f.body.stmts[-1]
    got = analyses.prove(store.value.condition, analyses.context_at(f, store))
    assert not isinstance(got, Proved)
    a, c = np.ones(8, np.int32), np.zeros(4, np.int32)
    codegen.build(f, target="python")(a, c, 3)
    assert a[3] == 10 and c[1] == 0
    pp.assert_structural_equal(simplify(f).body.stmts[-1], store)


def test_prover_refutes_what_only_unbounded_integers_satisfy():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        B[i] = A[i]
''')
    store = f.body.body
    ctx = analyses.context_at(f, store)
    load = store.value
    decided = analyses.prove(load + 1 > load, ctx)
    assert isinstance(decided, Refuted)
    assert 2**31 - 1 in decided.counterexample.values.values()
    i = f.body.var
    assert isinstance(analyses.prove(i + 2147483647 >= 2147483647, ctx), Refuted)
    assert isinstance(analyses.prove(i + 2147483644 >= 2147483644, ctx), Proved)


def test_int64_counter_is_not_wrapped_at_32_bits():
    i = n.Var("i", "int64")
    assert wrapping_operations(i + n.IntImm(2147483647, "int64"), {i: (0, 10)}) == []
    assert value_range(i * n.IntImm(3, "int64"), {i: (0, 10)}) == (0, 30)


def test_constants_outside_their_dtype_are_errors_with_a_location():
    with pytest.raises(DTypeError, match="outside the range of int32"):
        n.IntImm(3000000000, "int32")
    with pytest.raises(ParseError) as err:
        pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.serial(3000000000):
        A[0] = 1
''')
    assert (err.value.lineno, err.value.col) == (4, 23)
    with pytest.raises(ParseError, match="outside the range of int8"):
        pp.parse('@T.prim_func\ndef f(A: T.Buffer((4,), "int8")):\n    A[0] = 300\n')


def test_loop_running_past_its_counter_dtype_is_refused():
    i = n.Var("i", "int32")
    body = n.BufferStore(n.Buffer("A", (4,), "int32"), n.IntImm(1), (n.IntImm(0),))
    loop = n.For(i, n.IntImm(0), n.IntImm(3000000000, "int64"), n.ForKind.SERIAL, body)
    f = n.PrimFunc("f", (body.buffer,), loop)
    with pytest.raises(VerifyError, match="outside the range of its int32 counter"):
        verify(f)


def test_isl_question_that_may_wrap_goes_to_z3_and_says_so():
    i = n.Var("i")
    decided = analyses.prove(i * i >= 0, timeout_ms=200)
    # i * i wraps for |i| >= 46341: Z3 refutes, or gives up; never "proved".
    assert not isinstance(decided, Proved)
    if isinstance(decided, Unknown):
        assert "i * i" in decided.reason


def test_an_assumption_that_holds_only_by_wrapping_around_is_not_read_as_false():
    """Exact integers read `n + 1 < n` as never true, which would prove anything."""
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    T.assume(n + 1 < n)
    A[0] = n
''')
    store = f.body.stmts[1]
    ctx = analyses.context_at(f, store)
    n_var = f.params[1]
    assert isinstance(analyses.prove(n_var.equal(0), ctx), Refuted)
    assert isinstance(analyses.prove(n_var.equal(2147483647), ctx), Proved)


def test_a_branch_condition_that_wraps_keeps_its_load_may():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        B[i] = T.if_then_else(i + 2147483647 < 0, A[i], 0)
''')
    t = analyses.domain_touched(f, "A", "read")
    import islpy as isl

    assert isl.Set("{ A[i] : 1 <= i <= 3 }").is_subset(t.set)  # read where it wraps
    b = np.zeros(4, np.int32)
    codegen.build(f, target="python")(np.arange(4, dtype=np.int32) + 5, b)
    assert list(b) == [0, 6, 7, 8]


def test_wrapping_operation_reads_the_domain_box_exactly():
    # The box of the domain clears `i + c` cheaply only where no point can wrap;
    # at the edge ISL still finds the wrap.
    from polypad.model import AffineSpace
    from polypad.model.overflow import wrapping_operation

    i, m = n.Var("i", "int32"), n.Var("m", "int32")
    space = AffineSpace((i,), tuple_name="S")
    near = i + n.IntImm(2147483640)
    for extent, wraps in ((7, False), (8, False), (9, True)):
        domain = isl.Set(f"{{ S[i] : 0 <= i < {extent} }}")
        assert (wrapping_operation(near, space, domain) is not None) is wraps, extent
    domain = isl.Set("[m] -> { S[i] : 0 <= i < m <= 100 }")
    assert wrapping_operation(i + 1, space, domain) is None
    assert wrapping_operation(m * 21474837, space, domain) is not None  # at m = 100
    # A parameter holds a value of its dtype: below an int32 m, i + 1 cannot wrap;
    # below an int64 k, i may reach 2**31 - 1, where it does.
    below_m = isl.Set("[m] -> { S[i] : 0 <= i < m }")
    assert wrapping_operation(i + 1, space, below_m) is None
    k = n.Var("k", "int64")
    space.names.name(k)
    below_k = isl.Set("[k] -> { S[i] : 0 <= i < k }")
    assert wrapping_operation(i + 1, space, below_k) is not None
