"""Every form of ``pad_value`` (RFC 0077, "Defining Padded Values").

None, a number (converted to the buffer's dtype), ``T.undef()``, a callable
of the transformed indices (which may read the transformed buffer itself),
and the same as text.  Reading any other buffer is refused.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from layout_support import check_layouts, load, padding_mask

from polypad import IllegalTransformError, PolypadError, Schedule, T, parse
from polypad.errors import DTypeError, ParseError
from polypad.ir import nodes as ir
from polypad.ir.structural import assert_structural_equal

SPLIT4 = "lambda i: [i // 4, i % 4]"

COPY = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for i in T.serial(14):
        with T.block("compute"):
            B[i] = A[i] + 1.0
'''

# B's padding wraps around: each padding element repeats the first of its row.
WRAPPED = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in T.serial(14):
        with T.block("compute"):
            B[i // 4, i % 4] = A[i] + 1.0
    for io, ii in T.grid(4, 4):
        with T.block("B_padding"):
            if 4 * io + ii >= 14:
                B[io, ii] = B[io, 0]
'''

ASSUMED = '''
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), B: T.Buffer((14,), "float32")):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == A[io, 0])
    for i in T.serial(14):
        with T.block("compute"):
            B[i] = A[i // 4, i % 4] + 1.0
'''


def copy_func():
    return parse(COPY)


def transform(buffer: str, pad_value, func=None):
    sch = Schedule(func or copy_func())
    sch.transform_layout("compute", buffer, SPLIT4, pad_value=pad_value)
    return sch.func


def padding_value(func) -> ir.Expr:
    """The value the padding stage stores (it is the last stage)."""
    stage = func.body.stmts[-1]
    return stage.body.body.body.then_case.value


def assumed_value(func) -> ir.Expr:
    """The right side of ``buf[...] == pad`` in the leading assumption."""
    fact = func.body.stmts[0].body.body.value.args[0]
    return fact.b.b


# ------------------------------------------------------------ constants and undef


@pytest.mark.parametrize("pad_value, expected", [
    (0, ir.FloatImm(0.0, "float32")),
    (-1, ir.FloatImm(-1.0, "float32")),
    (2.5, ir.FloatImm(2.5, "float32")),
    (np.float32(0.5), ir.FloatImm(0.5, "float32")),
    (T.float32(3), ir.FloatImm(3.0, "float32")),
    (T.undef(), ir.Call("undef", (), "float32")),
    ("T.undef()", ir.Call("undef", (), "float32")),
    ("-1", ir.FloatImm(-1.0, "float32")),
    ("lambda io, ii: 7", ir.FloatImm(7.0, "float32")),
    (lambda io, ii: 7, ir.FloatImm(7.0, "float32")),
])
def test_constant_pad_values_take_the_buffer_dtype(pad_value, expected):
    assert padding_value(transform("B", pad_value)) == expected


def test_an_integer_buffer_takes_integer_constants_and_refuses_fractions():
    f = load("never_write_before")
    sch = Schedule(f)
    sch.transform_layout(None, "A", SPLIT4, pad_value=3.0)
    assert padding_value(sch.func) == ir.IntImm(3, "int32")
    with pytest.raises(DTypeError, match=r"pad_value 0.5 is not a int32 value \(buffer A\)"):
        Schedule(f).transform_layout(None, "A", SPLIT4, pad_value=0.5)
    with pytest.raises(DTypeError, match="is not a int32 value"):
        Schedule(f).transform_layout(None, "A", SPLIT4, pad_value=True)


def test_undef_is_retyped_to_the_buffer_dtype():
    sch = Schedule(load("never_write_before"))
    sch.transform_layout(None, "A", SPLIT4, pad_value=T.undef())
    assert padding_value(sch.func) == ir.Call("undef", (), "int32")


@pytest.mark.parametrize("pad_value", [None, lambda io, ii: None, "lambda io, ii: None"])
def test_no_pad_value_adds_nothing(pad_value):
    assert_structural_equal(transform("B", pad_value), transform("B", None))
    assert_structural_equal(transform("A", pad_value), transform("A", None))
    assert isinstance(transform("B", pad_value).body, ir.For)  # the one original stage


# ------------------------------------------------------------ reading the buffer itself


@functools.cache
def wrapped(form: str):
    f = copy_func()
    b = f.params[1]
    pad = (lambda io, ii: b[io, 0]) if form == "callable" else "lambda io, ii: B[io, 0]"
    return transform("B", pad, f)


@pytest.mark.parametrize("form", ["callable", "text"])
def test_a_pad_value_may_read_the_transformed_buffer(form):
    assert_structural_equal(wrapped(form), parse(WRAPPED))


@pytest.mark.parametrize("form", ["callable", "text"])
def test_an_input_pad_value_reading_itself_becomes_an_assumption(form):
    f = copy_func()
    a = f.params[0]
    pad = (lambda io, ii: a[io, 0]) if form == "callable" else "lambda io, ii: A[io, 0]"
    func = transform("A", pad, f)
    assert_structural_equal(func, parse(ASSUMED))
    load_ = assumed_value(func)
    assert load_.buffer is func.params[0] and load_.buffer.shape == (4, 4)


@pytest.mark.numba
def test_a_self_reading_pad_value_holds_after_the_run():
    out = check_layouts(copy_func(), wrapped("callable"), {"B": (SPLIT4, None)})
    mask = padding_mask(SPLIT4, (14,))
    rows = np.nonzero(mask)[0]
    np.testing.assert_array_equal(out["B"][mask], out["B"][rows, 0])


@pytest.mark.numba
@pytest.mark.parametrize("pad_value", [-3, "lambda io, ii: -3.0", lambda io, ii: -3])
def test_a_constant_pad_value_holds_after_the_run(pad_value):
    func = transform("B", pad_value)
    out = check_layouts(copy_func(), func, {"B": (SPLIT4, None)})
    assert (out["B"][padding_mask(SPLIT4, (14,))] == -3.0).all()


# ------------------------------------------------------------ refusals


@pytest.mark.parametrize("form", ["callable", "text"])
def test_a_pad_value_reading_another_buffer_is_refused_naming_it(form):
    f = copy_func()
    a = f.params[0]
    pad = (lambda io, ii: a[io * 4 + ii]) if form == "callable" else "lambda io, ii: A[0]"
    with pytest.raises(IllegalTransformError) as err:
        transform("B", pad, f)
    assert "pad_value of B reads buffer A" in str(err.value)
    assert "not another buffer" in str(err.value)
    assert err.value.evidence == "A"


def test_a_pad_value_using_a_foreign_variable_is_refused():
    stray = ir.Var("k")
    with pytest.raises(PolypadError, match="pad_value of B uses k, which is neither"):
        transform("B", lambda io, ii: T.float32(stray))


def test_pad_value_arity_must_match_the_transformed_rank():
    with pytest.raises(PolypadError, match="pad_value for B takes 1 indices but the "
                                           "transformed buffer has 2 axes"):
        transform("B", lambda i: 0.0)
    with pytest.raises(PolypadError, match="takes 3 indices"):
        transform("B", "lambda a, b, c: 0.0")


def test_bad_pad_value_text_is_a_parse_error_pointing_into_it():
    with pytest.raises(ParseError, match="<pad_value>:1:.*undefined name 'C'"):
        transform("B", "lambda io, ii: C[io, 0]")
    with pytest.raises(PolypadError, match="must be None, a number, an expression"):
        transform("B", [1.0, 2.0])
