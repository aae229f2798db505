"""remove_assume and remove_store_undef: what they delete, what they keep,
and the undefined values they refuse to leave behind."""

import pytest
from codegen_kernels import elementwise, padded

import codegen
from polypad.errors import BuildError
from polypad.ir.nodes import Call, Evaluate, IntImm
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.script import parse
from polypad.semantics.lower_vectors import lower_vectors
from polypad.semantics.lower_views import lower_views
from polypad.transform import remove_assume, remove_store_undef

HEADER = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
'''


def func(body: str):
    """A function of one 4x4 buffer ``A`` with ``body`` (indented by 4)."""
    return parse(HEADER + body)


def _calls(f, op):
    return [n for n in walk(f) if isinstance(n, Call) and n.op == op]


def lowered(f, lowering_pass):
    out = lowering_pass(f)
    verify(out)
    return out


def test_unchanged_function_is_returned_as_is():
    f = elementwise()
    assert remove_assume(f) is f
    assert remove_store_undef(f) is f


def test_remove_assume_drops_assumptions_and_their_loops():
    f = padded()
    out = lowered(f, remove_assume)
    assert _calls(out, "assume") == []
    # The first loop nest held only the assumption: it is gone entirely.
    assert out.body is f.body.stmts[1]


def test_remove_store_undef_after_remove_assume():
    out = lowered(remove_assume(padded()), remove_store_undef)
    assert _calls(out, "undef") == []
    # The else branch that stored T.undef() is gone.
    expected = parse('''
@T.prim_func
def padded(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for jo, ji in T.grid(4, 4):
        if 4 * jo + ji < 14:
            B[jo, ji] = A[jo, ji] * 2.0
''')
    assert_structural_equal(out, expected)


def test_lowering_pipeline_order():
    assert codegen.PIPELINE == (remove_assume, remove_store_undef, lower_views, lower_vectors)
    assert _calls(codegen.lower(padded()), "undef") == []


def test_undef_in_then_branch_negates_the_condition():
    f = func('''
    for i in T.serial(4):
        if i < 2:
            A[i, 0] = T.undef()
        else:
            A[i, 0] = 1.0
''')
    expected = func('''
    for i in T.serial(4):
        if not i < 2:
            A[i, 0] = 1.0
''')
    assert_structural_equal(lowered(f, remove_store_undef), expected)


def test_pure_expression_of_undef_is_removed_and_empty_body_becomes_no_op():
    f = func('''
    with T.block("b"):
        for i in T.serial(4):
            A[i, 1] = T.undef() * 0.5 + A[i, 0]
''')
    assert lowered(f, remove_store_undef).body == Evaluate(IntImm(0))


def test_let_bound_to_undef_taints_its_stores():
    f = func('''
    for i in T.serial(4):
        x = T.undef()
        A[i, 0] = x + 1.0
        A[i, 1] = 2.0
''')
    expected = func('''
    for i in T.serial(4):
        A[i, 1] = 2.0
''')
    assert_structural_equal(lowered(f, remove_store_undef), expected)


def test_undef_left_in_a_condition_is_an_error():
    f = func('''
    for i in T.serial(4):
        if A[i, 0] == T.undef():
            A[i, 0] = 1.0
''')
    with pytest.raises(BuildError, match="T.undef.. remains in the condition of an if"):
        remove_store_undef(f)


def test_undef_used_through_a_let_in_an_index_is_an_error():
    f = func('''
    for i in T.serial(4):
        x = T.undef("int32")
        A[i, x] = 1.0
''')
    with pytest.raises(BuildError, match="the value of x, which is still used"):
        remove_store_undef(f)


def test_undef_inside_assume_needs_remove_assume_first():
    with pytest.raises(BuildError, match="run remove_assume first"):
        remove_store_undef(padded())
