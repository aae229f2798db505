"""A ``T.assume`` reads what its condition loads: dependences order it with the writes
of those elements, and a value proof stops using its fact once one is written.

The random programs are two loops over ``i``: one holds an assumption that
reads ``A``, the other writes ``A``, each value written only once (``100 *
k + i``).  The assumption says ``A[idx] == V[i]``, where ``V`` holds what
the original run sees there, so it is true in the original and false
wherever a rewrite changes which write it sees; the reference executor
checks it (``fuzz_support.compare``).
"""

import islpy as isl
import pytest
from fuzz_primitives import check_primitives
from fuzz_programs import Draws, guarded_store, index_expr
from fuzz_support import Case, Report, check_passes, compare, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structural_brute import Trace, random_args
from structural_brute import _Tracer as StoreTracer

import analyses
import codegen
from analyses import Element, Instance, Proved, Refuted
from analyses.reductions import reduction_dependences
from polypad.errors import AssumptionError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.schedule import Schedule
from polypad.script import parse
from polypad.transform import simplify

# ---------------------------------------------------------------- the reproducer


def test_merging_past_a_write_of_what_an_assumption_reads_is_refuted():
    # Issue 21: merging was "proved" legal, and the merged function stated its
    # assumption after the store that changed A[0].
    f = parse("""
@T.prim_func
def f(A: T.Buffer((6,), "float32")):
    for i in T.serial(6):
        T.assume(not (i // 2 == 1) or A[i // 4] == 0.0)
    for j in T.serial(6):
        A[j] = T.Cast("float32", j + 1)
""")
    got = analyses.can_merge_loops(f, "i", "j")
    assert isinstance(got, Refuted), got
    cex = got.counterexample
    assert cex.instances == (Instance("S0", {"i": 1}), Instance("S1", {"j": 0}))
    assert cex.element == Element("A", (0,))
    assert "RFC condition 2" in cex.description
    assert "S0(i=1) reads A[0] before S1(j=0) overwrites it" in cex.description


def test_reassociating_keeps_an_assumption_between_the_updates_it_reads():
    text = """
@T.prim_func
def f(A: T.Buffer((4, 8), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        B[i] = 0
        for k in T.serial(8):
            B[i] = B[i] + A[i, k]
            T.assume(k < 3 or B[i] >= 0)
"""
    deps = reduction_dependences(parse(text))
    found = deps.violations(isl.UnionMap(
        "{ S0[i] -> [i, 0, 0, 0]; S1[i, k] -> [i, 1, 7 - k, 0]; S2[i, k] -> [i, 1, 7 - k, 1] }"))
    assert found is not None
    assert found.instances == (Instance("S1", {"i": 0, "k": 0}),
                               Instance("S2", {"i": 0, "k": 1}))
    assert found.element == Element("B", (0,))
    # After the whole sum the assumption sees the same total in any order.
    after = text.replace("            T.assume(k < 3 or B[i] >= 0)",
                         "        T.assume(B[i] >= 0)")
    deps = reduction_dependences(parse(after))
    assert deps.violations(isl.UnionMap(
        "{ S0[i] -> [i, 0, 0]; S1[i, k] -> [i, 1, 7 - k]; S2[i] -> [i, 2, 0] }")) is None


# ---------------------------------------------------------------- facts end at a write


def _if(f: n.PrimFunc, k: int = 0) -> n.IfThenElse:
    return [s for s in walk(f.body) if isinstance(s, n.IfThenElse)][k]


def test_a_write_after_an_assumption_ends_its_fact():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.assume(A[0] == 0.0)
    A[0] = 1.0
    if A[0] == 0.0:
        B[0] = 1.0
""")
    got = analyses.can_remove_conditional(f, _if(f))
    assert isinstance(got, Refuted), got
    assert got.counterexample.element == Element("B", (0,))
    # The store's value is what holds now: the condition is false.
    assert_structural_equal(simplify(f), parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.assume(A[0] == 0.0)
    A[0] = 1.0
"""))


def test_a_later_iterations_write_ends_an_earlier_iterations_fact():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(i > 0 or A[0] == 0.0)
        if A[0] == 0.0:
            B[i] = 1.0
        A[0] = 1.0
""")
    got = analyses.can_remove_conditional(f, _if(f))
    assert isinstance(got, Refuted), got
    assert got.counterexample.element == Element("B", (1,))
    assert simplify(f) is f


def test_a_fact_about_an_element_no_loop_wrote_still_holds():
    f = parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(A[i] == 0.0)
    for j in T.serial(3):
        A[j] = 1.0
    if A[2] == 0.0:
        B[0] = 1.0
    if A[3] == 0.0:
        B[1] = 1.0
""")
    assert isinstance(analyses.can_remove_conditional(f, _if(f, 0)), Refuted)
    assert isinstance(analyses.can_remove_conditional(f, _if(f, 1)), Proved)
    assert_structural_equal(simplify(f), parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(A[i] == 0.0)
    for j in T.serial(3):
        A[j] = 1.0
    B[1] = 1.0
"""))


# ---------------------------------------------------------------- random programs


@st.composite
def assume_beside_writer(draw) -> tuple[str, str]:
    """Two loops over ``i``: an assumption on ``A`` beside stores to ``A``, in either
    order; and the same text with the assumption replaced by a store of what it reads
    into ``V`` (run once to fill ``V``)."""
    c = Draws(draw)
    extent = c.integer(1, 6)
    idx = index_expr(c, "i")
    short = c.choice([None, "i % 2 == 0", "i > 1", "i < 2"])
    fact = f"A[{idx}] == V[i]" if short is None else f"{short} or A[{idx}] == V[i]"
    facts, records = [f"T.assume({fact})"], [f"V[i] = A[{idx}]"]
    if not idx.lstrip("-").isdigit():
        guard = f"if 0 <= {idx} and {idx} < 8:"
        facts, records = [guard, "    " + facts[0]], [guard, "    " + records[0]]
    writes = []
    for k in range(c.integer(1, 2)):
        w = index_expr(c, "i")
        store = f'A[{w}] = T.Cast("float32", i) + {100.0 * (k + 1)}'
        writes += [store] if w.lstrip("-").isdigit() else [
            f"if 0 <= {w} and {w} < 8:", f"    {store}"]
    other = guarded_store(c, "i", ("A", "B")) if c.boolean() else []
    beside_fact = c.boolean()
    fact_body = facts + (other if beside_fact else [])
    write_body = writes + ([] if beside_fact else other)
    record_body = records + (other if beside_fact else [])
    fact_first = c.boolean()

    def text(first_body, second_body) -> str:
        lines = ["@T.prim_func",
                 'def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), '
                 'V: T.Buffer((8,), "float32")):']
        for body in (first_body, second_body):
            lines += [f"    for i in T.serial({extent}):"] + [f"        {x}" for x in body]
        return "\n".join(lines) + "\n"

    if fact_first:
        return text(fact_body, write_body), text(record_body, write_body)
    return text(write_body, fact_body), text(write_body, record_body)


def _case(text: str, record: str) -> Case:
    """``text``'s function with inputs whose ``V`` holds what each assumption reads."""
    func, recorder = parse(text), parse(record)
    inputs = []
    for seed in range(3):
        args = random_args(func, seed)
        args[2] = run(recorder, args)[2]
        inputs.append(args)
    return Case(text, func, inputs, [run(func, args) for args in inputs], range(0))


class _Tracer(StoreTracer):
    """Records assumption instances too, with every load of the condition read (the
    model's convention: a load under ``or`` counts at every instance)."""

    def exec(self, stmt):
        if isinstance(stmt, n.Evaluate):
            s = self.statements[id(stmt)]
            self.record.instances.append((s.name, tuple(int(self.env[v])
                                                        for v in s.loop_vars)))
            self.record.reads.append({
                (x.buffer.name, tuple(int(self.eval(i)) for i in x.indices))
                for x in walk(stmt.value) if isinstance(x, n.BufferLoad)})
            self.record.writes.append(set())
        super().exec(stmt)


def _conflicts(f: n.PrimFunc, args: list) -> set:
    """The RFC's two conditions by brute force: (x in the first loop at i, y in the
    second at j < i, element) where one writes what the other reads or writes."""
    model = extract(f)
    first, second = f.body.stmts
    in_a = {s.name for s in model.statements if s.loops[0] is first}
    in_b = {s.name for s in model.statements if s.loops[0] is second}
    record = Trace()
    _Tracer(f, record).run([a.copy() for a in args])
    out = set()
    for x, (sx, (i,)) in enumerate(record.instances):
        for y, (sy, (j,)) in enumerate(record.instances):
            if sx in in_a and sy in in_b and j < i:
                wa, ra = record.writes[x], record.reads[x]
                shared = (wa & (record.reads[y] | record.writes[y])) | (ra & record.writes[y])
                out |= {((sx, i), (sy, j), e) for e in shared}
    return out


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(assume_beside_writer())
def test_random_merges_beside_assumptions_agree_with_running_the_merged_function(texts):
    case = _case(*texts)
    f = case.func
    got = analyses.can_merge_loops(f, "i", "i")
    conflicts = _conflicts(f, case.inputs[0])
    if not conflicts:
        assert isinstance(got, Proved), (case.text, got)
    if isinstance(got, Proved):
        sch = Schedule(f)
        sch.merge_adjacent_loops("i", "i")
        report = Report()
        compare(case, sch.func, "merge_adjacent_loops", report)
        report.assert_clean(case.text)
        return
    assert isinstance(got, Refuted), (case.text, got)
    src, dst = got.counterexample.instances
    element = got.counterexample.element
    key = ((src.statement, src.indices["i"]), (dst.statement, dst.indices["i"]),
           (element.buffer, element.indices))
    assert key in conflicts, (case.text, got)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(assume_beside_writer(), st.data())
def test_primitives_and_passes_keep_assumptions_true(texts, data):
    case = _case(*texts)
    report = Report()
    check_primitives(case, report, Draws(data.draw),
                     names=("merge_adjacent_loops", "distribute", "reorder_by_map", "split",
                            "parallel", "vectorize", "unroll", "sequential_buffer_access"))
    check_passes(case, report)
    report.assert_clean(case.text)


def test_the_recorded_inputs_make_every_assumption_true():
    # The generator's premise: the original runs (the executor checks the assumption),
    # and V one off makes it fail.
    text = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), V: T.Buffer((8,), "float32")):
    for i in T.serial(4):
        A[i + 1] = T.Cast("float32", i) + 100.0
    for i in T.serial(4):
        T.assume(A[i] == V[i])
"""
    case = _case(text, text.replace("T.assume(A[i] == V[i])", "V[i] = A[i]"))
    assert case.inputs[0][2][1:4].tolist() == [100.0, 101.0, 102.0]
    bad = [a.copy() for a in case.inputs[0]]
    bad[2][1] += 1.0
    with pytest.raises(AssumptionError, match=r"A\[i\] == V\[i\]"):
        codegen.build(case.func, target="python")(*bad)
