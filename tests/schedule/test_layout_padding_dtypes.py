"""``transform_layout``'s padding names its transformed axes in a dtype that holds them.

The padding a new buffer records (``padding_record``), the question whether there is
any (``has_padding``), and the padding stage and assumption it adds named their axes
``int32`` whatever the shape: for an ``int64`` shape the record's axes could not hold
the last rows, and a constant shape past ``2**31`` was refused with a ``DTypeError``
about the extent.  They now take :attr:`LayoutRelation.index_dtype`, as the padding
predicate does.  Shapes here are ``2**31``-scale; nothing that large is allocated: the
recorded predicates run on the reference executor at indices past ``int32``.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad import Schedule, parse
from polypad.ir import nodes as ir
from polypad.ir.show import show
from polypad.ir.structural import assert_structural_equal
from polypad.layout import IndexMap
from polypad.schedule.layout_padding import has_padding, padding_record

SPLIT4 = IndexMap(lambda i: [i // 4, i % 4])
FLATTEN = IndexMap(lambda i, j: [i * 70000 + j])
BIG = 2**33 + 1  # split by 4: 2**31 + 1 rows, the last one element and three of padding


def holds(predicate: ir.Expr, values: dict[ir.Var, int]) -> bool:
    """``predicate`` run by the reference executor, its variables passed as scalar
    arguments of their own dtypes."""
    signature = ", ".join(f"{v.name}: T.{v.dtype}" for v in values)
    f = parse(f'''
@T.prim_func
def padding(B: T.Buffer((1,), "int32"), {signature}):
    B[0] = T.Select({show(predicate)}, 1, 0)
''')
    out = np.full(1, -1, dtype=np.int32)
    codegen.build(f, target="python")(out, *values.values())
    return bool(out[0])


def test_the_record_of_an_int64_shape_has_int64_axes():
    size = ir.Var("n", "int64")
    record = padding_record(SPLIT4, ir.Buffer("A", (size,), "float32"))
    io, ii = record.axes
    assert (io.name, io.dtype, ii.name, ii.dtype) == ("io", "int64", "ii", "int64")
    assert show(record.predicate) == "4 * io + ii >= n"
    for row, col in [(2**31, 0), (2**31, 1), (2**31, 3), (2**31 - 1, 3)]:
        assert holds(record.predicate, {size: BIG, io: row, ii: col}) == (4 * row + col >= BIG)


def test_a_flattened_int32_shape_past_int32_has_int64_axes():
    # Each row's last flat index (stride 70000, 69999 columns) is padding, up to
    # 69999 * 70000 + 69998, past 2**31 - 1.
    record = padding_record(FLATTEN, ir.Buffer("A", (70000, 69999), "float32"))
    (flat,) = record.axes
    assert flat.dtype == "int64"
    for index in [69999, 2**31 - 2**31 % 70000 + 69999, 2**32 + 5, 69999 * 70000 + 69998]:
        assert holds(record.predicate, {flat: index}) == (index % 70000 == 69999), index


@pytest.mark.parametrize("size, padded", [(BIG, True), (BIG - 1, False)])
def test_has_padding_at_a_constant_shape_past_int32(size, padded):
    assert has_padding(SPLIT4, (size,), ["io", "ii"]) is padded


BIG_COPY = f'''
@T.prim_func
def f(A: T.Buffer((T.int64({BIG}),), "float32"), B: T.Buffer((T.int64({BIG}),), "float32")):
    for i in T.serial(T.int64({BIG})):
        B[i] = A[i] * T.float32(2.0)
'''

ROWS = (BIG + 3) // 4


def test_the_padding_stage_of_a_shape_past_int32_loops_over_int64():
    sch = Schedule(parse(BIG_COPY))
    sch.transform_layout(None, "B", "lambda i: [i // 4, i % 4]", pad_value=0.0)
    assert_structural_equal(sch.func, parse(f'''
@T.prim_func
def f(A: T.Buffer((T.int64({BIG}),), "float32"),
      B: T.Buffer((T.int64({ROWS}), T.int64(4)), "float32")):
    for i in T.serial(T.int64({BIG})):
        B[i // T.int64(4), i % T.int64(4)] = A[i] * T.float32(2.0)
    for io in T.serial(T.int64({ROWS})):
        for ii in T.serial(T.int64(4)):
            with T.block("B_padding"):
                if T.int64(4) * io + ii >= T.int64({BIG}):
                    B[io, ii] = T.float32(0.0)
'''))
    (io, ii) = sch.func.params[1].padding.axes
    assert (io.dtype, ii.dtype) == ("int64", "int64")


def test_the_assumption_of_an_input_past_int32_loops_over_int64():
    sch = Schedule(parse(BIG_COPY))
    sch.transform_layout(None, "A", "lambda i: [i // 4, i % 4]", pad_value=0.0)
    assert_structural_equal(sch.func, parse(f'''
@T.prim_func
def f(A: T.Buffer((T.int64({ROWS}), T.int64(4)), "float32"),
      B: T.Buffer((T.int64({BIG}),), "float32")):
    for io in T.serial(T.int64({ROWS})):
        for ii in T.serial(T.int64(4)):
            T.assume(T.int64(4) * io + ii < T.int64({BIG}) or A[io, ii] == T.float32(0.0))
    for i in T.serial(T.int64({BIG})):
        B[i] = A[i // T.int64(4), i % T.int64(4)] * T.float32(2.0)
'''))
