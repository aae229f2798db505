"""NHWC -> NCHWc with ``transform_layout``, with and without axis separators (RFC 0039).

RFC 0039's examples transform ``lambda n, h, w, c: [n, c // 4, h, w, c % 4]``
and, for a 2-d physical layout, ``[n, c // 4, h, AXIS_SEPARATOR, w, c % 4]``.
The separator does not change the logical (transformed) shape; it goes into
``Buffer.axis_separators`` and decides the physical shape.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from layout_support import check_layouts, padding_mask

from polypad import AXIS_SEPARATOR, IndexMap, Schedule, parse
from polypad.ir.structural import assert_structural_equal
from polypad.layout.physical import flatten_indices

NCHWC = "lambda n, h, w, c: [n, c // 4, h, w, c % 4]"
NCHWC_2D = "lambda n, h, w, c: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4]"


def nhwc(channels: int):
    return parse(f'''
@T.prim_func
def scale(A: T.Buffer((2, 3, 3, {channels}), "float32"),
          B: T.Buffer((2, 3, 3, {channels}), "float32")):
    for n, h, w, c in T.grid(2, 3, 3, {channels}):
        with T.block("compute"):
            B[n, h, w, c] = 2.0 * A[n, h, w, c] + 1.0
''')


def nchwc_expected(channels: int, separators: str):
    outer = (channels + 3) // 4
    return parse(f'''
@T.prim_func
def scale(A: T.Buffer((2, {outer}, 3, 3, 4), "float32"{separators}),
          B: T.Buffer((2, {outer}, 3, 3, 4), "float32"{separators})):
    for n, h, w, c in T.grid(2, 3, 3, {channels}):
        with T.block("compute"):
            B[n, c // 4, h, w, c % 4] = 2.0 * A[n, c // 4, h, w, c % 4] + 1.0
''')


@functools.cache
def original(channels: int):
    return nhwc(channels)


@functools.cache
def transformed(channels: int, index_map: str):
    sch = Schedule(original(channels))
    sch.transform_layout("compute", "A", index_map)
    sch.transform_layout("compute", "B", index_map)
    return sch.func


@pytest.mark.parametrize("channels", [8, 6])
def test_nchwc_without_separators_is_one_flat_physical_axis(channels):
    func = transformed(channels, NCHWC)
    assert_structural_equal(func, nchwc_expected(channels, ""))
    a = func.params[0]
    assert a.axis_separators == ()
    assert IndexMap(NCHWC).physical_shape((2, 3, 3, channels)) == (2 * 2 * 3 * 3 * 4,)


@pytest.mark.parametrize("channels", [8, 6])
def test_nchwc_with_a_separator_keeps_the_shape_and_records_the_separator(channels):
    func = transformed(channels, NCHWC_2D)
    assert_structural_equal(func, nchwc_expected(channels, ", axis_separators=[3]"))
    a, b = func.params
    # RFC 0039 writes `axis_separators=[2]` for this map, but flattens to
    # (16 * (128/4) * 64, 64 * 4): n, c // 4, h in the first physical axis,
    # i.e. the separator sits before output 3, as TVM counts it.
    assert a.axis_separators == b.axis_separators == (3,)
    assert a.shape == (2, 2, 3, 3, 4)


def test_rfc0039_physical_index_of_the_texture_layout():
    # RFC 0039: x[11, 37, 23, 101] of a (16, 64, 64, 128) NHWC buffer.
    f = parse('''
@T.prim_func
def read(x: T.Buffer((16, 64, 64, 128), "float32"), y: T.Buffer((1,), "float32")):
    y[0] = x[11, 37, 23, 101]
''')
    sch = Schedule(f)
    sch.transform_layout(None, "x", lambda n, h, w, c: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4])
    x = sch.func.params[0]
    assert x.shape == (16, 32, 64, 64, 4) and x.axis_separators == (3,)
    load = sch.func.body.value
    flat = flatten_indices(load.indices, x.shape, x.axis_separators)
    values = [_evaluate(e) for e in flat]
    assert values == [(128 // 4) * 64 * 11 + 64 * (101 // 4) + 37, 4 * 23 + 101 % 4]
    flat_1d = flatten_indices(load.indices, x.shape, ())
    assert [_evaluate(e) for e in flat_1d] == [
        (128 // 4) * 64 * 64 * 4 * 11 + 64 * 64 * 4 * (101 // 4) + 64 * 4 * 37 + 4 * 23 + 101 % 4]


def _evaluate(expr) -> int:
    from polypad.layout.packing import evaluate_index

    return int(evaluate_index(expr, {}))


@pytest.mark.numba
@pytest.mark.parametrize("index_map", [NCHWC, NCHWC_2D])
@pytest.mark.parametrize("channels", [8, 6])
def test_nchwc_kernels_compute_the_same_values(channels, index_map):
    out = check_layouts(original(channels), transformed(channels, index_map),
                        {"A": (index_map, None), "B": (index_map, None)})
    mask = padding_mask(index_map, (2, 3, 3, channels))
    assert mask.sum() == (0 if channels == 8 else 2 * 3 * 3 * 2)
    # Without a pad value nothing writes B's padding.
    assert np.isnan(out["B"][mask]).all() and not np.isnan(out["B"][~mask]).any()
