"""context_at(): loops, branches, lets, assumptions and stored values at a point."""

from __future__ import annotations

import re

import islpy as isl
import pytest
from prover_brute_force import assert_proved

import polypad as pp
from analyses import Context, Proved, Refuted, Unknown, context_at, known_value, prove
from polypad.errors import NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk


def nodes(f, cls) -> list:
    return [x for x in walk(f.body) if isinstance(x, cls)]


def parse(text: str) -> n.PrimFunc:
    return pp.parse(text)


NEST = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), n: T.int32):
    T.assume(0 <= n and n < 4)
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            k = io + n
            B[io, ii] = A[io, ii]
        else:
            B[io, ii] = 0.0
'''


def test_domain_holds_loop_ranges_branch_and_integer_assumption():
    f = parse(NEST)
    then_store, else_store = nodes(f, n.BufferStore)
    ctx = context_at(f, then_store)
    assert [v.name for v in ctx.loop_vars] == ["io", "ii"]
    expected = isl.Set("[n] -> { [io, ii] : 0 <= n < 4 and 0 <= io < 4 and 0 <= ii < 4 "
                       "and 4io + ii < 14 }")
    assert ctx.domain.reset_tuple_id().is_equal(expected)
    else_ctx = context_at(f, else_store)
    io, ii = else_ctx.loop_vars
    assert_proved(n.And(io.equal(3), ii >= 2), f, else_store, method="isl")
    assert isinstance(else_ctx.conditions[0], n.Not)


def test_let_binding_is_known():
    f = parse(NEST)
    store = nodes(f, n.BufferStore)[0]
    k = nodes(f, n.LetStmt)[0].var
    io = context_at(f, store).loop_vars[0]
    nv = f.params[2]
    assert_proved(k.equal(io + nv), f, store, method="isl")  # an affine let is substituted
    assert_proved(k < 7, f, store)


def test_point_before_a_loop_is_outside_it():
    f = parse(NEST)
    loop = nodes(f, n.For)[0]
    ctx = context_at(f, loop)
    assert ctx.loop_vars == ()
    assert prove(f.params[2] < 4, ctx) == Proved("isl")


def test_repr_lists_loops_conditions_and_facts():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((1,), "float32")):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == 0.0)
    B[0] = 0.0
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[0] = B[0] + A[io, ii]
''')
    text = repr(context_at(f, nodes(f, n.BufferStore)[1]))
    assert text.splitlines()[0] == "Context before `B[0] = B[0] + A[io, ii]` in f:"
    assert "  loops: 0 <= io < 4, 0 <= ii < 4" in text
    assert "  if: 4 * io + ii < 14" in text
    assert re.search(r"assume \(S\d+\): 4 \* io \+ ii < 14 or A\[io, ii\] == 0.0 "
                     r"for io, ii in \{ S\d+\[io, ii\] : 0 <= io <= 3 and 0 <= ii <= 3 \}", text)
    assert re.search(r"stored \(S\d+\): B\[0\] == 0.0", text)
    assert repr(Context.empty()) == "Context(empty)"


def test_known_value_from_a_store_before_the_loop_only_for_the_first_iteration():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = 0.0
    for i in T.serial(16):
        B[0] = B[0] + A[i]
''')
    A, B = f.params
    store = nodes(f, n.BufferStore)[1]
    ctx = context_at(f, store)
    (i,) = ctx.loop_vars
    assert known_value(B[0], ctx) is None
    assert known_value(B[0], ctx.with_condition(i.equal(0))) == n.FloatImm(0.0)
    assert known_value(B[0], context_at(f, nodes(f, n.For)[0])) == n.FloatImm(0.0)


def test_stored_value_read_from_another_buffer_is_dropped_when_that_one_changes():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = A[i]
    A[2] = 7.0
    for i in T.serial(4):
        C[i] = B[i]
''')
    A, B, C = f.params
    store = nodes(f, n.BufferStore)[2]
    ctx = context_at(f, store)
    (i,) = ctx.loop_vars
    assert_proved(B[i].equal(A[i]), f, store, where=i.not_equal(2))
    assert known_value(B[i], ctx.with_condition(i.equal(1))) == A[i]
    # B[2] holds the old A[2], which may or may not have been 7.0 already: traced back
    # to the input, the claim fails where the caller passed anything but 7.0 there.
    decided = prove(B[i].equal(A[i]), ctx)
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    assert cex.instances[0].indices == {"i": 2}
    assert cex.values["A[2]"] == 7.0
    assert cex.values["B[2]"] == cex.values["input A[2]"] != 7.0


def test_data_dependent_branch_condition_holds_until_its_data_is_written():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    if A[0] > 5:
        A[1] = 1
        A[2] = A[0]
        A[0] = 0
        A[3] = 2
''')
    A = f.params[0]
    first, second, third, fourth = nodes(f, n.BufferStore)
    assert_proved(A[0] > 5, f, second)
    assert_proved(A[2] > 5, f, third)  # A[2] = A[0] stored, A[0] > 5 from the branch
    assert not prove(A[0] > 5, context_at(f, fourth))
    # A[2] still holds the old A[0], but the prover only tracks values in terms
    # of current contents: once A[0] changes, both facts are gone.
    assert not prove(A[2] > 5, context_at(f, fourth))


def test_allocation_inside_a_loop_starts_from_scratch_each_iteration():
    f = parse('''
@T.prim_func
def f(B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T_local = T.alloc_buffer((1,), "float32")
        if i == 0:
            T_local[0] = 1.0
        B[i] = T_local[0]
''')
    store = nodes(f, n.BufferStore)[1]
    ctx = context_at(f, store)
    (i,) = ctx.loop_vars
    local = nodes(f, n.Allocate)[0].buffer
    assert_proved(local[0].equal(1.0), f, store, where=i.equal(0))
    assert not prove(local[0].equal(1.0), ctx.with_condition(i.equal(1)))


def test_assumption_inside_a_loop_bounds_a_parameter_afterwards():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "int32"), n: T.int32):
    for i in T.serial(16):
        T.assume(i < n)
    A[0] = n
''')
    nv = f.params[1]
    store = nodes(f, n.BufferStore)[0]
    assert_proved(nv > 15, f, store, method="isl", params={"n": range(10, 20)})
    loop = nodes(f, n.For)[0]
    assert isinstance(prove(nv > 15, context_at(f, loop)), Refuted)


def test_non_affine_store_index_widens_writes_instead_of_failing():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(16):
        A[i] = 0.0
    for i, j in T.grid(4, 4):
        A[i * j] = 1.0
    B[0] = A[5]
''')
    A = f.params[0]
    ctx = context_at(f, nodes(f, n.BufferStore)[2])
    decided = prove(A[5].equal(0.0), ctx)
    assert isinstance(decided, Unknown) and "not track" in decided.reason
    assert known_value(A[5], ctx) is None
    assert known_value(A[5], context_at(f, nodes(f, n.For)[1])) == n.FloatImm(0.0)


def test_errors_name_the_statement():
    f = parse(NEST)
    stray = n.BufferStore(f.params[0], n.FloatImm(1.0), (n.IntImm(0), n.IntImm(0)))
    with pytest.raises(NotFoundError, match=r"A\[0, 0\] = 1.0.*not in function f"):
        context_at(f, stray)
    shared = nodes(f, n.BufferStore)[1]
    twice = n.PrimFunc("g", f.params, n.SeqStmt((shared, shared)))
    with pytest.raises(PolypadError, match="occurs 2 times"):
        context_at(twice, shared)


def test_a_subtree_shared_by_two_places_is_two_sites():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((1,), "int32")):
    if A[0] > 0:
        B[0] = 1
    B[0] = B[0] + 1
''')
    branch, last = f.body.stmts
    twice = n.PrimFunc("g", f.params, n.SeqStmt((branch, branch, last)))
    ctx = context_at(twice, last)  # the point after both copies is unambiguous
    assert not prove(f.params[1][0].equal(1), ctx)
    assert "occurs 2 times" in str(pytest.raises(PolypadError, context_at, twice, branch).value)
