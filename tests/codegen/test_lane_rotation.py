"""A row reduction in vector lanes is emitted with its lanes turned so that its
loads start on a 64-byte boundary (codegen/numba/lane_rotation.py): bit for bit
the plain emission's result at every offset of the row, the reference's within
rounding, and near misses emitted as before."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import polypad as pp
from codegen.numba import lane_rotation

ALIGN = 64
#: Rows of whole blocks of 32 lanes, built with the default ``fastmath="contract"``:
#: the rotated pair's scalar parts (peel, tail) must fuse ``a * b + c`` as its vector
#: part and the plain loop do.
CONTRACT_SIZES = [(4, 64), (3, 256), (2, 4096)]
#: Rows with the partition's tail (100 = 3 * 32 + 4, 37, 69: rows not a multiple of
#: 64 bytes, each its own offset), built strict (``fastmath=None``).  Under
#: "contract" the tail, which the schedule emits after the lanes, may round otherwise
#: in the two kernels: LLVM's SLP vectorizer packs its multiplies into a vector in one
#: kernel (no fusing with the scalar adds) and not in the other.
STRICT_SIZES = [(6, 100), (5, 37), (3, 69)]
SIZES = CONTRACT_SIZES + STRICT_SIZES


def matvec(n: int, m: int, x_index: str = "vj"):
    return pp.parse(f'''
@T.prim_func
def matvec(A: T.Buffer(({n}, {m}), "float32"), x: T.Buffer(({m},), "float32"),
           y: T.Buffer(({n},), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("y"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vj] * x[{x_index}]
''')


def schedule(f, lanes: int = 32, **build):
    """benchmarks/zoo_extra.py's matvec recipe with ``lanes`` lanes."""
    sch = pp.Schedule(f)
    i, j = sch.get_loops("y")
    sch.decompose_reduction("y", j)
    _, j_1 = sch.split(j, [None, lanes], tail="partition")
    sch.rfactor(j_1)
    sch.parallel(i)
    sch.vectorize(j_1)
    return sch.func


def build(func, rotate: bool, **options) -> codegen.Kernel:
    saved, lane_rotation.ENABLED = lane_rotation.ENABLED, rotate
    try:
        return codegen.build(func, **options)
    finally:
        lane_rotation.ENABLED = saved


@pytest.fixture(scope="module")
def kernels():
    """Per size: the rotated kernel, the plain one and the reference executor."""
    out = {}
    for n, m in SIZES:
        func = schedule(matvec(n, m))
        options = {} if (n, m) in CONTRACT_SIZES else {"fastmath": None}
        out[n, m] = (build(func, True, **options), build(func, False, **options),
                     codegen.build(func, target="python"))
    return out


def placed(a: np.ndarray, offset: int) -> np.ndarray:
    """A copy of ``a`` starting ``offset`` bytes past a 64-byte boundary."""
    raw = np.empty(a.nbytes + 2 * ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN + offset
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert out.ctypes.data % ALIGN == offset
    return out


def awkward(rng, shape) -> np.ndarray:
    """Values of both signs over eight decades, a few over 36, and signed zeros:
    every product and sum stays finite, and a lane summing other elements, or in
    another order, or contracting otherwise, shows in the bits."""
    values = rng.choice([-1.0, 1.0], shape) * 10.0 ** rng.uniform(-4, 4, shape)
    extreme = rng.random(shape) < 0.02
    values[extreme] *= 10.0 ** rng.choice([-14.0, 14.0], shape)[extreme]
    zeros = rng.random(shape) < 0.1
    values[zeros] = np.copysign(0.0, rng.choice([-1.0, 1.0], shape))[zeros]
    return values.astype(np.float32)


def test_the_matvec_loop_pair_is_emitted_rotated(kernels):
    source = kernels[6, 100][0].source
    assert "fastmath" not in source.split("def kernel")[0].rsplit("@", 1)[1]  # strict
    assert "    A_address = np.intp(A.ctypes.data)\n" in source  # once per call
    assert "j_0_skew = (-(A_address + i * A.strides[0])) % 64 // 4\n" in source
    assert "y_rf[31] = y_rf_lanes[31]\n" in source  # given back at constant indices
    assert ("        if j_0_skew == 0:\n"  # aligned already: the plain loop pair
            "            for j_0 in range(3):\n"
            "                for j_1 in range(32):\n") in source
    assert ("            for j_0 in range(2):\n"  # the whole blocks past the boundary
            "                for j_1 in range(32):\n") in source
    assert "y_rf_rot[j_1] = y_rf_rot[j_1] + A[vi, vj] * x[vj]\n" in source
    assert "vj = j_0 * 32 + (j_0_skew + j_1)\n" in source
    assert "_skew" not in kernels[6, 100][1].source


@pytest.mark.parametrize("n, m", SIZES)
def test_bit_for_bit_the_plain_kernel_at_every_offset(kernels, n, m):
    rotated, plain, reference = kernels[n, m]
    rng = np.random.default_rng(m)
    for data in ("normal", "awkward"):
        if data == "normal":
            a = rng.standard_normal((n, m)).astype(np.float32)
            x = rng.standard_normal(m).astype(np.float32)
        else:
            a, x = awkward(rng, (n, m)), awkward(rng, (m,))
        want = np.zeros(n, np.float32)
        reference(a, x, want)
        for offset in range(0, ALIGN, 4):
            A = placed(a, offset)
            got, base = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
            rotated(A, x, got)
            plain(A, x, base)
            assert np.array_equal(got.view(np.uint32), base.view(np.uint32)), (data, offset)
            if (n, m) in STRICT_SIZES:  # strict IEEE: the reference's bits too
                assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), offset
            # The reference adds the row in order, not in 32 lanes: equal within rounding
            # of the sum of magnitudes.
            bound = np.abs(a).astype(np.float64) @ np.abs(x).astype(np.float64)
            assert np.all(np.abs(got.astype(np.float64) - want) <= 1e-5 * bound + 1e-30)


def test_ordinary_data_matches_the_reference_closely(kernels):
    rotated, _, reference = kernels[3, 256]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 256)).astype(np.float32)
    x = rng.standard_normal(256).astype(np.float32)
    for offset in (0, 16, 52):
        got, want = np.zeros(3, np.float32), np.zeros(3, np.float32)
        rotated(placed(a, offset), x, got)
        reference(a, x, want)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _check_left_alone(func, **options):
    kernel = build(func, True, **options)
    assert "_skew" not in kernel.source and "_rot" not in kernel.source
    assert kernel.source == build(func, False, **options).source
    n, m = func.params[0].shape
    rng = np.random.default_rng(1)
    a = placed(rng.standard_normal((n, m)).astype(np.float32), 16)
    x = rng.standard_normal(m).astype(np.float32)
    got, want = np.zeros(n, np.float32), np.zeros(n, np.float32)
    kernel(a, x, got)
    codegen.build(func, target="python")(a, x, want)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_load_indexed_by_another_expression_is_left_alone():
    # x read backwards: its index is not the flat j_0 * 32 + j_1.
    _check_left_alone(schedule(matvec(3, 64, x_index="63 - vj")))


def test_lanes_fewer_than_a_vector_are_left_alone():
    # 8 lanes of float32 are half a 64-byte vector: no boundary to turn them to.
    _check_left_alone(schedule(matvec(3, 64), lanes=8))


def test_lanes_of_one_vector_are_left_alone():
    # 16 lanes of float32: one chain of adds, bound by their latency, not the loads.
    _check_left_alone(schedule(matvec(3, 64), lanes=16))


def test_full_fast_math_keeps_its_vector_helpers():
    # The lanes go to a helper compiled with fast-math; the rotation stays out.
    _check_left_alone(schedule(matvec(3, 64)), fastmath="full")


def test_the_pattern_is_not_taken_for_other_loop_pairs(monkeypatch):
    from codegen.numba.lane_rotation import lane_rotation as match

    monkeypatch.setattr(lane_rotation, "ENABLED", True)  # off by default
    from polypad.ir import nodes as ir
    from polypad.ir.visitor import walk

    func = codegen.build(schedule(matvec(3, 64))).func
    pairs = [n for n in walk(func.body) if isinstance(n, ir.For) and n.var.name == "j_0"]
    assert len(pairs) == 1 and match(pairs[0], {}, func.params) is not None
    # Off, checked, or a lane buffer that is a parameter: no.
    assert match(pairs[0], {id(pairs[0]): None}, func.params) is None
    monkeypatch.setattr(lane_rotation, "ENABLED", False)
    assert match(pairs[0], {}, func.params) is None
    monkeypatch.setattr(lane_rotation, "ENABLED", True)
    assert match(pairs[0], {}, (*func.params, pairs[0].body.body.body.body.body.buffer)) is None
    # Any loop but the pair: no.
    others = [n for n in walk(func.body) if isinstance(n, ir.For) and n is not pairs[0]]
    assert others and all(match(n, {}, func.params) is None for n in others)
