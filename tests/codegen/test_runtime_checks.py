"""Assumptions and bounds at build and run time: the build refuses a proved
out-of-bounds access; ``check_assumptions`` and ``boundscheck`` turn a broken
promise or a bad data-dependent index into polypad's error, on both targets."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from codegen_support import copy

import analyses
import codegen
from analyses import Element, Instance, Proved, Unknown
from polypad.errors import (
    AssumptionError,
    BoundsCheckError,
    BuildError,
    ExecutionError,
    OutOfBoundsError,
)
from polypad.script import parse, script

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"
TARGETS = ["numba", "python"]
numba = pytest.mark.numba

SCALAR = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8,), "float32")):
    T.assume(0 <= n and n < 8)
    for i in T.serial(4):
        A[i + 4] = A[i] + T.float32(n)
''')

PER_ELEMENT = parse('''
@T.prim_func
def g(A: T.Buffer((8,), "float32")):
    for i in T.parallel(4):
        T.assume(A[i] == 0.0)
        A[i + 4] = 1.0
''')

GATHER = parse('''
@T.prim_func
def gather(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"),
           C: T.Buffer((4,), "float32")):
    for i in T.parallel(4):
        C[i] = A[B[i]] * 2.0
''')


def decorators(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {f.name: ast.unparse(f.decorator_list[0]) for f in tree.body
            if isinstance(f, ast.FunctionDef)}


# ---------------------------------------------------------------- refusing at build


@pytest.mark.parametrize("target", TARGETS)
def test_build_refuses_a_proved_out_of_bounds_store(target):
    f = parse('''
@T.prim_func
def f(A: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        A[i + 1] = 1.0
''')
    with pytest.raises(OutOfBoundsError) as info:
        codegen.build(f, target=target)
    assert isinstance(info.value, BuildError)
    cex = info.value.evidence
    assert cex.instances == (Instance("S0", {"i": 9}),) and cex.element == Element("A", (10,))
    assert str(info.value) == (
        "cannot build 'f': store to A[i + 1] at <string>:5 is outside the shape (10,) of A; "
        "instances: S0(i=9); element: A[10]")


@pytest.mark.parametrize("stem", ["overcompute_conv1d_after", "branching_conv1d_before"])
def test_rfc_overcompute_that_reads_past_a_is_refused(stem):
    path = EXAMPLES / f"{stem}.py"
    f = parse(path.read_text(), filename=str(path))
    for target in TARGETS:
        with pytest.raises(OutOfBoundsError, match=r"load of A\[io \+ \(ii \+ f\) // 4") as info:
            codegen.build(f, target=target)
        assert info.value.evidence.element == Element("A", (4, 0))
        assert info.value.evidence.instances == (Instance("compute", {"io": 3, "ii": 2,
                                                                       "f": 2}),)


def test_symbolic_extents_are_checked_at_each_call_until_an_assumption_relates_them():
    text = '''
@T.prim_func
def copy(n: T.int32, m: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((m,), "float32")):
    {assume}
    for i in T.serial(m):
        B[i] = A[i]
'''
    kernel = codegen.build(parse(text.format(assume="pass")), target="python")
    assert script(kernel.precondition) == "n >= m"
    a, b = np.arange(5, dtype="float32"), np.zeros(6, "float32")
    with pytest.raises(OutOfBoundsError, match=r"copy\(n=5, m=6\): .* only where n >= m"):
        kernel(5, 6, a, b)
    assert not b.any()
    kernel = codegen.build(parse(text.format(assume="T.assume(m <= n)")), target="python")
    assert isinstance(kernel.bounds, Proved) and script(kernel.precondition) == "True"
    b = np.zeros(3, "float32")
    kernel(5, 3, a, b)
    np.testing.assert_array_equal(b, [0, 1, 2])
    # The promise the proof used is checked: m = 6 > n = 5 is refused before any access.
    with pytest.raises(AssumptionError, match=r"T.assume\(m <= n\) is false .*: m = 6, n = 5"):
        kernel(5, 6, a, np.zeros(6, "float32"))


def test_kernel_bounds_tells_what_the_build_could_not_decide():
    assert isinstance(codegen.build(SCALAR, target="python").bounds, Proved)
    bounds = codegen.build(GATHER, target="python").bounds
    assert isinstance(bounds, Unknown) and "A[B[i]]" in bounds.reason


# ---------------------------------------------------------------- assumptions at run time


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_a_false_scalar_assumption_names_itself_and_the_value(target):
    kernel = codegen.build(SCALAR, target=target, check_assumptions=True)
    with pytest.raises(AssumptionError) as info:
        kernel(20, np.zeros(8, "float32"))
    assert str(info.value) == "T.assume(0 <= n < 8) is false in 'f' at <string>:4: n = 20"
    assert info.value.values == {"n": 20}
    assert info.value.assumption is SCALAR.body.stmts[0].value.args[0]
    assert isinstance(info.value, ExecutionError)


@numba
def test_unchecked_numba_kernel_runs_the_broken_promise_silently():
    kernel = codegen.build(SCALAR)
    assert "assume" not in kernel.source and "AssertionError" not in kernel.source
    a = np.zeros(8, "float32")
    kernel(20, a)
    np.testing.assert_array_equal(a[4:], 20.0)


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_assumption_in_a_loop_is_checked_per_instance(target):
    a = np.zeros(8, "float32")
    a[2] = 1.5
    kernel = codegen.build(PER_ELEMENT, target=target, check_assumptions=True)
    with pytest.raises(AssumptionError) as info:
        kernel(a)
    assert str(info.value) == ("T.assume(A[i] == 0.0) is false in 'g' at <string>:5: "
                               "i = 2, A[2] = 1.5")
    assert info.value.values == {"i": 2, "A[2]": 1.5}
    # Both targets stop at the same instance: i = 0 and 1 ran, i = 2 did not store.
    np.testing.assert_array_equal(a, [0, 0, 1.5, 0, 1, 1, 0, 0])


@numba
def test_kept_promises_give_the_same_result_as_the_unchecked_kernel():
    checked = codegen.build(PER_ELEMENT, check_assumptions=True)
    # Numba cannot raise from a parallel region: the checked loop runs serially.
    assert "numba.prange" not in checked.source and "parallel" not in checked.source
    assert "numba.prange" in codegen.build(PER_ELEMENT).source
    want, got, reference = np.zeros(8, "float32"), np.zeros(8, "float32"), np.zeros(8, "float32")
    codegen.build(PER_ELEMENT)(want)
    checked(got)
    codegen.build(PER_ELEMENT, target="python")(reference)
    np.testing.assert_array_equal(want, [0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(reference, want)


def test_the_emitted_check():
    source = codegen.build(SCALAR, check_assumptions=True).source
    assert ("    if not (0 <= n and n < 8):\n"
            "        raise AssertionError('polypad.assume', 0, n)\n") in source


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_checks_in_vectorized_unrolled_and_let_scopes(target):
    f = parse('''
@T.prim_func
def h(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.unroll(4):
        for j in T.vectorized(4):
            T.assume(A[i, j] >= 0.0)
            A[i, j] = A[i, j] * 2.0
    x = B[0]
    T.assume(x > 0.0)
    B[1] = x
''')
    kernel = codegen.build(f, target=target, check_assumptions=True)
    a = np.ones((4, 4), "float32")
    a[2, 3] = -1.0
    with pytest.raises(AssumptionError) as info:
        kernel(a, np.ones(4, "float32"))
    assert info.value.values == {"i": 2, "j": 3, "A[2, 3]": -1.0}
    with pytest.raises(AssumptionError) as info:
        kernel(np.ones((4, 4), "float32"), np.full(4, -3.0, "float32"))
    assert str(info.value).endswith("T.assume(x > 0.0) is false in 'h' at <string>:9: x = -3.0")


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_an_assumption_with_undef_is_not_checked(target):
    f = parse('''
@T.prim_func
def p(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        T.assume(i < 14 or A[i] == T.undef())
        B[i] = A[i] + 1.0
''')
    kernel = codegen.build(f, target=target, check_assumptions=True)
    assert not any(analyses_calls(kernel.func, "assume"))
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    kernel(a, b)
    np.testing.assert_array_equal(b, a + 1)


def analyses_calls(func, op):
    from polypad.ir.nodes import Call
    from polypad.ir.visitor import walk

    return [x for x in walk(func) if isinstance(x, Call) and x.op == op]


def test_lowering_keeps_checkable_assumptions_only_when_asked():
    assert codegen.CHECKED_PIPELINE[1:] == codegen.PIPELINE[1:]
    assert not analyses_calls(codegen.lower(PER_ELEMENT), "assume")
    assert len(analyses_calls(codegen.lower(PER_ELEMENT, check_assumptions=True),
                              "assume")) == 1


# ---------------------------------------------------------------- data-dependent indices


@numba
@pytest.mark.parametrize("target", TARGETS)
def test_boundscheck_catches_a_bad_data_dependent_index(target):
    kernel = codegen.build(GATHER, target=target, boundscheck=True)
    a, c = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    with pytest.raises(BoundsCheckError) as info:
        kernel(a, np.array([0, 1, 9, 2], "int32"), c)
    assert isinstance(info.value, IndexError) and isinstance(info.value, ExecutionError)
    # The undecided access is checked by polypad's own test, before Numba's: the same
    # message as the reference executor's.
    assert str(info.value) == ("load of A[9] is outside its shape (4,) in 'gather' "
                               "at <string>:6 (as written: A[B[i]])")


@numba
def test_boundscheck_kernel_agrees_on_good_indices():
    kernel = codegen.build(GATHER, boundscheck=True)
    flags = decorators(kernel.source)
    assert "boundscheck=True" in flags["kernel"] and "parallel" not in flags["kernel"]
    assert "boundscheck" not in decorators(codegen.build(GATHER).source)["kernel"]
    args = [np.arange(4, dtype="float32"), np.array([3, 1, 0, 2], "int32"),
            np.zeros(4, "float32")]
    got, want = copy(args), copy(args)
    kernel(*got)
    codegen.build(GATHER, target="python")(*want)
    np.testing.assert_array_equal(got[2], [6, 2, 0, 4])
    np.testing.assert_array_equal(got[2], want[2])


def test_boundscheck_reaches_vectorized_helpers():
    f = parse('''
@T.prim_func
def v(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        for j in T.vectorized(4):
            A[i, B[j]] = 1.0
''')
    flags = decorators(codegen.build(f, boundscheck=True, fastmath="full").source)
    assert "boundscheck=True" in flags["_pp_vector_0"]
    flags = decorators(codegen.build(f, fastmath="full").source)
    assert "boundscheck=False" in flags["_pp_vector_0"]
    # Written in place under the other modes: the kernel's own flag covers it (the
    # helpers that check the undecided accesses index no buffer).
    flags = decorators(codegen.build(f, boundscheck=True).source)
    assert {name: flag for name, flag in flags.items() if not name.startswith("_pp_index_")} == {
        "kernel": "numba.njit(cache=True, fastmath={'contract'}, boundscheck=True, "
                  "error_model='numpy')"}


def test_the_decider_is_exported():
    assert analyses.check_bounds is analyses.bounds.check_bounds


def test_polypad_check_reports_and_polypad_build_refuses(tmp_path, capsys):
    from polypad.cli import main

    path = tmp_path / "oob.py"
    path.write_text('''from polypad import T


@T.prim_func
def f(A: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        A[i + 1] = 1.0
''')
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert (f"bounds: refuted: store to A[i + 1] at {path}:7 is outside the shape (10,) of A; "
            "instances: S0(i=9); element: A[10]\n") in out
    assert main(["build", str(path)]) == 1
    assert "cannot build 'f': store to A[i + 1]" in capsys.readouterr().err
