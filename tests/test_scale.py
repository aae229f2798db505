"""Scale without crashing (issue 10): a 10,000-term expression and a 64-deep loop
nest parse, print, analyse, build and run -- or fail with a PolypadError that
says why, never with RecursionError.  See :mod:`polypad.ir.deep`."""

from __future__ import annotations

import sys

import islpy as isl
import numpy as np
import pytest

import analyses
import codegen
import polypad as pp
from analyses import dataflow
from codegen.numba.compiler import compile_kernel
from codegen.numba.emit import emit
from polypad.errors import PolypadError, TooDeepError
from polypad.ir import deep, deep_worker
from polypad.ir import nodes as n
from polypad.model import extract

TERMS = 10_000
DEPTH = 64


def long_sum_text(terms: int) -> str:
    body = " + ".join(["A[i]"] * terms)
    return ("@T.prim_func\n"
            'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'
            "    for i in T.serial(4):\n"
            f"        B[i] = {body}\n")


def left_sum(a: np.ndarray, terms: int) -> np.ndarray:
    """``a + a + ... + a`` in float32, rounded after every addition, left to right."""
    acc = a.copy()
    for _ in range(terms - 1):
        acc = (acc + a).astype(np.float32)
    return acc


def nest_text(depth: int) -> str:
    """Loops of extent 2 every 8 levels (256 instances) and 1 elsewhere; one parallel."""
    lines = ["@T.prim_func",
             'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):']
    for k in range(depth):
        kind = "T.parallel" if k == 1 else "T.serial"
        lines.append("    " * (k + 1) + f"for i{k} in {kind}({2 if k % 8 == 0 else 1}):")
    last = f"i{depth - 1}"
    lines.append("    " * (depth + 1)
                 + f"A[i0 + {last}] = A[i0 + {last}] + B[i8 + i{depth // 2}]")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def long_sum() -> n.PrimFunc:
    return pp.parse(long_sum_text(TERMS))


@pytest.fixture(scope="module")
def nest() -> n.PrimFunc:
    return pp.parse(nest_text(DEPTH))


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.random(4, dtype=np.float32), np.zeros(4, np.float32)


# ---------------------------------------------------------------- 10,000 terms


def test_a_long_sum_parses_prints_and_round_trips(long_sum):
    store = long_sum.body.body
    assert isinstance(store, n.BufferStore) and store.value.dtype == "float32"
    depth, e = 0, store.value
    while isinstance(e, n.Add):
        depth, e = depth + 1, e.a
    assert depth == TERMS - 1  # left-nested, as Python reads it
    text = pp.script(long_sum)
    assert text.count("A[i]") == TERMS
    pp.assert_structural_equal(pp.parse(text), long_sum)
    pp.verify(long_sum)


def test_a_long_sum_hashes_compares_and_shows_like_a_short_one(long_sum):
    value = long_sum.body.body.value
    load = value.b
    again = load
    for _ in range(TERMS - 1):
        again = n.Add(again, load)
    same = value == again  # a node-by-node comparison, not the same object
    assert value is not again and same and hash(value) == hash(again)
    assert repr(value).count("BufferLoad") == TERMS


def test_a_long_sum_is_modelled_and_analysed(long_sum):
    (statement,) = extract(long_sum).statements
    reads = [a for a in statement.accesses if a.kind == "read"]
    assert len(reads) == TERMS
    touched = analyses.domain_touched(long_sum, "A")
    assert touched.exact and touched.set.is_equal(isl.Set("{ A[e0] : 0 <= e0 <= 3 }"))
    deps = analyses.dependences(long_sum)
    assert deps.flow.is_empty() and deps.anti.is_empty() and deps.output.is_empty()
    assert not deps.live_out.is_empty()


def test_a_long_sum_runs_in_the_reference_executor_and_in_numba(long_sum):
    lowered = codegen.lower(long_sum, check_assumptions=True)
    a, b = inputs()
    codegen.interpreter.run(lowered, a, b)
    np.testing.assert_array_equal(b, left_sum(a, TERMS))

    source = emit(codegen.lower(long_sum))
    # Pieces of at most SPLIT levels, each computed by a helper the same shape
    # as the others, so Numba compiles a few small functions.
    assert max(len(line) for line in source.splitlines()) < 1000
    assert source.count("def _pp_part_") <= 3
    kernel = compile_kernel(long_sum, source)
    got = np.zeros(4, np.float32)
    kernel(a, got)
    np.testing.assert_array_equal(got, b)


def test_a_long_sum_builds_for_both_targets(long_sum):
    a, b = inputs()
    codegen.build(long_sum, target="python")(a, b)
    np.testing.assert_array_equal(b, left_sum(a, TERMS))
    got = np.zeros(4, np.float32)
    codegen.build(long_sum)(a, got)
    np.testing.assert_array_equal(got, b)


# ---------------------------------------------------------------- too deep


def test_what_python_cannot_parse_is_a_parse_error_at_the_statement(monkeypatch):
    monkeypatch.setattr(deep_worker, "DEEP_RECURSION_LIMIT", 2000)  # Python's parser: ~6000 levels
    with pytest.raises(pp.ParseError, match="nested too deeply for Python's parser") as err:
        pp.parse(long_sum_text(TERMS), filename="sum.py")
    assert (err.value.filename, err.value.lineno, err.value.col) == ("sum.py", 4, 9)
    assert not isinstance(err.value, RecursionError)


def test_what_polypad_cannot_walk_is_a_parse_error_at_the_statement(monkeypatch):
    monkeypatch.setattr(deep_worker, "DEEP_RECURSION_LIMIT", 4000)  # 12,000 parser levels
    with pytest.raises(pp.ParseError, match="nested too deeply") as err:
        pp.parse(long_sum_text(6000))
    assert err.value.lineno == 4 and "Python's parser" not in err.value.message


def test_a_tree_too_deep_for_a_worker_is_a_too_deep_error(long_sum, monkeypatch):
    monkeypatch.setattr(deep_worker, "DEEP_RECURSION_LIMIT", 3000)
    with pytest.raises(TooDeepError, match="nested too deeply") as err:
        pp.script(long_sum)
    assert isinstance(err.value, PolypadError)
    assert sys.getrecursionlimit() < 3000  # raised only while the worker ran


def test_the_worker_sees_the_callers_budget():
    from polypad import budget

    with budget.within(123.0):
        left = deep.run_deep(budget.remaining)
    assert 100 < left <= 123


# ---------------------------------------------------------------- long expressions in Numba


def test_long_branches_stay_lazy_and_floats_keep_their_order():
    # The deep branches read A[i + 2], outside A for i >= 2: they must run only
    # where the condition holds.  The right-nested sum must not be re-associated.
    deep_load = " + ".join(["A[i + 2]"] * 60)
    nested = "A[i]"
    for k in range(60):
        nested = f"A[{k % 4}] * {float(k + 1)} + ({nested})"
    f = pp.parse(f'''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
      C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = T.if_then_else(i < 2, {deep_load}, A[i])
        C[i] = T.if_then_else(i < 2 and {deep_load} > 1.0, 1.0, 2.0)
        D[i] = T.let(x, {nested}, x * x)
''')
    kernel = codegen.build(f, boundscheck=True)
    assert "if i < 2:" in kernel.source  # the Select became an if statement
    rng = np.random.default_rng(3)
    a = (rng.random(4) * 10.0 ** rng.integers(-3, 4, 4)).astype(np.float32)
    got = [a, *(np.zeros(4, np.float32) for _ in range(3))]
    want = [a, *(np.zeros(4, np.float32) for _ in range(3))]
    kernel(*got)
    codegen.build(f, target="python")(*want)
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------- 64-deep nests


def test_a_deep_nest_round_trips_and_has_its_dependences(nest):
    pp.assert_structural_equal(pp.parse(pp.script(nest)), nest)
    deps = analyses.dependences(nest)
    assert not deps.flow.is_empty()  # A[i0 + i63] is read after an earlier write


@pytest.mark.numba
def test_a_deep_nest_builds_past_pythons_20_nested_loops(nest):
    kernel = codegen.build(nest)
    assert "def _pp_nest_" in kernel.source and "numba.prange" in kernel.source
    a, b = np.zeros(4, np.float32), np.arange(4, dtype=np.float32)
    want = a.copy()
    kernel(a, b)
    codegen.build(nest, target="python")(want, b)
    np.testing.assert_array_equal(a, want)
    assert a[0] == 128 * (b[0] + b[1])  # every instance ran once


def test_remove_no_op_computes_the_dataflow_once_per_function(monkeypatch):
    made = []
    real = dataflow._Flows

    def counting(model, assumes, *restriction):
        made.append(model.func)
        return real(model, assumes, *restriction)

    monkeypatch.setattr(dataflow, "_Flows", counting)
    f = pp.parse(nest_text(12).replace("T.parallel", "T.serial"))
    assert pp.transform.remove_no_op(f) is f  # every store is read later
    # Not once per candidate statement: the first question gets the dataflow of
    # the few statements it is about, every later one the whole function's, once.
    assert len(made) <= 2
