"""Soundness: on random small programs, prove() never says Proved where brute force
finds a violation, and an ISL counterexample is a real failing instance.

Each program has an assumption loop over A (``cond or A[i, j] == k``), a
padding-like stage storing into A under a condition, a few later writes
(constants, ``T.undef()``, inside or outside loops), and a target nest
reading A; all after the assumption, or just the stage, may run under
``if A[0, 0] >= 0``.
The question is a random affine condition, a value claim about an element
of A or a let, or "this store writes the value already there".
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prover_brute_force import violations

import polypad as pp
from analyses import Proved, Refuted, context_at, prove
from analyses.stored_value import stores_existing_value
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

PARAMS = {"n": range(-1, 4)}


@st.composite
def affine(draw, names=("i", "j", "n")) -> str:
    terms = [f"{draw(st.integers(-3, 4))} * {v}" for v in names if draw(st.booleans())]
    lhs = " + ".join(terms) or "0"
    if draw(st.integers(0, 3)) == 0:
        lhs = f"({lhs}) {draw(st.sampled_from(['//', '%']))} {draw(st.integers(2, 4))}"
    op = draw(st.sampled_from(["<", "<=", ">=", "==", "!="]))
    return f"{lhs} {op} {draw(st.integers(-4, 9))}"


@st.composite
def condition(draw, names=("i", "j", "n")) -> str:
    a, b = draw(affine(names)), draw(affine(names))
    return draw(st.sampled_from([a, f"{a} and {b}", f"{a} or {b}", f"not ({a})"]))


@st.composite
def element(draw, extents) -> str:
    n0, n1 = extents
    return draw(st.sampled_from([
        "i, j", f"(i + 1) % {n0}, j", f"i, (j + {draw(st.integers(1, 3))}) % {n1}",
        f"{draw(st.integers(0, n0 - 1))}, {draw(st.integers(0, n1 - 1))}"]))


@st.composite
def program(draw) -> tuple[str, str]:
    """Script text, and which question to ask ("index", "value" or "stored")."""
    n0, n1 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = st.sampled_from(["0", "1", "-1", "i - j"])
    lines = ["T.assume(0 <= n and n < 3)"]
    if draw(st.booleans()):
        lines += [f"for i, j in T.grid({n0}, {n1}):",
                  f"    T.assume({draw(condition())} or A[i, j] == {draw(k)})"]
    # Optionally everything after the assumption runs under a condition on
    # data ("all"), or only the padding-like stage does ("stage").
    guarded = draw(st.sampled_from([None, "all", "stage"]))
    head = len(lines) + 1 if guarded == "all" else None
    test = f"if A[0, 0] {draw(st.sampled_from(['>=', '<', '==']))} 0:"
    if guarded == "all":
        lines.append(test)
    if draw(st.booleans()):
        stage = [f"for i, j in T.grid({n0}, {n1}):",
                 f"    if {draw(condition())}:", f"        A[i, j] = {draw(k)}"]
        lines += [test, *("    " + line for line in stage)] if guarded == "stage" else stage
    for _ in range(draw(st.integers(0, 2))):
        value = draw(st.sampled_from(["0", "2", "T.undef()", "A[0, 0]"]))
        at = f"{draw(st.integers(0, n0 - 1))}, {draw(st.integers(0, n1 - 1))}"
        lines.append(f"A[{at}] = {value}")
    if draw(st.integers(0, 3)) == 0:  # a write the model can only widen
        lines += [f"for i, j in T.grid({n0}, {n1}):", f"    A[i * j % {n0}, j] = 1"]
    lines += [f"for i, j in T.grid({n0}, {n1}):"]
    if draw(st.booleans()):
        lines.append(f"    A[{draw(element((n0, n1)))}] = {draw(k)}")
    has_let = draw(st.booleans())
    if has_let:
        lines.append("    v = A[0, 0]")
    lines += [f"    if {draw(condition())}:",
              f"        B[i, j] = A[{draw(element((n0, n1)))}]",
              f"    C[0] = T.if_then_else({draw(question(n0, n1, has_let))}, 1, 0)",
              f"    C[1] = T.if_then_else({draw(condition())}, 1, 0)"]
    if head is not None:
        lines[head:] = ["    " + line for line in lines[head:]]
    body = "\n".join("    " + line for line in lines)
    text = (f'@T.prim_func\ndef f(A: T.Buffer(({n0}, {n1}), "int32"), '
            f'B: T.Buffer(({n0}, {n1}), "int32"), C: T.Buffer((2,), "int32"), n: T.int32):\n'
            ) + body + "\n"
    return text, draw(st.sampled_from(["index", "value", "stored"]))


@st.composite
def question(draw, n0, n1, has_let) -> str:
    at = draw(element((n0, n1)))
    lets = ["v == A[0, 0]", f"v == {draw(st.integers(-1, 1))}"] if has_let else []
    return draw(st.sampled_from([
        draw(condition()), f"A[{at}] == {draw(st.integers(-1, 2))}", *lets,
        f"{draw(condition())} or A[{at}] == 0", f"A[{at}] + B[i, j] == B[i, j]"]))


def _parts(f):
    stores = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    target = next(s for s in stores if s.buffer.name == "B")
    q, where = (s.value.condition for s in stores if s.buffer.name == "C")
    branch = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse)
                  and x.then_case is target)
    return stores, target, branch, q, where


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program(), st.booleans(), st.booleans())
def test_proved_is_never_contradicted_by_execution(case, at_branch, narrow):
    text, kind = case
    f = pp.parse(text)
    stores, target, branch, q, where = _parts(f)
    point = branch if at_branch else target
    if kind == "stored":
        candidates = [s for s in stores if s.buffer.name == "A"
                      and not (isinstance(s.value, n.Call) and s.value.op == "undef")]
        if not candidates:
            return
        store = candidates[len(text) % len(candidates)]
        decided = stores_existing_value(f, store)
        if isinstance(decided, Proved):
            current = n.BufferLoad(store.buffer, store.indices)
            assert violations(current.equal(store.value), f, store, params=PARAMS) == [], text
        return
    ctx = context_at(f, point)
    condition = where if narrow else None
    if condition is not None:
        ctx = ctx.with_condition(condition)
    decided = prove(q, ctx)
    found = violations(q, f, point, where=condition, params=PARAMS, samples=4)
    if isinstance(decided, Proved):
        assert found == [], (text, decided, found[:3])
    if isinstance(decided, Refuted) and not decided.counterexample.values \
            and not ctx.premises:
        # An index question where every input reaches every instance: the
        # counterexample's point is a real failing instance.
        ce = decided.counterexample
        expected = {**ce.instances[0].indices, **ce.params}
        assert any(expected.items() <= seen.items() for seen in found), (text, decided)


OUTSIDE_FOR_LARGE_N = pp.parse("""
@T.prim_func
def f(A: T.Buffer((8,), "int32"), C: T.Buffer((1,), "int32"), n: T.int32):
    for i in T.serial(n, n + 2):
        A[i] = 1
    C[0] = T.if_then_else(n < 3, 1, 0)
""")


def test_brute_force_discards_inputs_the_function_is_not_defined_for():
    # The fuzz's edge shapes try n near 2**31 - 1: there the loop's range leaves int32
    # (LoopRangeError) and, below that, A[n] leaves A (BoundsCheckError, outside the
    # kernel's precondition n <= 6).  Neither input is one the claim is about; the
    # brute force ended the whole fuzz run on them.
    f = OUTSIDE_FOR_LARGE_N
    probe = f.body.stmts[-1]
    claim = probe.value.condition
    assert violations(claim, f, probe, params={"n": [2**31 - 1, 100, 2]}, samples=1) == []
    found = violations(claim, f, probe, params={"n": [2**31 - 1, 100, 5]}, samples=1)
    assert found == [{"n": 5}]
