"""A ``T.axis`` domain that does not fit its binding's dtype is a ParseError at the domain.

The axis takes its binding's dtype, and its domain is cast to it: ``T.axis.spatial(128,
i)`` over an ``int8`` ``i`` used to raise ``DTypeError: 128 is outside the range of
int8 ...; write it as a wider constant, e.g. T.int64(128)`` with no line, about a
constant written as a plain ``128``.
"""

from __future__ import annotations

import pytest

from polypad.errors import ParseError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.script import parse

TEXT = '''
@T.prim_func
def f(A: T.Buffer((300,), "int32")):
    for i in T.serial(T.int8(100)):
        with T.block("b"):
            vi = T.axis.spatial({dom}, i)
            A[vi] = 1
'''


@pytest.mark.parametrize("dom", ["128", "(0, 200)", "(-200, 0)"])
def test_a_domain_past_the_binding_dtype_is_a_parse_error_at_the_domain(dom):
    with pytest.raises(ParseError) as err:
        parse(TEXT.format(dom=dom))
    assert type(err.value) is ParseError
    assert (err.value.lineno, err.value.col) == (6, 33)
    assert err.value.message == (
        f"the domain {dom} of T.axis.spatial for vi does not fit [-128, 127] of int8, the "
        "dtype of its binding i")


def test_a_domain_that_fits_is_read_in_the_binding_dtype():
    func = parse(TEXT.format(dom="127"))
    (block,) = [x for x in walk(func.body) if isinstance(x, n.Block)]
    (axis,) = block.header.axes
    assert (axis.var.name, axis.var.dtype) == ("vi", "int8")
    assert (axis.extent.value, axis.extent.dtype) == (127, "int8")
