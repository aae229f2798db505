"""extract(func): domains, accesses and schedules compared with hand-written ISL."""

import islpy as isl
import pytest

from polypad.errors import NotAffineError
from polypad.model import extract
from polypad.script import parse


def model_of(text: str):
    return extract(parse(text))


def same(a, b: str) -> bool:
    """``a`` equals the ISL object written as ``b``."""
    kind = {isl.Set: isl.Set, isl.Map: isl.Map, isl.UnionMap: isl.UnionMap,
            isl.UnionSet: isl.UnionSet}[type(a)]
    return a.is_equal(kind(b))


GRID = """
@T.prim_func
def grid(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        B[i, j] = A[i, j] + 1.0
"""


def test_grid_domain_accesses_schedule():
    m = model_of(GRID)
    (s,) = m.statements
    assert s.name == "S0" and not s.may and s.dropped_guards == ()
    assert [v.name for v in s.loop_vars] == ["i", "j"]
    assert same(s.domain, "{ S0[i, j] : 0 <= i < 4 and 0 <= j < 8 }")
    assert same(s.writes, "{ S0[i, j] -> B[i, j] : 0 <= i < 4 and 0 <= j < 8 }")
    assert same(s.reads, "{ S0[i, j] -> A[i, j] : 0 <= i < 4 and 0 <= j < 8 }")
    assert same(m.schedule, "{ S0[i, j] -> [0, i, 0, j, 0] : 0 <= i < 4 and 0 <= j < 8 }")
    assert m.params == ()


def test_triangular_loop():
    m = model_of("""
@T.prim_func
def tri(A: T.Buffer((8, 8), "float32")):
    for i in T.serial(8):
        for j in T.serial(i):
            A[i, j] = 0.0
    for k in range(2, 6):
        A[k, k] = 1.0
""")
    s0, s1 = m.statements
    assert same(s0.domain, "{ S0[i, j] : 0 <= j < i < 8 }")
    assert same(s1.domain, "{ S1[k] : 2 <= k < 6 }")
    assert same(m.schedule, "{ S0[i, j] -> [0, i, 0, j, 0] : 0 <= j < i < 8;"
                            "  S1[k] -> [1, k, 0, 0, 0] : 2 <= k < 6 }")


PADDED = """
@T.prim_func
def pad(A: T.Buffer((14,), "float32"), B: T.Buffer((4, 4), "float32")):
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = A[4 * io + ii]
        else:
            B[io, ii] = 0.0
"""


def test_guarded_store_and_else_branch():
    m = model_of(PADDED)
    s0, s1 = m.statements
    assert same(s0.domain, "{ S0[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii < 14 }")
    assert same(s1.domain, "{ S1[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii >= 14 }")
    assert same(s0.reads, "{ S0[io, ii] -> A[4io + ii] : 0 <= io < 4 and 0 <= ii < 4 and "
                          "4io + ii < 14 }")
    assert s1.reads.is_empty()
    assert same(m.writes(), "{ S0[io, ii] -> B[io, ii] : 0 <= io, ii < 4 and 4io + ii < 14;"
                            "  S1[io, ii] -> B[io, ii] : 0 <= io, ii < 4 and 4io + ii >= 14 }")
    # then- and else-branch take consecutive sequence positions
    assert same(m.schedule, "{ S0[io, ii] -> [0, io, 0, ii, 0] : 0 <= io, ii < 4 and "
                            "4io + ii < 14; S1[io, ii] -> [0, io, 0, ii, 1] : 0 <= io, ii < 4"
                            " and 4io + ii >= 14 }")
    assert len(s1.guards) == 1


def test_scalar_param_shape():
    m = model_of("""
@T.prim_func
def scale(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        B[i] = A[i] * 2.0
""")
    (s,) = m.statements
    assert same(s.domain, "[n] -> { S0[i] : 0 <= i < n }")
    assert same(m.reads(), "[n] -> { S0[i] -> A[i] : 0 <= i < n }")
    assert [p.name for p in m.params] == ["n"]
    assert m.params[0] is m.func.params[0]


def test_data_dependent_guard_is_dropped_and_flagged():
    m = model_of("""
@T.prim_func
def relu(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        if i < 10 and A[i] > 0.0:
            B[i] = A[i]
""")
    (s,) = m.statements
    assert s.may
    branch = m.func.body.body
    assert s.stmt is branch.then_case
    assert s.dropped_guards == (branch.condition.b,)  # A[i] > 0.0
    # the affine conjunct is kept
    assert same(s.domain, "{ S0[i] : 0 <= i < 10 }")
    assert all(a.may for a in s.accesses)
    # the guard's read and the value's read are both there
    assert same(s.reads, "{ S0[i] -> A[i] : 0 <= i < 10 }")
    assert len([a for a in s.accesses if a.kind == "read"]) == 2


def test_floor_div_and_mod_indices():
    m = model_of("""
@T.prim_func
def split(A: T.Buffer((14,), "float32"), B: T.Buffer((4, 4), "float32"),
          C: T.Buffer((3, 8), "float32")):
    for i in T.serial(14):
        B[i // 4, i % 4] = A[i]
        C[(i + 2) // 8, (i + 2) % 8] = A[i]
""")
    s0, s1 = m.statements
    assert same(s0.writes, "{ S0[i] -> B[floor(i/4), i mod 4] : 0 <= i < 14 }")
    assert same(s1.writes, "{ S1[i] -> C[floor((i + 2)/8), (i + 2) mod 8] : 0 <= i < 14 }")
    assert same(m.schedule, "{ S0[i] -> [0, i, 0] : 0 <= i < 14; S1[i] -> [0, i, 1] : "
                            "0 <= i < 14 }")


def test_non_affine_index_names_the_expression():
    f = parse("""
@T.prim_func
def bad(A: T.Buffer((64,), "float32")):
    for i, j in T.grid(8, 8):
        A[i * j] = 0.0
""")
    with pytest.raises(NotAffineError, match=r"i \* j") as info:
        extract(f)
    assert "S0" in str(info.value)
    assert info.value.expr == f.body.body.body.indices[0]


def test_select_restricts_reads():
    m = model_of("""
@T.prim_func
def padded_read(A: T.Buffer((14,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        B[i] = T.if_then_else(i < 14, A[i], 0.0)
""")
    (s,) = m.statements
    assert same(s.reads, "{ S0[i] -> A[i] : 0 <= i < 14 }")
    assert not any(a.may for a in s.accesses)


def test_lets_are_substituted_and_loads_in_lets_are_reads():
    m = model_of("""
@T.prim_func
def lets(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.serial(16):
        k = i * 4
        v = A[k + 1]
        B[k + 3] = v * 2.0
""")
    (s,) = m.statements
    assert same(s.writes, "{ S0[i] -> B[4i + 3] : 0 <= i < 16 }")
    assert same(s.reads, "{ S0[i] -> A[4i + 1] : 0 <= i < 16 }")


def test_non_affine_let_only_fails_when_used_as_index():
    f = parse("""
@T.prim_func
def gather(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in T.serial(16):
        k = A[i]
        B[i] = k
        B[k] = 0
""")
    with pytest.raises(NotAffineError, match=r"A\[i\]"):
        extract(f)


def test_assume_statement_blocks_and_allocations():
    m = model_of("""
@T.prim_func
def assumed(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    for i in T.serial(16):
        with T.block("compute"):
            T.assume(i < 14 or A[i] == 0.0)
            X[i] = A[i]
    for i in T.serial(16):
        B[i] = X[i]
""")
    s0, s1, s2 = m.statements
    assert s0.is_assume and s0.writes.is_empty()
    assert same(s0.reads, "{ S0[i] -> A[i] : 0 <= i < 16 }")
    assert s0.block == "compute" and s1.block == "compute" and s2.block is None
    assert same(s2.reads, "{ S2[i] -> X[i] : 0 <= i < 16 }")
    assert m.buffer("X") is s1.stmt.buffer and m.buffer_name(s1.stmt.buffer) == "X"
    assert m.statement("S2") is s2


def _order(schedule: isl.UnionMap) -> isl.UnionMap:
    """Pairs of instances (a, b) with a scheduled before b."""
    return schedule.lex_lt_union_map(schedule)


def _tree_map(tree: isl.Schedule) -> isl.UnionMap:
    return tree.get_map().intersect_domain(tree.get_domain())


@pytest.mark.parametrize("text", [GRID, PADDED])
def test_schedule_tree_orders_like_the_schedule_map(text):
    m = model_of(text)
    tree = m.schedule_tree()
    assert tree.get_domain().is_equal(m.domain())
    assert _order(_tree_map(tree)).is_equal(_order(m.schedule))


def test_schedule_tree_of_a_sequence_with_params():
    m = model_of("""
@T.prim_func
def seq(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        A[i] = 0.0
        for j in T.serial(i):
            A[i] = A[i] + B[j]
        B[i] = A[i]
    for i in T.serial(n):
        B[i] = B[i] * 2.0
""")
    tree = m.schedule_tree()
    assert _order(_tree_map(tree)).is_equal(_order(m.schedule))
    # S1 (the inner loop) runs between S0 and S2 of the same i
    before = _order(m.schedule)
    assert isl.UnionMap("[n] -> { S0[i] -> S1[i, j] : 0 <= j < i < n }").is_subset(before)
    assert isl.UnionMap("[n] -> { S1[i, j] -> S2[i] : 0 <= j < i < n }").is_subset(before)
    assert before.intersect(isl.UnionMap("[n] -> { S2[i] -> S1[i, j] }")).is_empty()
    assert isl.UnionMap("[n] -> { S2[i] -> S3[k] : 0 <= i, k < n }").is_subset(before)


def test_top_level_statement_and_empty_domains():
    m = model_of("""
@T.prim_func
def edge(A: T.Buffer((16,), "float32")):
    A[0] = 1.0
    for i in T.serial(4):
        if i > 10:
            A[i] = 0.0
""")
    s0, s1 = m.statements
    assert same(s0.domain, "{ S0[] }") and s0.loop_vars == ()
    assert s1.domain.is_empty() and not s1.may
    assert same(m.schedule, "{ S0[] -> [0, 0, 0] }")
    tree = m.schedule_tree()
    assert _tree_map(tree).is_equal(isl.UnionMap("{ S0[] -> [0] }"))


def test_data_dependent_loop_extent_is_dropped():
    from polypad.ir import Buffer, BufferLoad, BufferStore, For, ForKind, PrimFunc, Var, const

    L, A = Buffer("L", (4,), "int32"), Buffer("A", (64,), "float32")
    i, j = Var("i"), Var("j")
    inner = For(j, const(0), BufferLoad(L, (i,)), ForKind.SERIAL,
                BufferStore(A, const(0.0), (i * 16 + j,)))
    m = extract(PrimFunc("ragged", (L, A), For(i, const(0), const(4), ForKind.SERIAL, inner)))
    (s,) = m.statements
    assert s.may and s.dropped_guards == (j < BufferLoad(L, (i,)),)
    assert same(s.domain, "{ S0[i, j] : 0 <= i < 4 and j >= 0 }")
    assert same(s.reads, "{ S0[i, j] -> L[i] : 0 <= i < 4 and j >= 0 }")
