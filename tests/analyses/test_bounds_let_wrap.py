"""An index that reads a ``let`` variable whose value wraps: ISL reads the variable as
its exact value, so the wrap must be found in the let's value, not only in the index
(``T.Cast("int32", x)`` cannot wrap; ``x = T.Cast("int8", j) + T.int8(100)`` does)."""

from __future__ import annotations

import numpy as np
import pytest
from bounds_support import bad_accesses
from hypothesis import given, settings
from hypothesis import strategies as st

import analyses
import codegen
from analyses import Proved, Refuted
from polypad.errors import BoundsCheckError
from polypad.script import parse

STORE = '''
@T.prim_func
def lws(D: T.Buffer((4, 256), "int32"), X: T.Buffer((4,), "int32")):
    for j in T.serial(40):
        x: T.int8 = T.Cast("int8", j) + T.int8(100)
        D[X[0], T.Cast("int32", x)] = 7
'''

LOAD = '''
@T.prim_func
def lw(D: T.Buffer((4, 256), "int32"), X: T.Buffer((4,), "int32"), C: T.Buffer((40,), "int32")):
    for j in T.serial(40):
        x: T.int8 = T.Cast("int8", j) + T.int8(100)
        C[j] = D[X[0], T.Cast("int32", x)]
'''


def _args(func):
    return [np.zeros(p.shape, p.dtype) for p in func.params]


@pytest.mark.parametrize("text", [STORE, LOAD], ids=["store", "load"])
@pytest.mark.parametrize("target", ["python", "numba"])
def test_a_wrapped_let_value_is_checked_at_run_time(text, target):
    func = parse(text)
    args = _args(func)
    with pytest.raises(BoundsCheckError, match=r"D\[0, -128\] is outside its shape"):
        codegen.build(func, target=target)(*args)
    assert not args[0][0, 128:].any()  # nothing written past the wrap


@pytest.mark.parametrize("text", [STORE, LOAD], ids=["store", "load"])
def test_a_wrapped_let_value_is_not_proved(text):
    whole = parse(text.replace("D[X[0], ", "D[0, "))
    decision = analyses.bounds_precondition(whole).decision
    assert not isinstance(decision, Proved)
    assert "T.Cast(\"int8\", j) + 100 may wrap around its int8 range" in str(decision)
    # With the gather, both axes are left to run time (axis 1 is not proved inside).
    undecided = analyses.bounds_precondition(parse(text)).undecided
    assert [u.axes for u in undecided] == [(0, 1)]


@st.composite
def let_nests(draw) -> str:
    """A loop whose index reads one or two lets (int8 or int16) that may wrap."""
    dtype = draw(st.sampled_from(["int8", "int16"]))
    extent = draw(st.integers(1, 40))
    start = draw(st.sampled_from([0, 100, 120, 127, 32700, 32767, -130, -32768]))
    scale = draw(st.sampled_from([1, 2, 3, -1, 100]))
    chain = draw(st.booleans())
    offset = draw(st.integers(-3, 3))
    lines = [
        "@T.prim_func",
        'def f(A: T.Buffer((300,), "int32")):',
        f"    for j in T.serial({extent}):",
        f'        x: T.{dtype} = T.Cast("{dtype}", j) * T.{dtype}({scale})'
        f' + T.Cast("{dtype}", {start})',
    ]
    use = "x"
    if chain:
        lines.append(f"        y: T.{dtype} = x + T.{dtype}({offset})")
        use = "y"
    # The last reads the lets only through `+ -` of their dtype up to the index: their
    # wraps cancel modulo 2**bits, and the exact index is the executed one where inside.
    index = draw(st.sampled_from([f'T.Cast("int32", {use})', f'T.Cast("int32", {use}) + 130',
                                  f'T.Cast("int32", {use}) - 32600',
                                  f'{use} - x + T.Cast("{dtype}", j)']))
    lines.append(f"        A[{index}] = 1")
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None)
@given(let_nests())
def test_a_proved_access_through_a_let_is_inside_at_every_instance(text):
    func = parse(text)
    decision = analyses.check_bounds(func)
    bad = bad_accesses(func)
    if isinstance(decision, Proved):
        assert bad == [], text
    if isinstance(decision, Refuted):
        assert bad, text


def test_a_let_read_only_through_ring_operations_up_to_the_index_stays_exact():
    # x wraps (j = 2), but A[x - x + j] is A[j] at every instance: proved, as before lets
    # counted (the fuzz's `A[2 * i3 + x5 - x5]`, tests/test_int_semantics.py).
    func = parse('''
@T.prim_func
def f(A: T.Buffer((40,), "int32")):
    for j in T.serial(40):
        x: T.int32 = j * 1073741824 + 7
        A[x - x + j] = 1
''')
    assert isinstance(analyses.check_bounds(func), Proved)
    assert bad_accesses(func) == []
