"""``Schedule.sequential_buffer_access`` on RFC 0077's examples: the loops, the trace,
the refusal, and kernels that compute what the originals compute."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codegen
from analyses import Counterexample, Element, Instance
from polypad.errors import AssumptionError, IllegalTransformError, NotFoundError, PolypadError
from polypad.ir import nodes as ir
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.model import extract
from polypad.schedule import Schedule
from polypad.schedule.sequential import Step, next_step
from polypad.script import parse

EXAMPLES = Path(__file__).parents[1] / "examples" / "rfc0077"


def load(name: str) -> ir.PrimFunc:
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


def sequential(name: str, block: str | None, buffer: str) -> Schedule:
    sch = Schedule(load(name))
    sch.sequential_buffer_access(block, buffer)
    verify(sch.func)
    return sch


def derived(name: str, block: str | None, buffer: str) -> Schedule:
    """The steps ``sequential_buffer_access`` takes, applied one by one so that the
    trace records each (the utility itself is recorded as one call)."""
    sch = Schedule(load(name))
    for _ in range(3):
        step = next_step(sch.func, block, buffer)
        if step is None:
            break
        getattr(sch, step.primitive)(**step.args)
        if step.primitive == "reorder_by_map":
            break
    return sch


@functools.cache
def conv1d(option: str) -> ir.PrimFunc:
    """conv1d_transformed, or its loops following B (option 1) or A (option 2)."""
    if option == "transformed":
        return load("conv1d_transformed")
    buffer = {"option1": "B", "option2": "A"}[option]
    return sequential("conv1d_transformed", "compute", buffer).func


@functools.cache
def kernel(option: str, target: str):
    # Strict IEEE: compared with the reference closely, a fused a * b + c would differ.
    return codegen.build(conv1d(option), target=target, fastmath=None)


def random_inputs(func: ir.PrimFunc, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-20, 20, p.shape).astype(p.dtype) for p in func.params]


# ---------------------------------------------------------------- the RFC's loops


@pytest.mark.parametrize("size", [14, 16])
def test_rfc_sequential_access(size):
    sch = sequential(f"sequential_access_{size}_transformed", "compute", "A")
    assert_structural_equal(sch.func, load(f"sequential_access_{size}_after"))
    assert str(sch.trace) == "sch.sequential_buffer_access(block='compute', buffer='A')"
    steps = derived(f"sequential_access_{size}_transformed", "compute", "A")
    assert str(steps.trace) == (
        "sch.reorder_by_map(block='compute', band='{ compute[i] -> [(floor((i)/4)), "
        "((i) mod 4)] }', names=('io', 'ii'))")
    assert_structural_equal(steps.func, sch.func)


@pytest.mark.parametrize("size", [14, 16])
def test_after_transform_layout_as_the_rfc_calls_it(size):
    sch = Schedule(load(f"sequential_access_{size}_before"))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4])
    sch.sequential_buffer_access("compute", "A")
    assert_structural_equal(sch.func, load(f"sequential_access_{size}_after"))
    assert [step.primitive for step in sch.trace] == ["transform_layout",
                                                      "sequential_buffer_access"]
    replayed = sch.trace.apply_to(load(f"sequential_access_{size}_before"))
    assert_structural_equal(replayed.func, sch.func)


def test_conv1d_option1_follows_b_as_the_rfc_writes_it():
    assert_structural_equal(conv1d("option1"), load("conv1d_option1"))


def test_conv1d_option2_splits_out_the_initialisation():
    got = conv1d("option2")
    # The RFC's text, with the guard as ISL writes it; the two guards are the same set.
    ours = "f >= 4 * io + ii - 13 and 4 * io + ii >= f"
    rfc = "0 <= 4 * io + ii - f < 14"
    text = (EXAMPLES / "conv1d_option2.py").read_text()
    assert_structural_equal(got, parse(text.replace(rfc, ours)))
    both = extract(parse(f'''
@T.prim_func
def f(X: T.Buffer((2,), "int32")):
    for io, ii, f in T.grid(4, 4, 3):
        if {ours}:
            X[0] = 0
        if {rfc}:
            X[1] = 0
'''))
    first, second = (s.domain for s in both.statements)
    assert first.is_equal(second.set_tuple_name("S0"))


def test_conv1d_option2_trace_prints_and_replays():
    sch = sequential("conv1d_transformed", "compute", "A")
    assert str(sch.trace) == "sch.sequential_buffer_access(block='compute', buffer='A')"
    assert str(derived("conv1d_transformed", "compute", "A").trace).splitlines() == [
        "sch.distribute(block='compute', statements=('compute_0',), "
        "new_block='init_compute', position='before')",
        "sch.reorder_by_map(block='compute', band='{ compute[i, f] -> "
        "[(floor((i + f)/4)), ((i + f) mod 4)] }', names=('io', 'ii'))",
    ]
    replayed = sch.trace.apply_to(load("conv1d_transformed"))
    assert_structural_equal(replayed.func, sch.func)
    assert str(replayed.trace) == str(sch.trace)


@pytest.mark.parametrize("option", ["option1", "option2"])
@pytest.mark.parametrize("target", ["python", pytest.param("numba", marks=pytest.mark.numba)])
def test_conv1d_options_compute_what_the_original_computes(option, target):
    for seed in range(3):
        inputs = random_inputs(conv1d("transformed"), seed)
        want = [a.copy() for a in inputs]
        got = [a.copy() for a in inputs]
        kernel("transformed", target)(*want)
        kernel(option, target)(*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)


def test_conv1d_cumsum_is_refused_with_the_broken_dependence():
    sch = Schedule(load("conv1d_cumsum_transformed"))
    with pytest.raises(IllegalTransformError) as info:
        sch.sequential_buffer_access("compute", "A")
    evidence = info.value.evidence
    assert isinstance(evidence, Counterexample)
    # compute_2 (the accumulation at i = 0, last tap) writes B[0, 0]; compute_1 (the
    # else branch at i = 1) reads it: splitting the initialisation out would run
    # compute_1 first.  The names are those of the refused step's arguments.
    assert evidence.instances == (Instance("compute_2", {"i": 0, "f": 2}),
                                  Instance("compute_1", {"i": 1}))
    assert evidence.element == Element("B", (0, 0))
    assert evidence.description.startswith("flow dependence: compute_1(i=1) reads B[0, 0]")
    assert "distribute" in str(info.value)
    # The step refused is the RFC's illegal intermediate: both initialisations split out.
    assert next_step(sch.func, "compute", "A") == Step("distribute", {
        "block": "compute", "statements": ("compute_0", "compute_1"),
        "new_block": "init_compute", "position": "before"})
    assert len(sch.trace) == 0
    assert_structural_equal(sch.func, load("conv1d_cumsum_transformed"))


# ---------------------------------------------------------------- the other RFC sections


@pytest.mark.parametrize("before, buffer, after", [
    ("internal_buffer_transformed", "A_local", "internal_buffer_sequential"),
    ("multi_semantics_transform_b", "A", "multi_semantics_sequential"),
])
def test_whole_function_examples(before, buffer, after):
    sch = sequential(before, None, buffer)
    assert_structural_equal(sch.func, load(after))
    assert_structural_equal(sch.trace.apply_to(load(before)).func, sch.func)


def test_elementwise_keeps_the_assumption_the_rfc_leaves_out():
    sch = sequential("elementwise_transform_b", None, "B")
    text = (EXAMPLES / "elementwise_sequential.py").read_text().replace(
        '"int32"]):\n', '"int32"]):\n'
        "    for io, ii in T.grid(4, 4):\n"
        "        T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())\n\n", 1)
    assert_structural_equal(sch.func, parse(text))


def test_overcompute_conv1d_leaves_the_padding_loop():
    sch = sequential("overcompute_conv1d_transform_b", "compute", "B")
    # The RFC writes the guard `0 <= 4 * io + ii < 14`; `0 <=` holds for any io, ii here.
    text = (EXAMPLES / "overcompute_conv1d_sequential.py").read_text()
    assert_structural_equal(sch.func, parse(text.replace("0 <= 4 * io", "4 * io")))


@pytest.mark.parametrize("name, block, buffer", [
    ("conv1d_option1", "compute", "B"),
    ("sequential_access_14_after", "compute", "A"),
    ("internal_buffer_sequential", None, "A_local"),
    ("multi_semantics_sequential", None, "A"),
])
def test_sequential_loops_are_left_alone(name, block, buffer):
    sch = sequential(name, block, buffer)
    assert [step.primitive for step in sch.trace] == ["sequential_buffer_access"]
    assert len(derived(name, block, buffer).trace) == 0
    assert_structural_equal(sch.func, load(name))


def test_symbolic_extent_runs_every_size():
    # Without the assumption B[i] would read past B for n > 32, and build would refuse it.
    # ISL's (n - 1) // 4 + 1 wraps at n = -2**31 (to 536870912 iterations of io where the
    # original ran none): it is computed in int64 (polypad/schedule/exact_bounds.py).
    func = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8, 4), "int32"), B: T.Buffer((32,), "int32")):
    T.assume(n <= 32)
    for i in T.serial(n):
        A[i // 4, i % 4] = B[i] + i
''')
    sch = Schedule(func)
    sch.sequential_buffer_access(None, "A")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((8, 4), "int32"), B: T.Buffer((32,), "int32")):
    T.assume(n <= 32)
    for io in T.serial(T.Cast("int32", (T.Cast("int64", n) - 1) // 4 + 1)):
        for ii in T.serial(T.min(n, 4)):
            if 4 * io + ii < n:
                A[io, ii] = B[4 * io + ii] + (4 * io + ii)
'''))
    for size in (0, 1, 6, 14, 32):
        want = [np.zeros((8, 4), "int32"), np.arange(32, dtype="int32")]
        got = [a.copy() for a in want]
        codegen.build(func, target="python")(size, *want)
        codegen.build(sch.func, target="python")(size, *got)
        np.testing.assert_array_equal(got[0], want[0])
    for f in (func, sch.func):
        with pytest.raises(AssumptionError, match=r"T.assume\(n <= 32\) is false in 'f'.*n = 33"):
            codegen.build(f, target="python")(33, np.zeros((8, 4), "int32"),
                                              np.zeros(32, "int32"))


def test_without_a_block_nests_are_split_in_place():
    text = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32"), B: T.Buffer((14,), "int32")):
    for i in T.serial(14):
        B[i] = 0
        for f in T.serial(2):
            B[i] = B[i] + A[(i + f) // 4, (i + f) % 4]
'''
    sch = Schedule(parse(text))
    sch.sequential_buffer_access(None, "A")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32"), B: T.Buffer((14,), "int32")):
    for i in T.serial(14):
        B[i] = 0
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 15:
            for f in T.serial(2):
                if f >= 4 * io + ii - 13 and 4 * io + ii >= f:
                    B[4 * io + ii - f] = B[4 * io + ii - f] + A[io, ii]
'''))
    assert [step.primitive for step in sch.trace] == ["sequential_buffer_access"]
    steps = Schedule(parse(text))
    for _ in range(2):
        step = next_step(steps.func, None, "A")
        getattr(steps, step.primitive)(**step.args)
    assert [step.primitive for step in steps.trace] == ["distribute", "reorder_by_map"]
    assert_structural_equal(steps.func, sch.func)
    for seed in range(2):
        inputs = random_inputs(parse(text), seed)
        want, got = [a.copy() for a in inputs], [a.copy() for a in inputs]
        codegen.build(parse(text), target="python")(*want)
        codegen.build(sch.func, target="python")(*got)
        np.testing.assert_array_equal(got[1], want[1])


def test_never_write_to_padding():
    sch = sequential("never_write_transformed", None, "A")
    text = (EXAMPLES / "never_write_after.py").read_text()
    assert_structural_equal(sch.func, parse(text.replace("0 <= 4 * io", "4 * io")))


def test_never_read_from_padding():
    assert_structural_equal(sequential("never_read_transformed", None, "A").func,
                            load("never_read_after"))


def test_a_reversed_reduction_is_refused_and_nothing_is_left_applied():
    # RFC 0077's implicit-default step 3 walks A, which sums each B[Bi]'s taps in
    # the reverse order; the dependences are exact, so the reordered sum is refused.
    sch = Schedule(load("implicit_default_step2"))
    with pytest.raises(IllegalTransformError, match="reorder_by_map") as info:
        sch.sequential_buffer_access(None, "A")
    assert info.value.evidence.instances == (
        Instance("S2", {"Bi": 0, "fi": 0}), Instance("S2", {"Bi": 0, "fi": 1}))
    assert info.value.evidence.element == Element("B", (0, 2))
    assert len(sch.trace) == 0
    assert_structural_equal(sch.func, load("implicit_default_step2"))


def test_unknown_buffer_is_named():
    with pytest.raises(NotFoundError, match="no buffer 'C'"):
        Schedule(load("conv1d_transformed")).sequential_buffer_access("compute", "C")


def test_a_buffer_the_block_does_not_touch_is_named():
    with pytest.raises(PolypadError, match="block 'init_compute' does not access A"):
        Schedule(load("conv1d_option2")).sequential_buffer_access("init_compute", "A")


# ---------------------------------------------------------------- random nests

LAYOUTS = st.tuples(st.integers(2, 5), st.integers(0, 3), st.booleans())


def _nest(n: int, taps: int, layout, kind: str) -> str:
    """B, transformed by ``layout`` (divisor, offset, reversed), written from A."""
    c, o, rev = layout
    rows = (n - 1 + o) // c + 1

    def index(i: str) -> str:
        i = f"({n - 1} - ({i}))" if rev else i
        return f"({i} + {o}) // {c}, ({i} + {o}) % {c}"

    start = 0
    if kind == "accumulate":
        body = (f"        B[{index('i')}] = 0\n"
                f"        for f in T.serial({taps}):\n"
                f"            B[{index('i')}] = B[{index('i')}] + A[i + f] * (f + 1)\n")
    elif kind == "scan":  # each element reads the previous one: reversing it is illegal
        start = 1
        body = f"        B[{index('i')}] = B[{index('i - 1')}] + A[i]\n"
    else:
        body = f"        B[{index('i')}] = A[i] * 2 + i\n"
    return (f'@T.prim_func\ndef f(A: T.Buffer(({n + taps},), "int32"), '
            f'B: T.Buffer(({rows}, {c}), "int32")):\n'
            f"    for i in T.serial({start}, {n}):\n{body}")


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 11), taps=st.integers(1, 3), layout=LAYOUTS,
       kind=st.sampled_from(["map", "accumulate", "scan"]), buffer=st.sampled_from(["A", "B"]))
def test_random_nests_keep_their_results(n, taps, layout, kind, buffer):
    text = _nest(n, taps, layout, kind)
    sch = Schedule(parse(text))
    try:
        sch.sequential_buffer_access(None, buffer)
    except IllegalTransformError as err:
        # Only a scan has dependences between iterations, and only walking it backwards
        # breaks them.
        assert kind == "scan" and layout[2] and n > 2
        assert len(err.evidence.instances) == 2 and err.evidence.element.buffer == "B"
        return
    verify(sch.func)
    inputs = random_inputs(parse(text), n)
    want, got = [a.copy() for a in inputs], [a.copy() for a in inputs]
    codegen.build(parse(text), target="python")(*want)
    codegen.build(sch.func, target="python")(*got)
    np.testing.assert_array_equal(got[1], want[1])
