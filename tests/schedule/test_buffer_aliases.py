"""Buffers that share memory (views) never make an analysis or a primitive answer wrongly.

A view (``A_1 = T.decl_buffer((16,), data=A.data)``) is a second name for
memory another buffer owns.  The model reads every access of a view as an
access of its owner (:func:`polypad.ir.views.through_view`), so dependences,
merging and the loop primitives see one piece of memory.  What compares
buffers by identity must do the same (:func:`polypad.ir.views.root`), and a
primitive that rewrites the accesses of one buffer alone (a cache, a new
layout, a new scope) cannot follow the view's, so it refuses with
:class:`~polypad.errors.AliasError` naming both.

Each test here failed before the fix; the comment says how.
"""

from __future__ import annotations

import pytest
from scalar_runs_support import assert_runs_the_same

import analyses
from analyses.gpu_sync import BarrierPlan, plan_barriers
from polypad import transform
from polypad.errors import (
    AliasError,
    BuildError,
    IllegalTransformError,
    NotAffineError,
    PolypadError,
)
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

# P writes A by rows and columns; Q reads it backwards through a flat view.
FLAT_REVERSED = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
      C: T.Buffer((16,), "float32")):
    A_1 = T.decl_buffer((16,), data=A.data)
    for i, j in T.grid(4, 4):
        with T.block("P"):
            A[i, j] = B[i, j] + 1.0
    for k in T.serial(16):
        with T.block("Q"):
            C[k] = A_1[15 - k] * 2.0
'''

SIGNATURE = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
      C: T.Buffer((16,), "float32")):
    A_1 = T.decl_buffer((16,), data=A.data)
'''


def test_the_loops_under_a_view_are_named():
    # Was: KeyError from get_loops("Q"), and no loop at all for get_loops().
    sch = Schedule(parse(FLAT_REVERSED))
    assert sch.get_loops("P") == ["i", "j"]
    assert sch.get_loops("Q") == ["k"]
    assert sch.get_loops() == ["i", "j", "k"]


def test_compute_at_follows_a_flat_view_of_the_producer():
    # Was: TypeError (the statements under the view were not found).
    f = parse(FLAT_REVERSED)
    sch = Schedule(f)
    sch.compute_at("P", sch.get_loops("Q")[0])
    verify(sch.func)
    assert_structural_equal(sch.func, parse(SIGNATURE + '''
    for k in T.serial(16):
        with T.block("P"):
            A[-((k + 4) // 4) + 4, -(k % 4) + 3] = B[-((k + 4) // 4) + 4, -(k % 4) + 3] + 1.0
        with T.block("Q"):
            C[k] = A_1[15 - k] * 2.0
'''))
    assert_runs_the_same(f, sch.func)


def test_reverse_compute_at_follows_a_flat_view_of_the_consumer():
    f = parse(FLAT_REVERSED)
    sch = Schedule(f)
    sch.reverse_compute_at("Q", sch.get_loops("P")[-1])
    assert_structural_equal(sch.func, parse(SIGNATURE + '''
    for i, j in T.grid(4, 4):
        with T.block("P"):
            A[i, j] = B[i, j] + 1.0
        with T.block("Q"):
            C[-4 * i - j + 15] = A_1[15 - (-4 * i - j + 15)] * 2.0
'''))
    assert_runs_the_same(f, sch.func)


def test_a_dependence_through_a_flat_view_keeps_a_loop_serial():
    # Was: NotFoundError (no loop found); the dependence itself is the model's.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    A_1 = T.decl_buffer((12,), data=A.data, elem_offset=4)
    for i, j in T.grid(3, 4):
        with T.block("P"):
            A_1[i * 4 + j] = A[i, j] + B[i, j]
''')
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match="carries a flow dependence") as err:
        sch.parallel(sch.get_loops("P")[0])
    assert str(err.value.evidence.element) == "A[1, 0]"
    assert sch.func is f


# The let ``v`` is read once, before the store through the view changes A[i]; the model
# reads a let at each statement that uses it, after that store: it must refuse, as it
# does for the same store written to A.
LET_READ_AGAIN = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((8,), "float32")):
    A_1 = T.decl_buffer((8,), data=A.data)
    for i in T.serial(8):
        with T.block("compute"):
            v = A[i]
            STORE[i] = B[i]
            C[i] = v
'''


@pytest.mark.parametrize("store", ["A", "A_1"])
def test_a_let_changed_through_a_view_is_not_read_again(store):
    # Was (A_1): dependences gave a flow S0 -> S1 and no anti dependence, and
    # distribute moved the store first, so C read B's values.
    f = parse(LET_READ_AGAIN.replace("STORE", store))
    why = f"v's value A[i] is read once, before the body, but the body's store to {store}"
    with pytest.raises(NotAffineError, match=why.replace("[", r"\[").replace("]", r"\]")):
        analyses.dependences(f)
    sch = Schedule(f)
    with pytest.raises(NotAffineError, match="is read once, before the body"):
        sch.distribute("compute", [0], "moved")
    assert sch.func is f


# ---------------------------------------------------------------- one buffer rewritten

WRITE_THROUGH_VIEW = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        with T.block("P"):
            A_1 = T.decl_buffer((8,), data=A.data)
            A_1[i] = B[i] + 1.0
            C[i] = A[i] * 2.0
'''

ALLOCATION_VIEWED = '''
@T.prim_func
def f(B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    x = T.alloc_buffer((8,))
    for i in T.serial(8):
        with T.block("P"):
            x[i] = B[i] + 1.0
    for i in T.serial(8):
        with T.block("Q"):
            x_1 = T.decl_buffer((8,), data=x.data)
            C[i] = x_1[7 - i] * 2.0
'''

REFUSED = {
    # Was: accepted, and C read A before the store through A_1 reached the cache.
    "cache_read": (WRITE_THROUGH_VIEW, "A", lambda s: s.cache_read("P", "A", "global")),
    # Was: IndexError.
    "cache_read_at": (WRITE_THROUGH_VIEW, "A", lambda s: s.cache_read(
        "P", "A", "local", at=s.get_loops("P")[0])),
    "cache_write": (WRITE_THROUGH_VIEW, "A", lambda s: s.cache_write("P", "A", "global")),
    # Was: accepted, leaving x_1 a view of a buffer no longer declared (VerifyError when
    # built).
    "transform_layout": (ALLOCATION_VIEWED, "x", lambda s: s.transform_layout(
        "P", "x", lambda i: [i % 4, i // 4])),
    "set_scope": (ALLOCATION_VIEWED, "x", lambda s: s.set_scope("x", "local")),
    "store_at": (ALLOCATION_VIEWED, "x", lambda s: s.store_at("x", s.get_loops("P")[0])),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_primitive_that_rewrites_one_buffer_refuses_one_with_a_view(name):
    text, buffer, apply = REFUSED[name]
    f = parse(text)
    sch = Schedule(f)
    with pytest.raises(AliasError) as err:
        apply(sch)
    primitive = name.removesuffix("_at") if name.startswith("cache") else name
    assert str(err.value).startswith(
        f"{primitive}: buffer {buffer!r} shares its memory with '{buffer}_1' (a view")
    assert sch.func is f and not sch.trace.steps


def test_remove_no_op_keeps_an_allocation_used_through_a_view():
    # Was: the allocation was dropped (x looked unused) and the result did not verify.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    x = T.alloc_buffer((8,))
    x_1 = T.decl_buffer((8,), data=x.data)
    for i in T.serial(8):
        x_1[i] = A[i] + 1.0
    for i in T.serial(8):
        B[i] = x_1[i] * 3.0
''')
    out = transform.remove_no_op(f)
    verify(out)
    assert_structural_equal(out, f)
    assert_runs_the_same(f, out)


def test_shared_memory_read_through_a_view_in_a_second_launch_is_refused():
    # Was: planned (the view's read was not counted as a use of S), so the second
    # kernel launch read shared memory the first one's blocks had left.
    text = '''
@T.prim_func
def across(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[bx * 4 + tx] = A[bx * 4 + tx]
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        READ
'''
    view = ('S_1 = T.decl_buffer((8,), "float32", data=S.data, scope="shared")\n'
            '        for tx in T.thread_binding(4, thread="threadIdx.x"):\n'
            '            B[bx * 4 + tx] = S_1[bx * 4 + tx]')
    direct = ('for tx in T.thread_binding(4, thread="threadIdx.x"):\n'
              '            B[bx * 4 + tx] = S[bx * 4 + tx]')
    for read in (direct, view):
        with pytest.raises(BuildError, match="shared buffer 'S' is used by 2 kernel launches"):
            plan_barriers(parse(text.replace("READ", read)))
    one_launch = parse(text.replace("READ", view).replace(
        "    for bx in T.thread_binding(2, thread=\"blockIdx.x\"):\n        S_1", "        S_1"))
    assert isinstance(plan_barriers(one_launch), BarrierPlan)


@pytest.mark.parametrize("operand", ["X[1 - i]", "X_1[1 - i]"])
def test_an_update_whose_operand_reads_its_target_through_a_view_is_no_reduction(operand):
    # Was (X_1): rfactor took it for a reduction of X by a term that does not read X,
    # and the rewrite read X[0] before its sum was complete.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), X: T.Buffer((2,), "float32")):
    X_1 = T.decl_buffer((2,), data=X.data)
    for i, k in T.grid(2, 4):
        with T.block("upd"):
            X[i] = X[i] + A[k] * OPERAND
'''.replace("OPERAND", operand))
    sch = Schedule(f)
    with pytest.raises(PolypadError, match="rfactor: the loop over k holds no reduction .* "
                                           "X is not updated from itself"):
        sch.rfactor("k", 0)
    assert sch.func is f


def test_remove_no_op_drops_a_view_with_its_last_statement():
    # Was: a crash (DeclBuffer.body None), found by benchmarks/fuzz.py --shapes aliases.
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    A_1 = T.decl_buffer((8,), data=A.data)
    for i in T.serial(8):
        A_1[i] = A[i]
''')
    out = transform.remove_no_op(f)  # A_1[i] = A[i] stores the value already there
    assert_structural_equal(out, parse('''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    T.evaluate(0)
'''))


@pytest.mark.parametrize("source", ["A", "A_1"])
def test_double_buffer_sees_the_loop_write_the_source_its_copy_reads_through_a_view(source):
    # Was (A_1): accepted; the next step's copy, run early, read A before the loop wrote it.
    f = parse('''
@T.prim_func
def shift(A: T.Buffer((12,), "float32"), B: T.Buffer((4,), "float32")):
    A_1 = T.decl_buffer((12,), data=A.data)
    for k in range(2):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            S[tx] = SOURCE[4 * k + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[4 * k + 4 + tx] = S[tx] + T.float32(1)
'''.replace("SOURCE", source))
    with pytest.raises(IllegalTransformError, match=r"double_buffer of S: .* writes A in the "
                                                    r"loop, and the copy of the next step, "
                                                    r"which reads it, would run before it"
                       ) as info:
        Schedule(f).double_buffer("S")
    assert str(info.value.evidence.element) == "A[4]"
