"""The value analyses on what TVM's lowering prints: views, vectors, packed functions.

``is_no_op`` and ``can_remove_conditional`` answer about a function's
canonical form (``analyses.canonical``): views read as the memory they
share, vector statements lane by lane, a packed function's computation with
its asserts as assumptions.  The canonical form is checked to mean the same
by running both on random inputs; each answer by running the function with
the conditional and with its body everywhere (``overcompute_brute``).
"""

from __future__ import annotations

import numpy as np
from overcompute_brute import everywhere, inputs, results_differ, same_results

import analyses
import codegen
import polypad as pp
from analyses import Element, Proved, Refuted, Unknown
from analyses.canonical import canonical_form
from analyses.scoped_lets import scope_lets
from polypad.errors import AssertionFailedError
from polypad.ir import nodes as n
from polypad.ir.opaque import OpaqueSite
from polypad.ir.visitor import walk


def ifs(f):
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def form(text: str):
    f = pp.parse(text)
    made = canonical_form(f)
    assert made is not None and not isinstance(made, OpaqueSite), made
    return f, made


# ---------------------------------------------------------------- views and vectors

SCALE = '''
@T.prim_func
def f(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
    A_1 = A.view(8)
    B_1 = B.view(8)
    for i in range(2):
        B_1[i * 4:i * 4 + 4] = A_1[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2.0), 4)
'''

SCALE_WRITTEN_OUT = '''
@T.prim_func
def f(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
    for i in range(2):
        B[i * 4 // 4, i * 4 % 4] = A[i * 4 // 4, i * 4 % 4] * T.float32(2.0)
        B[(i * 4 + 1) // 4, (i * 4 + 1) % 4] = A[(i * 4 + 1) // 4, (i * 4 + 1) % 4] * T.float32(2.0)
        B[(i * 4 + 2) // 4, (i * 4 + 2) % 4] = A[(i * 4 + 2) // 4, (i * 4 + 2) % 4] * T.float32(2.0)
        B[(i * 4 + 3) // 4, (i * 4 + 3) % 4] = A[(i * 4 + 3) // 4, (i * 4 + 3) % 4] * T.float32(2.0)
'''  # noqa: E501

# Views at an offset, one allocation under two names, a vector let, and a vector store
# whose lanes read what other lanes store (computed first, stored after).
MEANINGS = [SCALE, '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    A_2 = T.decl_buffer((2, 4), data=A.data, elem_offset=5)
    for i, j in T.grid(2, 4):
        B[i * 4 + j] = A_2[i, j] + A[i]
''', '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    x = T.alloc_buffer((8,))
    x_1 = T.decl_buffer((8,), data=x.data)
    for i in range(8):
        x[i] = A[i] + 1.0
    for i in range(8):
        x_1[i] = x[i] * 3.0
    for i in range(8):
        B[i] = x_1[i]
''', '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((9,), "float32")):
    for i in range(2):
        v: T.let[T.float32x4] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float32(1.0), 4)
        B[T.Ramp(i * 4 + 1, 1, 4)] = B[T.Ramp(i * 4, 1, 4)] + v
''']


def test_views_and_vector_lanes_are_written_out():
    f, made = form(SCALE)
    pp.assert_structural_equal(made.func, pp.parse(SCALE_WRITTEN_OUT))
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    assert [type(x).__name__ for x in made.stmt(store).stmts] == ["BufferStore"] * 4


def test_lanes_that_read_what_other_lanes_store_are_computed_first():
    _, made = form(MEANINGS[3])
    (local,) = [x for x in walk(made.func.body) if isinstance(x, n.Allocate)]
    assert local.buffer.name == "B_lanes" and local.buffer.shape == (4,)


def test_the_canonical_form_means_what_the_function_means():
    for text in MEANINGS:
        f, made = form(text)
        assert same_results(f, made.func, seeds=range(4)), text


MATMUL_LOWERED = '''
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3, 8), "float32"),
         C: T.Buffer((4, 8), "float32")):
    A_1 = A.view(12)
    B_1 = B.view(24)
    C_1 = C.view(32)
    for i, j_0, k in T.grid(4, 2, 3):
        cse_v1: T.let[T.int32] = i * 8 + j_0 * 4
        if k == 0:
            C_1[cse_v1:cse_v1 + 4] = T.Broadcast(T.float32(0.0), 4)
        C_1[cse_v1:cse_v1 + 4] = C_1[T.Ramp(cse_v1, 1, 4)] + \\
            T.Broadcast(A_1[i * 3 + k], 4) * B_1[T.Ramp(k * 8 + j_0 * 4, 1, 4)]
'''


def test_a_vectorized_init_through_a_view_is_refuted_by_the_rules():
    f = pp.parse(MATMUL_LOWERED)
    (init,) = ifs(f)
    decided = analyses.can_remove_conditional(f, init)
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    assert "rule 3 fails" in cex.description
    assert cex.instances[0].indices == {"i": 0, "j_0": 0, "k": 1}
    assert cex.element == Element("C", (0, 0))  # named in C, the parameter
    assert "whose memory the view C_1 shares" in cex.description
    assert cex.values["C[0, 0]"] == cex.values["input A[0, 0]"] * cex.values["input B[0, 0]"]
    assert results_differ(f, init)


PADDED = '''
@T.prim_func
def pad(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    A_1 = A.view(16)
    B_1 = B.view(16)
    for i in range(16):
        if i < 14:
            B_1[i] = A_1[i] * 2.0
    for i in range(14, 16):
        B_1[i] = 0.0
'''


def test_overcompute_through_views_that_a_later_store_overwrites_is_proved():
    f = pp.parse(PADDED)
    (branch,) = ifs(f)
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Proved), decided
    assert "rule 1" in decided.detail
    assert same_results(f, everywhere(f, branch))


def test_an_access_inside_the_memory_but_outside_its_view_is_refused():
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    A_2 = T.decl_buffer((8,), data=A.data, elem_offset=4)
    for i in range(8):
        if i < 6:
            B[i] = A_2[i + 2]
    for i in range(6, 8):
        B[i] = 0.0
''')
    (branch,) = ifs(f)
    # In A's memory (4 + 9 < 16) the overcompute is overwritten; but A_2[8] is not A_2's.
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Refuted), decided
    assert decided.counterexample.element == Element("A_2", (8,))


def test_is_no_op_of_a_vector_store_through_views():
    f = pp.parse(SCALE)
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    decided = analyses.is_no_op(f, store)
    assert isinstance(decided, Refuted), decided
    assert decided.counterexample.element.buffer == "B"  # read by the caller


# ---------------------------------------------------------------- packed functions

GUARDED = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    {check}
    for i in range(16):
        if i < n:
            B[i] = A[i]
'''


def test_an_assert_holds_for_what_follows_it():
    f = pp.parse(GUARDED.format(check='assert n == 16, ("ValueError", ["n"])'))
    # A plain assert is a statement of the model: the function is its own canonical form.
    assert canonical_form(f) is None
    (branch,) = ifs(f)
    decided = analyses.can_remove_conditional(f, branch)
    assert isinstance(decided, Proved), decided
    # Only n = 16 runs past the assert; elsewhere both raise before any store.
    for value in (0, 14, 16, 20):
        outs = []
        for g in (f, everywhere(f, branch)):
            a, b = np.full(16, 1.5, "float32"), np.zeros(16, "float32")
            try:
                codegen.build(g, target="python")(value, a, b)
                outs.append((None, b.tolist()))
            except AssertionFailedError as error:
                outs.append((error.assert_message, b.tolist()))
        assert outs[0] == outs[1], value
    # Without the check, n = 0 keeps B as the caller passed it.
    plain = pp.parse(GUARDED.format(check="T.evaluate(0)"))
    decided = analyses.can_remove_conditional(plain, ifs(plain)[0])
    assert isinstance(decided, Refuted), decided
    assert results_differ(plain, ifs(plain)[0])


ARGS = '''
@T.prim_func
def f(args: T.handle, A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
      C: T.Buffer((16,), "float32")):
    T.func_attr({{"tirx.noalias": True}})
    m: T.let[T.int32] = T.tvm_struct_get(args, 0, 13, "int32")
    assert m >= 0 or T.isnullptr(args), ("TypeError", ["m"])
    {check}
    for i in range(16):
        if i < m:
            B[i] = A[i]
    for i in range(16):
        if i < 8:
            C[i] = 0.0
    if not T.isnullptr(args):
        assert T.tvm_struct_get(args, 1, 13, "int32") == 0, ("TypeError", ["x"])
'''


def test_a_question_that_needs_an_opaque_value_stays_unknown_naming_it():
    f = pp.parse(ARGS.format(check="T.evaluate(0)"))
    needs_m, plain, scaffolding = ifs(f)
    decided = analyses.can_remove_conditional(f, needs_m)
    assert isinstance(decided, Unknown), decided
    assert "needs the value of 'm' at line 6 is given by T.tvm_struct_get" in decided.reason
    # A question that does not need it is answered, with a counterexample about data.
    decided = analyses.can_remove_conditional(f, plain)
    assert isinstance(decided, Refuted), decided
    assert decided.counterexample.element == Element("C", (8,))
    _, made = form(ARGS.format(check="T.evaluate(0)"))
    g = made.func
    assert [p.name for p in g.params] == ["A", "B", "C", "m"]
    assert results_differ(g, ifs(g)[1])
    # The scaffolding itself is not modelled: its intrinsic and line are named.
    decided = analyses.can_remove_conditional(f, scaffolding)
    assert isinstance(decided, Unknown)
    assert "T.isnullptr at line 15 is an opaque TVM intrinsic" in decided.reason


def test_a_check_polypad_cannot_read_that_reads_data_withholds_a_counterexample():
    f = pp.parse(ARGS.format(check='assert T.isnullptr(args) or A[0] > 0.0, ("E", ["A"])'))
    plain = ifs(f)[1]
    decided = analyses.can_remove_conditional(f, plain)
    assert isinstance(decided, Unknown), decided
    assert "may not pass the check assert at line 8" in decided.reason


def test_a_statement_of_the_scaffolding_is_not_a_no_op_question():
    f = pp.parse(ARGS.format(check="T.evaluate(0)"))
    (check,) = [x for x in walk(f.body) if isinstance(x, n.Assert)][:1]
    decided = analyses.is_no_op(f, check)
    assert isinstance(decided, Unknown)
    assert "scaffolding" in decided.reason


def test_inputs_of_a_canonical_form_run():
    # The brute force above runs canonical forms: their parameters are arrays and ints.
    _, made = form(ARGS.format(check="T.evaluate(0)"))
    args = inputs(made.func, 0)
    assert [type(a) for a in args] == [np.ndarray, np.ndarray, np.ndarray, int]


def test_checks_of_values_that_steer_nothing_are_left_out():
    f, made = form('''
@T.prim_func
def f(args: T.handle, num_args: T.int32, A: T.Buffer((4,), "float32")):
    T.func_attr({"tirx.noalias": True})
    assert num_args == 1, ("TypeError", ["n"])
    code: T.let[T.int32] = T.tvm_struct_get(args, 0, 13, "int32")
    assert code == 0 or code >= 64, ("TypeError", ["code"])
    for i in range(4):
        A[i] = A[i] + 1.0
''')
    # The type code only its own check reads is no parameter; num_args is, and its check
    # (on a plain value) stays, a statement of the model.
    assert [p.name for p in made.func.params] == ["num_args", "A"]
    kept = [x for x in walk(made.func.body) if isinstance(x, (n.Evaluate, n.Assert))]
    assert [pp.script(x).strip() for x in kept] == ["assert num_args == 1, ('TypeError', ['n'])"]
    assert [site.what for site in made.packed.left_out] == ["assert"]


# ---------------------------------------------------------------- lets read again

ARGMAX = '''
@T.prim_func
def argmax(x: T.Buffer((2, 4), "float32"), out: T.Buffer((2,), "int32")):
    idx = T.alloc_buffer((2,), "int32")
    val = T.alloc_buffer((2,))
    for i, k in T.grid(2, 4):
        with T.block("red"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                idx[vi] = -1
                val[vi] = T.float32(-3.4e38)
            v_idx: T.let[T.int32] = T.if_then_else(val[vi] >= x[vi, vk], idx[vi], vk)
            v_val: T.let[T.float32] = T.if_then_else(val[vi] >= x[vi, vk], val[vi], x[vi, vk])
            idx[vi] = v_idx
            val[vi] = v_val
    for i in range(2):
        out[i] = idx[i]
'''


def test_lets_move_down_to_the_statements_that_read_them():
    f = pp.parse(ARGMAX)
    # The model reads a let only at the stores that use it (polypad.model.nest), so
    # TVM's argmax is its own canonical form; the scoping, asked directly:
    assert canonical_form(f) is None
    scoped, _ = scope_lets(f)
    store_idx, store_val = [x for x in walk(scoped.body) if isinstance(x, n.BufferStore)][2:4]
    lets = [x for x in walk(scoped.body) if isinstance(x, n.LetStmt)
            and x.var.name in ("v_idx", "v_val")]
    # v_val over both stores (neither changes what it reads before it is stored); v_idx
    # over its own store only, so the store of val no longer follows it.
    assert [x.var.name for x in lets] == ["v_val", "v_idx"]
    assert lets[1].body is store_idx
    assert same_results(f, scoped, seeds=range(4))


def test_an_argmax_init_run_on_every_step_is_refuted():
    f = pp.parse(ARGMAX)
    (init,) = ifs(f)
    decided = analyses.can_remove_conditional(f, init)
    assert isinstance(decided, Refuted), decided
    assert results_differ(f, init)
