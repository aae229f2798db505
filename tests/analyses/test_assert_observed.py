"""Where an assert fails, the caller sees the stores made before it.

So a store overwritten after an assert is not dead: the assert reads every
buffer the caller sees, as the end of the function does
(analyses/assert_order.py).  Before, ``is_no_op`` proved it dead and
``remove_no_op`` dropped it, leaving another value behind a failed assert.
"""

import numpy as np

import analyses
import codegen
from analyses import Element, Instance, Refuted, Unknown
from polypad import transform
from polypad.errors import AssertionFailedError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse

OVERWRITTEN = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32")):
    A[0] = 1.0
    assert n > 2, "n"
    A[0] = 2.0
""")


def test_a_store_overwritten_after_an_assert_is_not_a_no_op():
    first = next(x for x in walk(OVERWRITTEN.body) if isinstance(x, n.BufferStore))
    answer = analyses.is_no_op(OVERWRITTEN, first)
    assert isinstance(answer, Refuted), answer
    cex = answer.counterexample
    assert cex.instances == (Instance("S0", {}), Instance("S1", {}))
    assert cex.element == Element("A", (0,))
    assert "A[0] still holds it where the assert S1() fails and f stops" in cex.description
    assert_structural_equal(transform.remove_no_op(OVERWRITTEN), OVERWRITTEN)
    # What the caller sees where the assert fails: the first store's value.
    a = np.zeros(4, "float32")
    try:
        codegen.build(OVERWRITTEN, target="python")(0, a)
    except AssertionFailedError:
        pass
    assert a[0] == 1.0


def test_a_store_overwritten_before_the_assert_still_is():
    f = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((4,), "float32")):
    A[0] = 1.0
    A[0] = 2.0
    assert n > 2, "n"
""")
    first = next(x for x in walk(f.body) if isinstance(x, n.BufferStore))
    assert analyses.is_no_op(f, first)


def test_a_guard_around_an_assert_is_not_removed():
    f = parse("""
@T.prim_func
def f(n: T.int32, A: T.Buffer((12,), "float32")):
    for i in range(12):
        if i < 10:
            A[i] = A[i] + 0.0
            assert i < n, "i < n"
""")
    (guard,) = [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]
    answer = analyses.can_remove_conditional(f, guard)
    assert isinstance(answer, Unknown)
    assert answer.reason == ("the conditional holds an assert: removing the condition would "
                             "run a check that may raise where it did not run")
