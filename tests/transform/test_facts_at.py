"""``facts_at``: what holds at a statement, checked against enumerating the points.

At the store inside ``for i, j: if i + j < 6: ... else: x = i * 2; B[...] = ...``
a condition is True where every (i, j) reaching the store satisfies it, False where
none does, None otherwise; each answer is compared with the points themselves.
"""

from __future__ import annotations

import itertools

import pytest

from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.script import parse
from polypad.transform.facts_at import facts_at

F = parse('''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in T.serial(1, 4):
        for j in T.serial(5):
            if i + j < 6:
                A[i, j] = T.float32(0)
            else:
                x: T.int32 = i * 2
                B[i, x - j] = T.float32(1)
''')
STORE = next(x for x in walk(F.body) if isinstance(x, n.BufferStore) and x.buffer.name == "B")
I, J = (x.var for x in walk(F.body) if isinstance(x, n.For))
X = next(x.var for x in walk(F.body) if isinstance(x, n.LetStmt))
POINTS = [(i, j) for i, j in itertools.product(range(1, 4), range(5)) if not i + j < 6]


@pytest.mark.parametrize(("cond", "holds"), [
    (n.Ge(n.Add(I, J), n.IntImm(6, "int32")), lambda i, j: i + j >= 6),
    # The store runs at (2, 4), (3, 3) and (3, 4).
    (n.Eq(I, n.IntImm(1, "int32")), lambda i, j: i == 1),        # never: 1 + 4 < 6
    (n.Lt(J, n.IntImm(3, "int32")), lambda i, j: j < 3),         # never
    (n.Lt(J, n.IntImm(4, "int32")), lambda i, j: j < 4),         # at (3, 3) only
    (n.Ge(X, n.Add(J, n.IntImm(2, "int32"))), lambda i, j: 2 * i >= j + 2),  # the let
    (n.Lt(n.Mul(n.Mul(I, n.IntImm(0, "int32")), n.IntImm(8, "int32")),
          n.IntImm(1, "int32")), lambda i, j: True),             # 0 * 8 < 1: folded
])
def test_decide_agrees_with_the_points(cond, holds):
    answers = {holds(i, j) for i, j in POINTS}
    want = answers.pop() if len(answers) == 1 else None
    assert facts_at(F, STORE).decide(cond) is want


def test_simplified_drops_a_guard_that_always_holds_and_keeps_the_rest():
    always = n.IfThenElse(n.Ge(X, n.IntImm(4, "int32")), STORE)      # i >= 2 here
    sometimes = n.IfThenElse(n.Lt(J, n.IntImm(4, "int32")), STORE)
    never = n.IfThenElse(n.Eq(I, n.IntImm(1, "int32")), STORE)
    facts = facts_at(F, STORE)
    assert facts.simplified(always) is STORE
    kept = facts.simplified(sometimes)
    assert kept.condition is sometimes.condition
    # Under j < 4 too, only (i, j) = (3, 3) is left: x - j is 3 there.
    assert kept.then_case.indices == (I, n.IntImm(3, "int32"))
    assert facts.simplified(never) is None
