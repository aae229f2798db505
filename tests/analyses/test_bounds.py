"""check_bounds: every access inside its buffer, decided by ISL with a counterexample,
against hand-worked answers and against the accesses a run really makes."""

from __future__ import annotations

import pytest
from bounds_support import bad_accesses
from hypothesis import given, settings
from hypothesis import strategies as st

import analyses
from analyses import Counterexample, Element, Instance, Proved, Refuted, Unknown
from polypad.errors import NotFoundError, PolypadError
from polypad.script import parse


def bounds(text: str):
    return analyses.check_bounds(parse(text))


def refuted(text: str) -> Counterexample:
    decided = bounds(text)
    assert isinstance(decided, Refuted), decided
    return decided.counterexample


# ---------------------------------------------------------------- hand-worked answers


def test_in_bounds_is_proved_by_isl():
    decided = bounds('''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        B[i] = A[9 - i] * 2.0
''')
    assert isinstance(decided, Proved) and decided.method == "isl"
    assert "2 accesses" in decided.detail


def test_store_past_the_end_names_instance_and_element():
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        A[i + 1] = 1.0
''')
    assert cex.instances == (Instance("S0", {"i": 9}),)
    assert cex.element == Element("A", (10,))
    assert cex.params == {}
    assert cex.description == "store to A[i + 1] at <string>:5 is outside the shape (10,) of A"


def test_load_before_the_start_is_the_first_bad_instance():
    cex = refuted('''
@T.prim_func
def shift(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = A[i - 1] + 1.0
''')
    assert cex.instances == (Instance("S0", {"i": 0}),)
    assert cex.element == Element("A", (-1,))
    assert cex.description.startswith("load of A[i - 1]")


def test_padding_guard_proves_a_split_loop():
    body = '''
@T.prim_func
def f(A: T.Buffer((14,), "float32")):
    for io, ii in T.grid(4, 4):
{stmt}
'''
    assert bounds(body.format(stmt="        if 4 * io + ii < 14:\n"
                                   "            A[4 * io + ii] = 0.0"))
    cex = refuted(body.format(stmt="        A[4 * io + ii] = 0.0"))
    assert cex.instances == (Instance("S0", {"io": 3, "ii": 2}),)
    assert cex.element == Element("A", (14,))


def test_two_dimensional_overcompute_from_the_rfc():
    # RFC 0077's overcompute example reads A[4, _] of a (4, 4) buffer.
    cex = refuted('''
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
''')
    assert cex.instances == (Instance("compute", {"io": 3, "ii": 2, "f": 2}),)
    assert cex.element == Element("A", (4, 0))


def test_symbolic_shape_with_its_own_extent_is_proved():
    assert bounds('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        B[i] = A[i]
''')


def test_symbolic_shape_past_the_end_names_the_parameter():
    cex = refuted('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        A[i + 1] = 0.0
''')
    n = cex.params["n"]
    assert n >= 1  # an extent is never negative
    assert cex.instances == (Instance("S0", {"i": n - 1}),)
    assert cex.element == Element("A", (n,))


def test_two_extents_need_an_assumption():
    text = '''
@T.prim_func
def f(n: T.int32, m: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((m,), "float32")):
    {assume}
    for i in T.serial(m):
        B[i] = A[i]
'''
    cex = refuted(text.format(assume="pass"))
    assert cex.params["m"] > cex.params["n"] >= 0
    assert cex.element == Element("A", (cex.params["n"],))
    assert bounds(text.format(assume="T.assume(m <= n)"))


def test_scalar_assumption_bounds_an_index():
    text = '''
@T.prim_func
def f(k: T.int32, A: T.Buffer((8,), "float32")):
    {assume}
    A[k] = 1.0
'''
    cex = refuted(text.format(assume="pass"))
    assert not 0 <= cex.params["k"] < 8
    assert bounds(text.format(assume="T.assume(0 <= k and k < 8)"))


def test_an_assumption_counts_only_after_it_ran():
    cex = refuted('''
@T.prim_func
def f(k: T.int32, A: T.Buffer((8,), "float32")):
    A[k] = 1.0
    T.assume(0 <= k and k < 8)
''')
    assert not 0 <= cex.params["k"] < 8


def test_short_circuit_and_select_guard_their_loads():
    assert bounds('''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        if i < 9 and A[i + 1] > 0.0:
            B[i] = T.if_then_else(i > 0, A[i - 1], 0.0)
        if i == 0 or A[i - 1] > 0.0:
            B[i] = 1.0
''')
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        if A[i + 1] > 0.0 and i < 9:
            B[i] = 1.0
''')
    assert cex.instances == (Instance("if", {"i": 9}),)
    assert cex.element == Element("A", (10,))


def test_load_in_a_loop_bound_and_in_a_let():
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4, 4), "int32")):
    for i in T.serial(4):
        for j in T.serial(A[i + 1]):
            B[i, 0] = 1
''')
    assert cex.instances == (Instance("for j", {"i": 3}),)
    assert cex.element == Element("A", (4,))
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        x = A[3 - i - 1]
        B[i] = x
''')
    assert cex.instances == (Instance("let x", {"i": 3}),)
    assert cex.element == Element("A", (-1,))


def test_assumption_that_reads_outside_its_buffer():
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(5):
        T.assume(A[i] == 0.0)
''')
    assert cex.element == Element("A", (4,))


def test_allocated_buffer():
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    X = T.alloc_buffer((3,), "float32")
    for i in T.serial(4):
        X[i] = A[i]
''')
    assert cex.element == Element("X", (3,))


def test_data_dependent_index_is_unknown_naming_the_expression():
    decided = bounds('''
@T.prim_func
def gather(A: T.Buffer((10,), "float32"), B: T.Buffer((4,), "int32"),
           C: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        C[i] = A[B[i]]
''')
    assert isinstance(decided, Unknown)
    assert "load of A[B[i]] at <string>:6" in decided.reason
    assert "B[i] is not quasi-affine" in decided.reason


def test_an_out_of_bounds_access_wins_over_an_unknown_one():
    cex = refuted('''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        A[B[i]] = 1.0
        A[i + 7] = 2.0
''')
    assert cex.element == Element("A", (10,))


def test_behind_a_data_dependent_guard_it_is_unknown_not_refuted():
    decided = bounds('''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        if B[i] > 0.0:
            A[i + 1] = 1.0
''')
    assert isinstance(decided, Unknown)
    assert "element" in decided.reason and "A[10]" in decided.reason
    assert "unless B[i] > 0.0" in decided.reason


def test_an_index_that_wraps_is_read_as_executed():
    # Exactly, i * 65536 * 65536 leaves A for i >= 1; executed in int32 it is 0.
    decided = bounds('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i * 65536 * 65536] = 1.0
''')
    assert isinstance(decided, Proved), decided
    # Exactly 2**32 + 2 * i; executed 2 * i, which leaves A at i = 2.
    text = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[2147483647 + i + 2147483647 + 2 + i] = 1.0
'''
    cex = refuted(text)
    assert cex.instances == (Instance("S0", {"i": 2}),)
    assert cex.element == Element("A", (4,))
    assert [e for _, e in bad_accesses(parse(text))] == [("A", (4,)), ("A", (6,))]


def test_not_a_function_is_refused():
    with pytest.raises(PolypadError, match="takes a PrimFunc, not str"):
        analyses.check_bounds("f")


# ---------------------------------------------------------------- against a run


@st.composite
def affine_nests(draw) -> str:
    """One or two loops, a store and a load at random affine indices, maybe a guard,
    over a buffer of constant or symbolic size."""
    symbolic = draw(st.booleans())
    size = "n" if symbolic else str(draw(st.integers(1, 6)))
    extents = [draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 2)))]
    names = ["i", "j"][:len(extents)]

    def index() -> str:
        terms = [f"{draw(st.sampled_from([0, 0, 1, 1, -1, 2]))} * {v}" for v in names]
        return " + ".join([*terms, str(draw(st.integers(-1, 3)))])

    lines = [f"for {v} in T.serial({e}):" for v, e in zip(names, extents, strict=True)]
    lines = [" " * 4 * k + line for k, line in enumerate(lines)]
    indent = " " * 4 * len(lines)
    guard = draw(st.sampled_from([None, f"{names[0]} < 3", f"{index()} >= 0"]))
    store = f"A[{index()}] = B[{index()}] + 1.0"
    if guard is not None:
        lines += [f"{indent}if {guard}:", f"{indent}    {store}"]
    else:
        lines.append(f"{indent}{store}")
    assume = draw(st.sampled_from([None, "n <= 4", "3 <= n"])) if symbolic else None
    head = "n: T.int32, " if symbolic else ""
    body = "\n".join("    " + line for line in lines)
    prefix = f"    T.assume({assume})\n" if assume else ""
    return (f"@T.prim_func\ndef f({head}A: T.Buffer(({size},), \"float32\"), "
            f"B: T.Buffer(({size},), \"float32\")):\n{prefix}{body}\n")


@settings(max_examples=150, deadline=None)
@given(affine_nests())
def test_decisions_agree_with_the_accesses_of_a_run(text):
    func = parse(text)
    decided = analyses.check_bounds(func)
    assert not isinstance(decided, Unknown), decided
    if isinstance(decided, Refuted):
        # The counterexample is an access that really happens, outside its buffer.
        cex = decided.counterexample
        bad = bad_accesses(func, **cex.params)
        element = (cex.element.buffer, cex.element.indices)
        assert any(e == element and cex.instances[0].indices.items() <= env.items()
                   for env, e in bad), (cex, bad)
        return
    sizes = range(0, 9) if "n: T.int32" in text else [None]
    for n in sizes:
        scalars = {} if n is None else {"n": n}
        if n is not None and not _assumption_holds(text, n):
            continue
        assert bad_accesses(func, **scalars) == [], (text, n)


def _assumption_holds(text: str, n: int) -> bool:
    if "T.assume(" not in text:
        return True
    cond = text.split("T.assume(")[1].split(")\n")[0]
    return eval(cond, {"n": n})  # "n <= 4" or "3 <= n", written by the strategy above


# ---------------------------------------------------------------- within one statement


_TWO_LOOPS = '''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        A[i + 1] = 1.0
    for j in T.serial(10):
        if j < 9:
            B[j + 1] = A[j]
'''


def test_within_checks_only_the_statements_inside_it():
    f = parse(_TWO_LOOPS)
    first, second = f.body.stmts
    whole = analyses.check_bounds(f)
    assert isinstance(whole, Refuted) and whole.counterexample.element == Element("A", (10,))
    inside = analyses.check_bounds(f, within=second)
    assert isinstance(inside, Proved) and "2 accesses" in inside.detail
    # In its context: the guard `j < 9` still keeps B[j + 1] inside.
    assert isinstance(analyses.check_bounds(f, within=second.body.then_case), Proved)
    alone = analyses.check_bounds(f, within=first)
    assert alone.counterexample == whole.counterexample


def test_within_must_be_a_statement_of_the_function():
    f, g = parse(_TWO_LOOPS), parse(_TWO_LOOPS)
    with pytest.raises(NotFoundError, match="not in f"):
        analyses.check_bounds(f, within=g.body.stmts[1])
    with pytest.raises(PolypadError, match="within"):
        analyses.check_bounds(f, within="j")


def test_the_evidence_names_a_statement_after_an_assert_as_the_model_does():
    # The model counts a plain assert as a statement (S0 here): the store to A[n] is S2.
    from polypad.model import extract

    f = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32")):
    assert n > 0, "n > 0"
    A[0] = 1.0
    A[n] = 2.0
''')
    assert [s.name for s in extract(f).statements] == ["S0", "S1", "S2"]
    r = analyses.check_bounds(f)
    assert isinstance(r, Refuted)
    assert r.counterexample.instances == (Instance("S2", {}),)
    found = analyses.bounds_precondition(f).violation({f.params[0]: 9})
    assert found.instances == (Instance("S2", {}),)
