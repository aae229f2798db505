"""sch.remove_branching_through_overcompute and sch.reduce_overcompute_through_branching:
the RFC's functions, a whole schedule there and back, the trace, and refusals."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from inputs_support import make_inputs

import codegen
from analyses import Counterexample, Element, Instance, Unknown
from polypad.errors import ArgumentTypeError, IllegalTransformError
from polypad.ir.locate import find_block
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def load(name):
    path = EXAMPLES / f"{name}.py"
    return parse(path.read_text(), filename=str(path))


RFC_REDUCED = """
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if not (io == 3 and ii >= 2):
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""


def test_rfc_reduce_overcompute_through_branching():
    f = load("branching_conv1d_before")
    sch = Schedule(f)
    assert sch.reduce_overcompute_through_branching("compute") is None
    assert_structural_equal(sch.func, parse(RFC_REDUCED))
    assert str(sch.trace) == "sch.reduce_overcompute_through_branching(block='compute')"
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)


def test_a_block_node_is_recorded_by_name():
    f = load("branching_conv1d_before")
    sch = Schedule(f)
    sch.reduce_overcompute_through_branching(find_block(f, "compute"))
    assert str(sch.trace) == "sch.reduce_overcompute_through_branching(block='compute')"
    assert_structural_equal(sch.func, parse(RFC_REDUCED))


# ---------------------------------------------------------------- there and back

# RFC 0077's 1-d convolution with A long enough for the overcompute to stay inside it
# (A has 18 elements; in the RFC it has 16 and the overcompute reads A[4, 0]).
CONV = """
@T.prim_func
def func(A: T.Buffer((18,), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((14,), "float32")):
    with T.block("compute"):
        for i in T.serial(14):
            B[i] = 0.0
            for f in T.serial(3):
                B[i] = B[i] + A[i + f]
"""

STAGE = """
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    for io, ii in T.grid(5, 4):
        T.assume(4 * io + ii < 18 or A[io, ii] == 0.0)
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            {guard}B[io, ii] = 0.0
            {indent}for f in T.serial(3):
            {indent}    B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    for io, ii in T.grid(4, 4):
        with T.block("B_padding"):
            if 4 * io + ii >= 14:
                B[io, ii] = 0.0
"""


def stage(guard: str | None) -> str:
    if guard is None:
        return STAGE.format(guard="", indent="")
    return STAGE.format(guard=f"if {guard}:\n                ", indent="    ")


@functools.cache
def schedules() -> dict[str, Schedule]:
    """The schedule after each step of: layout, sequential access, branching removed,
    overcompute reduced."""
    sch = Schedule(parse(CONV))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.sequential_buffer_access("compute", "B")
    out = {"sequential": sch.func}
    sch.remove_branching_through_overcompute("compute")
    out["overcompute"] = sch.func
    sch.reduce_overcompute_through_branching("compute")
    out["branching"] = sch.func
    out["schedule"] = sch
    return out


def test_there_and_back_gives_the_expected_functions():
    s = schedules()
    assert_structural_equal(s["sequential"], parse(stage("4 * io + ii < 14")))
    assert_structural_equal(s["overcompute"], parse(stage(None)))
    assert_structural_equal(s["branching"], parse(stage("not (io == 3 and ii >= 2)")))


def test_there_and_back_trace_names_the_primitives_and_replays():
    sch = schedules()["schedule"]
    lines = str(sch.trace).splitlines()
    assert lines[-2:] == [
        "sch.remove_branching_through_overcompute(block='compute', strict_ieee=False)",
        "sch.reduce_overcompute_through_branching(block='compute')",
    ]
    assert_structural_equal(sch.trace.apply_to(parse(CONV)).func, sch.func)
    replay = Schedule(parse(CONV))
    exec(str(sch.trace), {"sch": replay})
    assert_structural_equal(replay.func, sch.func)


def _run(kernel, args):
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*copies)
    return copies


def test_there_and_back_keeps_results_in_the_reference_executor():
    s = schedules()
    rng = np.random.default_rng(3)
    for _ in range(3):
        args = make_inputs(s["sequential"], rng)
        want = _run(codegen.build(s["sequential"], target="python"), args)
        for name in ("overcompute", "branching"):
            got = _run(codegen.build(s[name], target="python"), args)
            np.testing.assert_allclose(got[2], want[2], rtol=1e-6, err_msg=name)


@pytest.mark.numba
def test_there_and_back_keeps_results_in_numba():
    s = schedules()
    args = make_inputs(s["sequential"], np.random.default_rng(4))
    want = _run(codegen.build(s["sequential"], target="python"), args)
    for name in ("overcompute", "branching"):
        got = _run(codegen.build(s[name]), args)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, err_msg=name)


# ---------------------------------------------------------------- refusals


def _refused(f, call, match: str):
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match=match) as info:
        call(sch)
    assert len(sch.trace) == 0 and sch.func is f
    return info.value.evidence


def test_remove_branching_refuses_overcompute_that_leaves_a_buffer():
    # The RFC's own example: running the branch everywhere reads A[4, 0], past A.
    evidence = _refused(
        load("overcompute_conv1d_sequential"),
        lambda sch: sch.remove_branching_through_overcompute("compute"),
        r"remove_branching_through_overcompute: no conditional of block 'compute' can be "
        r"removed; the first stays: line \d+: if 0 <= 4 \* io \+ ii < 14: kept")
    assert isinstance(evidence, Counterexample)
    assert evidence.instances == (Instance("compute", {"io": 3, "ii": 2, "f": 2}),)
    assert evidence.element == Element("A", (4, 0))


def test_remove_branching_refuses_a_block_without_conditionals():
    evidence = _refused(load("branching_conv1d_before"),
                        lambda sch: sch.remove_branching_through_overcompute("compute"),
                        "block 'compute' holds no conditional")
    assert evidence == Counterexample("block 'compute' holds no conditional")


READ_BETWEEN = """
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32"),
         C: T.Buffer((4,), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii]
    with T.block("read"):
        for ii in T.serial(4):
            C[ii] = B[3, ii]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""


def test_reduce_refuses_when_the_padding_is_read_before_the_pad_value():
    evidence = _refused(
        parse(READ_BETWEEN), lambda sch: sch.reduce_overcompute_through_branching("compute"),
        "reduce_overcompute_through_branching: block 'compute' computes nothing that a pad "
        "value overwrites unread")
    assert evidence == Counterexample(
        "compute(io=3, ii=2) writes B[3, 2] and read(ii=2) reads it before a store of a "
        "known value overwrites it",
        instances=(Instance("compute", {"io": 3, "ii": 2}), Instance("read", {"ii": 2})),
        element=Element("B", (3, 2)))


def test_reduce_twice_refuses_the_second_time():
    sch = Schedule(load("branching_conv1d_before"))
    sch.reduce_overcompute_through_branching("compute")
    before = sch.func
    with pytest.raises(IllegalTransformError, match="no pad-value store writes it") as info:
        sch.reduce_overcompute_through_branching("compute")
    assert info.value.evidence.instances == (Instance("compute_0", {"io": 0, "ii": 0}),)
    assert sch.func is before and len(sch.trace) == 1


def test_a_refusal_that_cannot_be_decided_carries_the_unknown():
    f = parse("""
@T.prim_func
def func(A: T.Buffer((5, 4), "int32"), B: T.Buffer((4, 4), "int32"),
         C: T.Buffer((4, 4), "int32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io + 1, ii] % 4
            C[io, B[io, ii]] = 1
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0
""")
    evidence = _refused(f, lambda sch: sch.reduce_overcompute_through_branching("compute"),
                        "not quasi-affine")
    assert isinstance(evidence, Unknown)


def test_arguments_are_checked():
    sch = Schedule(load("branching_conv1d_before"))
    with pytest.raises(ArgumentTypeError, match="parameter block"):
        sch.reduce_overcompute_through_branching(3)
    with pytest.raises(ArgumentTypeError, match="parameter strict_ieee"):
        sch.remove_branching_through_overcompute("compute", strict_ieee="yes")
    assert len(sch.trace) == 0
