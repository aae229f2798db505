"""A plain ``assert`` is a fact for what follows it, and is never removed.

``assert n >= 8, ...`` raises where ``n < 8``, so every statement after it runs
only where ``n >= 8``: the deciders read its condition as a fact there (where
facts are gathered: ``polypad.ir.stated``), never before it.  The assert itself
may raise, so it is never a no-op.

Every target runs a plain assert (tests/codegen/test_run_asserts.py), so answers
are checked by running the function as written (reference executor and Numba),
and by enumerating ``n`` at a small size.  ``checked`` writes each assert as a
``T.assume``, for the input maker only.
"""

from __future__ import annotations

import numpy as np
import pytest
from inputs_support import make_inputs
from overcompute_brute import everywhere

import analyses
import codegen
import polypad as pp
from analyses import Proved, Refuted, Unknown
from polypad import transform
from polypad.errors import AssertionFailedError
from polypad.ir import nodes as n
from polypad.ir.intrinsics import assume
from polypad.ir.show import show
from polypad.ir.visitor import Rewriter, walk

CHECK = 'assert n >= 8, ("ValueError", ["n"])'
GUARDED = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    {before}
    for i in range(8):
        if i < n:
            B[i] = A[i]
    {after}
'''
BEFORE = GUARDED.format(before=CHECK, after="T.evaluate(0)")
NONE = GUARDED.format(before="T.evaluate(0)", after="T.evaluate(0)")
AFTER = GUARDED.format(before="T.evaluate(0)", after=CHECK)


class _Checked(Rewriter):
    def visit_Assert(self, node: n.Assert) -> n.Stmt:
        return n.Evaluate(assume(node.condition), span=node.span)


def checked(f: n.PrimFunc) -> n.PrimFunc:
    """``f`` with each assert a checked ``T.assume`` (raises where false, as it does)."""
    return _Checked().visit(f)


def branch(f: n.PrimFunc) -> n.IfThenElse:
    (found,) = [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]
    return found


def args_at(f: n.PrimFunc, size: int, seed: int = 0) -> list:
    args = make_inputs(checked(f), np.random.default_rng(seed))
    return [np.int32(size), *args[1:]]


def results(kernel, args: list) -> list | str:
    """The buffers after ``kernel`` ran on copies of ``args``, or ``"raised"``."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        kernel(*copies)
    except AssertionFailedError:
        return "raised"
    return [a for a in copies if isinstance(a, np.ndarray)]


def same(x, y) -> bool:
    if isinstance(x, str) or isinstance(y, str):
        return x == y
    return all(np.array_equal(a, b) for a, b in zip(x, y, strict=True))


def test_a_conditional_removable_only_thanks_to_an_earlier_assert_is_removed():
    f = pp.parse(BEFORE)
    decided = analyses.can_remove_conditional(f, branch(f))
    assert isinstance(decided, Proved), decided
    g = transform.remove_branching_through_overcompute(f)
    pp.assert_structural_equal(g, pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    assert n >= 8, ("ValueError", ["n"])
    for i in range(8):
        B[i] = A[i]
    T.evaluate(0)
'''))
    for target in ("python", "numba"):
        before = codegen.build(f, target=target)
        after = codegen.build(g, target=target)
        for size in (8, 9, 1000):  # the assert holds
            args = args_at(f, size, seed=size)
            assert same(results(before, args), results(after, args)), (target, size)
        assert results(before, args_at(f, 3)) == results(after, args_at(f, 3)) == "raised"


def test_without_the_assert_it_is_refused_with_a_counterexample():
    f = pp.parse(NONE)
    decided = analyses.can_remove_conditional(f, branch(f))
    assert isinstance(decided, Refuted), decided
    size = decided.counterexample.params["n"]
    assert size < 8
    kernel = codegen.build(f, target="python")
    over = codegen.build(everywhere(f, branch(f)), target="python")
    args = args_at(f, size)
    assert not same(results(kernel, args), results(over, args))


def test_an_assert_after_the_conditional_does_not_help():
    f = pp.parse(AFTER)
    decided = analyses.can_remove_conditional(f, branch(f))
    assert isinstance(decided, Refuted), decided
    size = decided.counterexample.params["n"]
    assert size < 8
    # The stores ran before the check raised: run what precedes it.
    plain = pp.parse(NONE)
    kernel = codegen.build(plain, target="python")
    over = codegen.build(everywhere(plain, branch(plain)), target="python")
    args = args_at(plain, size)
    assert not same(results(kernel, args), results(over, args))


@pytest.mark.parametrize("text, holds", [(BEFORE, True), (NONE, False), (AFTER, False)])
def test_enumerating_n_agrees_with_the_answer(text, holds):
    f = pp.parse(text)
    decided = analyses.can_remove_conditional(f, branch(f))
    assert isinstance(decided, Proved) is holds, decided
    kernel = codegen.build(f, target="python")
    over = codegen.build(everywhere(f, branch(f)), target="python")
    stop = [i for i, s in enumerate(f.body.stmts) if isinstance(s, n.Assert)]
    differ = []
    for size in range(-1, 11):
        args = args_at(f, size, seed=size + 1)
        ours, theirs = results(kernel, args), results(over, args)
        if not same(ours, theirs):
            differ.append(size)
        elif ours == "raised" and stop and stop[0] > 0:
            # The check raised at the end: compare what ran before it.
            head = n.PrimFunc("f", f.params, n.SeqStmt(f.body.stmts[:stop[0]]))
            first = codegen.build(head, target="python")
            second = codegen.build(everywhere(head, branch(head)), target="python")
            if not same(results(first, args), results(second, args)):
                differ.append(size)
    if holds:
        assert differ == []
    else:
        assert differ == list(range(-1, 8))
        assert decided.counterexample.params["n"] in differ


def test_prove_and_bounds_read_the_assert_for_what_follows_it_only():
    f = pp.parse(BEFORE)
    size = f.params[0]
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    assert isinstance(analyses.prove(size >= 8, analyses.context_at(f, store)), Proved)
    late = pp.parse(AFTER)
    (store,) = [x for x in walk(late.body) if isinstance(x, n.BufferStore)]
    decided = analyses.prove(late.params[0] >= 8, analyses.context_at(late, store))
    assert isinstance(decided, Refuted) and decided.counterexample.params["n"] < 8
    copy = '''
@T.prim_func
def g(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    {check}
    for i in range(n):
        B[i] = A[i]
'''
    checked_copy = analyses.bounds_precondition(pp.parse(copy.format(
        check='assert n <= 8, ("ValueError", ["n"])')))
    assert isinstance(checked_copy.decision, Proved)
    assert checked_copy.condition == n.BoolImm(True)
    plain = analyses.bounds_precondition(pp.parse(copy.format(check="T.evaluate(0)")))
    assert show(plain.condition) == "n < 9"


def test_an_assert_is_never_a_no_op_and_no_pass_removes_or_moves_it():
    text = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    assert n >= 8, ("ValueError", ["n"])
    assert n >= 8, ("ValueError", ["n"])
    for i in range(n - 8):
        B[i] = A[i]
'''
    f = pp.parse(text)
    first, second = [x for x in walk(f.body) if isinstance(x, n.Assert)]
    decided = analyses.is_no_op(f, first)
    assert isinstance(decided, Refuted), decided
    assert decided.counterexample.params["n"] < 8
    assert "fails here and raises" in decided.counterexample.description
    # The second can no longer fail, but a check is kept all the same.
    decided = analyses.is_no_op(f, second)
    assert isinstance(decided, Unknown) and "never removes one" in decided.reason
    for rewrite in (transform.remove_no_op, transform.simplify):
        pp.assert_structural_equal(rewrite(f), f)
    # A primitive that reorders the loops after them keeps both, in place
    # (tests/schedule/test_assert_order.py has the moves across one refused).
    two = pp.parse(text.replace("for i in range(n - 8):", "for i, j in T.grid(n - 8, 1):"))
    sch = pp.Schedule(two)
    sch.reorder("j", "i")
    pp.assert_structural_equal(sch.func, pp.parse(text.replace(
        "for i in range(n - 8):", "for j, i in T.grid(1, n - 8):")))


def test_simplify_uses_an_assert_for_the_statements_after_it_in_its_sequence():
    f = pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if i < n:
            B[i] = A[i]
    assert n >= 8, ("ValueError", ["n"])
    for i in range(8):
        if i < n:
            B[i] = A[i] + 1.0
''')
    pp.assert_structural_equal(transform.simplify(f), pp.parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if i < n:
            B[i] = A[i]
    assert n >= 8, ("ValueError", ["n"])
    for i in range(8):
        B[i] = A[i] + 1.0
'''))
