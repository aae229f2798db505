"""The model's wrap checks see the function's top-level parameter assumptions
(:mod:`polypad.model.parameter_facts`), and only those: each leaf gets the facts of
the assumptions that run before it outside every loop and ``if``, over integer
parameters alone, in a form that cannot wrap.  The domains and relations are
isl's exact reading, not narrowed by them."""

import islpy as isl
import pytest

from polypad.errors import NotAffineError
from polypad.ir.naming import Names
from polypad.model import extract
from polypad.model.nest import collect
from polypad.model.parameter_facts import function_parameters, parameter_facts
from polypad.script import parse


def facts_of(text: str) -> list[isl.Set | None]:
    """Each leaf's facts (``None``: none)."""
    func = parse(text)
    leaves, _ = collect(func.body)
    return parameter_facts(leaves, function_parameters(func), Names())


def same(a: isl.Set | isl.Map | None, b: str) -> bool:
    """``a`` is the set or map written ``b``."""
    return a is not None and a.is_equal(type(a)(b))


ORDER = '''
@T.prim_func
def f(n: T.int8, m: T.int32, A: T.Buffer(("k",), "int32")):
    A[0] = 1
    T.assume(3 <= n and n <= 60 and A[1] == 0)
    A[1] = 2
    x = m + 1
    T.assume(x < 5 and k <= 10)
    A[2] = 3
    for i in T.serial(n):
        T.assume(m == 7)
        A[i] = 4
    if m > 0:
        T.assume(m == 9)
    A[3] = 5
'''


def test_each_leaf_has_the_facts_of_the_top_level_assumptions_before_it():
    f0, a0, f1, a1, f2, a2, f3, a3, f4 = facts_of(ORDER)
    assert f0 is None and a0 is None  # A[0] = 1 runs whether or not it holds
    # The buffer's value is left out; the let variable x too; the size k is a parameter.
    assert same(f1, "[n] -> { : 3 <= n <= 60 }") and a1 is f1
    for later in (f2, a2, f3, a3, f4):  # nothing from the loop's or the branch's
        assert same(later, "[n, k] -> { : 3 <= n <= 60 and k <= 10 }")


@pytest.mark.parametrize("fact", ["n + T.int8(1) <= n", "n * T.int8(2) < T.int8(0)",
                                  "T.Cast(\"int8\", m) == T.int8(1)"])
def test_a_fact_that_may_wrap_is_left_out(fact):
    text = f'''
@T.prim_func
def f(n: T.int8, m: T.int32, A: T.Buffer((4,), "int32")):
    T.assume({fact})
    A[0] = 1
'''
    assert facts_of(text) == [None, None]


def test_a_fact_may_rule_out_the_wrap_of_a_later_one():
    text = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((4,), "int32")):
    T.assume(n <= T.int8(60) and n + T.int8(10) < T.int8(65))
    A[0] = 1
'''
    first, second = facts_of(text)
    assert first is None and same(second, "[n] -> { : n <= 54 }")


GUARDED = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    {head}for i in T.serial(n):
        if i + T.int8(100) < n + T.int8(100):
            B[T.min(i + T.int8(2), T.int8(63))] = T.if_then_else(
                i * T.int8(2) < n, A[i], 0)
'''


def test_the_wrap_checks_of_indices_guards_and_selects_see_the_facts():
    with pytest.raises(NotAffineError, match="may wrap around its int8 range"):
        extract(parse(GUARDED.format(head="")))
    m = extract(parse(GUARDED.format(head="T.assume(0 <= n and n <= 20)\n    ")))
    s = m.statements[1]
    # The guard is kept (it cannot wrap for n <= 20), and the select's condition too;
    # neither the domain nor the relations are narrowed by the facts.
    assert not s.may and s.dropped_guards == ()
    assert same(s.domain, "[n] -> { S1[i] : 0 <= i < n }")
    write, read = s.accesses
    assert not read.may
    assert same(write.relation,
                "[n] -> { S1[i] -> B[o] : 0 <= i < n and o = min(i + 2, 63) }")
    assert same(read.relation, "[n] -> { S1[i] -> A[i] : 0 <= i < n and 2i < n }")
