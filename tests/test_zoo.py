"""benchmarks/bench_zoo.py's kernels compute what they say, at tiny sizes.

Each kernel of the zoo (benchmarks/zoo.py) is run plain and as scheduled,
with the reference executor and with Numba, and its numpy peer too; all must
give what the plain nest gives under the reference executor.  No timing.
The schedules are made and the kernels built once per kernel, for all tests.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from zoo import ALIGN, ZOO, check, inputs  # noqa: E402
from zoo_kernels import dot_schedule  # noqa: E402

BY_NAME = {z.name: z for z in ZOO}
NAMES = list(BY_NAME)
#: Float outputs may differ by rounding: a schedule may rfactor (reassociate) a sum.
TOLERANCE = 1e-5


@cache
def _funcs(name: str):
    zoo = BY_NAME[name]
    plain = zoo.kernel(**zoo.tiny)
    return plain, zoo.schedule(plain)


@cache
def _kernel(name: str, variant: str, target: str):
    plain, sch = _funcs(name)
    return codegen.build(plain if variant == "plain" else sch.func, target=target)


@cache
def _expected(name: str) -> tuple:
    zoo = BY_NAME[name]
    args, arrays = inputs(_funcs(name)[0], zoo.tiny)
    _kernel(name, "plain", "python")(*args)
    return tuple(arrays)


def _run(name: str, variant: str, target: str) -> list:
    zoo = BY_NAME[name]
    args, arrays = inputs(_funcs(name)[0], zoo.tiny)
    _kernel(name, variant, target)(*args)
    return arrays


def test_the_zoo_has_every_kind_the_issue_names():
    assert len(ZOO) >= 12
    assert {"matmul", "bmm 16x16", "depthwise 3x3", "transpose", "softmax", "blur 3x3",
            "max-pool 2x2", "int8 dot"} <= set(NAMES)
    for zoo in ZOO:
        assert set(zoo.sizes) == set(zoo.quick) == set(zoo.tiny), zoo.name


@pytest.mark.parametrize("name", NAMES)
def test_the_schedule_replays_and_computes_what_the_plain_nest_computes(name):
    plain, sch = _funcs(name)
    assert_structural_equal(sch.trace.apply_to(plain).func, sch.func)
    assert check(_run(name, "scheduled", "python"), list(_expected(name))) <= TOLERANCE


@pytest.mark.parametrize("name", NAMES)
def test_the_numpy_peer_computes_what_the_plain_nest_computes(name):
    zoo = BY_NAME[name]
    _, arrays = inputs(_funcs(name)[0], zoo.tiny)
    zoo.peer(*arrays)
    assert check(arrays, list(_expected(name))) <= TOLERANCE


@pytest.mark.numba
@pytest.mark.parametrize("variant", ["plain", "scheduled"])
@pytest.mark.parametrize("name", NAMES)
def test_numba_runs_both_variants_as_the_reference_executor(name, variant):
    assert check(_run(name, variant, "numba"), list(_expected(name))) <= TOLERANCE


def test_the_check_catches_a_wrong_output():
    want = [np.array([1.0, 2.0]), np.array([3], dtype=np.int32)]
    assert check([np.array([1.0, 2.0]), np.array([3], dtype=np.int32)], want) == 0.0
    assert check([np.array([1.0, 2.5]), np.array([3], dtype=np.int32)], want) == 0.25
    assert check([np.array([1.0, 2.0]), np.array([4], dtype=np.int32)], want) == float("inf")


def test_the_inputs_start_on_64_byte_boundaries_unless_asked_for_numpy_placement():
    zoo = BY_NAME["matvec"]
    plain = _funcs("matvec")[0]
    args, arrays = inputs(plain, zoo.tiny)
    assert all(a.ctypes.data % ALIGN == 0 for a in arrays)
    _, placed = inputs(plain, zoo.tiny, align=None)
    for a, b in zip(arrays, placed, strict=True):  # the same values either way
        np.testing.assert_array_equal(a, b)


def test_the_int8_dot_in_chunks_on_the_cores_computes_the_same():
    # The recipe's other form, for long reductions: chunks, one partial sum each.
    zoo = BY_NAME["int8 dot"]
    plain = _funcs("int8 dot")[0]
    sch = dot_schedule(plain, chunks=4)
    kinds = [x.kind for x in walk(sch.func.body) if isinstance(x, n.For)]
    assert kinds == [n.ForKind.SERIAL, n.ForKind.PARALLEL, n.ForKind.VECTORIZED,
                     n.ForKind.SERIAL]  # init, chunks, lanes, write-back
    want = list(_expected("int8 dot"))
    for target in ("python", "numba"):
        args, arrays = inputs(plain, zoo.tiny)
        codegen.build(sch.func, target=target)(*args)
        assert check(arrays, want) == 0.0
