"""is_no_op: the RFC's Remove No Op rules, the review's three no-op rules, and
random nests where every "no-op" is removed and the results compared."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from issue21_programs import ISSUE_21_IF_ELSE, issue_21_input
from structural_brute import random_args, random_program, removal_changes, trace

import analyses
import codegen
from analyses import Element, Instance, Proved, Refuted, Unknown
from polypad.errors import NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name):
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


def func(body: str, extra: str = ""):
    head = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")' \
        f"{extra}):\n"
    return parse(head + body)


def test_rfc_sum_init_is_a_write_of_the_known_value():
    f = load("remove_noop_sum_before")
    got = analyses.is_no_op(f, f.body.stmts[1])
    assert isinstance(got, Proved)
    assert got.detail.startswith("rule 3: it writes the value already there")


def test_store_overwritten_before_any_read():
    f = func("    B[0] = 1.0\n    B[0] = A[0]\n")
    got = analyses.is_no_op(f, f.body.stmts[0])
    assert isinstance(got, Proved) and got.method == "isl"
    assert got.detail == "rule 1: every value it writes is overwritten (by S1) before any read"


def test_store_read_by_the_next_one_is_not_a_no_op():
    f = func("    B[0] = 1.0\n    B[0] = B[0] + A[0]\n")
    got = analyses.is_no_op(f, f.body.stmts[0])
    assert isinstance(got, Refuted)
    cex = got.counterexample
    assert cex.instances == (Instance("S0", {}), Instance("S1", {}))
    assert cex.element == Element("B", (0,))
    assert cex.description.startswith("S0() writes B[0] and S1() reads it: rules 1 and 2 fail")
    assert "rule 3 fails" in cex.description and "B[0]" in cex.values


def test_rfc_block_overwritten_by_a_superset_block():
    f = func("""    with T.block("first"):
        for i in T.serial(4):
            B[2 * i] = A[i]
    with T.block("second"):
        for i in T.serial(8):
            B[i] = A[i] * 2.0
""")
    got = analyses.is_no_op(f, "first")
    assert isinstance(got, Proved)
    assert got.detail == "rule 1: every value it writes is overwritten (by second) before any read"
    # The second block's values are the function's output.
    later = analyses.is_no_op(f, "second")
    assert isinstance(later, Refuted)
    src, end = later.counterexample.instances
    assert end == Instance("END", {})
    assert later.counterexample.element == Element("B", (src.indices["i"],))


def test_write_to_local_memory_freed_unread():
    f = func("""    X = T.alloc_buffer((8,), "float32")
    for i in T.serial(8):
        X[i] = A[i]
    for i in T.serial(8):
        B[i] = X[i]
    X[0] = 5.0
""")
    last = f.body.body.stmts[2]
    got = analyses.is_no_op(f, last)
    assert got == Proved("isl", "rule 2: what it writes to local buffer X is freed unread")
    assert not analyses.is_no_op(f, f.body.body.stmts[0])


def test_local_buffer_in_a_loop_is_freed_each_iteration():
    f = func("""    for i in T.serial(8):
        X = T.alloc_buffer((1,), "float32")
        X[0] = A[i]
        if i > 0:
            B[i] = X[0]
""")
    inner = f.body.body.body.stmts[0]  # X[0] = A[i]
    assert not analyses.is_no_op(f, inner)
    g = func("""    for i in T.serial(8):
        X = T.alloc_buffer((1,), "float32")
        if i > 0:
            B[i] = X[0]
        X[0] = A[i]
""")
    store = g.body.body.body.stmts[1]
    assert analyses.is_no_op(g, store) == Proved(
        "isl", "rule 2: what it writes to local buffer X is freed unread")


def test_an_assumption_reading_the_value_keeps_the_store():
    f = func("    B[0] = 0.0\n    T.assume(B[0] == 0.0)\n    B[0] = A[0]\n")
    got = analyses.is_no_op(f, f.body.stmts[0])
    assert isinstance(got, Refuted)
    assert got.counterexample.instances == (Instance("S0", {}), Instance("S1", {}))


def test_statements_holding_an_assumption_are_unknown():
    f = func("    for i in T.serial(8):\n        T.assume(A[i] == 0.0)\n        B[i] = 1.0\n")
    got = analyses.is_no_op(f, f.body)
    assert isinstance(got, Unknown) and "T.assume" in got.reason


def test_rules_failing_at_different_instances_is_unknown():
    f = func("    for i in T.serial(8):\n        B[i] = A[i]\n    B[0] = 2.0\n")
    got = analyses.is_no_op(f, f.body.stmts[0])
    # B[0] is dead (rule 1) but B[1..7] reach the caller; rule 3's witness may
    # be i = 0, where the value is not read: no single instance breaks all rules.
    assert isinstance(got, Refuted | Unknown)
    if isinstance(got, Refuted):
        src, _ = got.counterexample.instances
        assert src.indices["i"] != 0


def test_data_dependent_write_that_is_dead():
    f = func("""    for i in T.serial(8):
        if A[i] > 0.0:
            B[i] = 1.0
    for i in T.serial(8):
        B[i] = 2.0
""")
    got = analyses.is_no_op(f, f.body.stmts[0])
    assert got == Proved("isl", "rule 1: every value it writes is overwritten (by S1) before "
                                "any read")


def test_statement_must_belong_to_the_function():
    f = func("    B[0] = 1.0\n")
    with pytest.raises(NotFoundError, match="not in function f"):
        analyses.is_no_op(f, func("    B[1] = 1.0\n").body)
    with pytest.raises(NotFoundError, match="no block 'nope'"):
        analyses.is_no_op(f, "nope")


# ---------------------------------------------------------------- random nests


def _escapes(record, name: str, params: set[str]) -> bool:
    """Whether a value some instance of ``name`` writes is read outside ``name`` or returned."""
    for k, (stmt, _) in enumerate(record.instances):
        if stmt != name:
            continue
        for element in record.writes[k]:
            killed = False
            for m in range(k + 1, len(record.instances)):
                if element in record.reads[m] and record.instances[m][0] != name:
                    return True
                if element in record.writes[m]:
                    killed = True
                    break
            if not killed and element[0] in params:
                return True
    return False


def _outputs(f, seed):
    args = random_args(f, seed)
    codegen.build(f, target="python")(*args)
    return args


@settings(max_examples=100, deadline=None)
@given(random_program(local=True))
def test_random_no_ops_can_be_removed(text):
    f = parse(text)
    record = trace(f, random_args(f, 0))
    params = {p.name for p in f.params if isinstance(p, n.Buffer)}
    for s in extract(f).statements:
        got = analyses.is_no_op(f, s.stmt)
        dead = not _escapes(record, s.name, params)
        if dead:
            # Rule 1 or 2 (isl) -- or rule 3 first, for an update adding 0 (z3).
            assert isinstance(got, Proved), (text, s.name, got)
        if isinstance(got, Proved) and got.method == "isl":
            assert dead, (text, s.name, got)
        if isinstance(got, Proved):
            removed = replace(f, s.stmt, n.Evaluate(n.IntImm(0)))
            assert not any(x is s.stmt for x in walk(removed.body))
            for seed in range(3):
                for want, have in zip(_outputs(f, seed), _outputs(removed, seed), strict=True):
                    np.testing.assert_array_equal(have, want)


# ---------------------------------------------------------------- one instance is not all


CANCELLING = '''
@T.prim_func
def f(A: T.Buffer(({k},), "float32"), D: T.Buffer((1,), "float32")):
    for j in T.serial({k}):
        T.assume(A[j] == {step} or j == {k} - 1)
    T.assume(A[{k} - 1] == -{total})
    for j in T.serial({k}):
        D[0] = D[0] + A[j]
'''


@pytest.mark.parametrize(("k", "step"), [(2, 1.0), (3, 0.5), (5, 2.0)])
def test_instances_that_cancel_are_not_refuted_one_at_a_time(k, step):
    # Each instance changes D[0], but together they add 0: the last one, whose value the
    # caller reads, replaces a value earlier instances wrote, so it decides nothing alone.
    f = parse(CANCELLING.format(k=k, step=step, total=step * (k - 1)))
    loop = f.body.stmts[2]
    decided = analyses.is_no_op(f, loop)
    assert isinstance(decided, Unknown)
    a = np.array([step] * (k - 1) + [-step * (k - 1)], "float32")
    d = np.array([3.0], "float32")
    for g in (f, replace(f, loop, n.SeqStmt(()))):
        out = d.copy()
        codegen.build(g, target="python")(a.copy(), out)
        np.testing.assert_array_equal(out, d)  # removing the loop changes nothing


@pytest.mark.parametrize("k", [1, 4, 7])
def test_instances_on_their_own_elements_are_refuted(k):
    # Each instance writes its own element; the one refuted is read by the caller, and no
    # earlier instance touched what it reads.
    f = parse(f'''
@T.prim_func
def f(A: T.Buffer(({k},), "float32"), B: T.Buffer(({k},), "float32")):
    for j in T.serial({k}):
        B[j] = B[j] + A[j] * A[j] + 1.0
''')
    decided = analyses.is_no_op(f, f.body)
    assert isinstance(decided, Refuted)
    src, end = decided.counterexample.instances
    assert end == Instance("END", {})
    assert decided.counterexample.element == Element("B", (src.indices["j"],))


# ---------------------------------------------------------------- issue 21: isl's dataflow


def _int_inputs(f, count):
    rng = np.random.default_rng(21)
    return [[rng.integers(-5, 6, size=6).astype("int32")] for _ in range(count)]


def test_issue_21_the_else_branch_is_read_later():
    # ISL's compute_flow lost S2(l=1, m=1) -> S4(l=1) (A[2]), so rule 1 "held" for the
    # whole if/else and remove_no_op deleted it: A[2] ended 0 instead of 1.
    f = parse(ISSUE_21_IF_ELSE)
    branch = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse))
    got = analyses.is_no_op(f, branch)
    # No instance alone decides it (the value S2 replaces may come from the branch
    # itself); the branch removed and run on concrete inputs does.
    assert isinstance(got, Refuted), got
    cex = got.counterexample
    assert cex.description.startswith("S2(l=5, m=1) writes A[2] and A[2] still holds it "
                                      "when f returns (the caller reads it): rules 1 and 2 "
                                      "fail")
    assert "removing the statement leaves A[" in cex.description
    ran = [np.array(cex.values["input A"], "int32")]
    assert removal_changes(f, branch, [ran]) == [ran]
    issue_input = issue_21_input()
    assert removal_changes(f, branch, [issue_input]) == [issue_input]
    assert not isinstance(analyses.is_no_op(f, branch.else_case), Proved)


def test_issue_21_every_proof_survives_brute_force():
    f = parse(ISSUE_21_IF_ELSE)
    inputs = _int_inputs(f, 40) + [issue_21_input()]
    proved = []
    for stmt in walk(f.body):
        if isinstance(stmt, (n.BufferStore, n.IfThenElse, n.For)):
            got = analyses.is_no_op(f, stmt)
            if isinstance(got, Proved):
                proved.append(stmt)
                assert removal_changes(f, stmt, inputs) == [], (stmt, got)
    # The then branch, A[0] = 0 at l = 0 and 3, is overwritten by A[(l + 1) % 4 // 2]
    # (rule 1) before anything reads it.
    assert [type(s).__name__ for s in proved] == ["BufferStore"]
    assert proved[0].value == n.IntImm(0) and len(proved[0].indices) == 1


def test_an_isl_error_inside_is_no_op_answers_unknown(monkeypatch):
    import islpy as isl

    import analyses.no_op as no_op

    def failing(f):
        raise isl.Error("call to isl_point_get_coordinate_val failed: void point")

    f = func("    B[0] = 1.0\n    B[0] = A[0]\n")
    monkeypatch.setattr(no_op, "extract", failing)
    got = analyses.is_no_op(f, f.body.stmts[1])
    assert got == Unknown("is_no_op could not decide: ISL failed (call to "
                          "isl_point_get_coordinate_val failed: void point)")
