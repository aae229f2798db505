"""check_bounds with scalar parameters: a parameter ranges over its dtype and the
assumptions before the access, every counterexample is a call the caller can make
(checked by running it in the reference executor), and a guard isl can model is
modelled."""

from __future__ import annotations

import dataclasses

import islpy as isl
import numpy as np
import pytest
from bounds_support import bad_accesses, parameter_nests
from hypothesis import given, settings

import analyses
import polypad as pp
from analyses import Refuted, Unknown
from codegen import interpreter, lower
from polypad.errors import AssumptionError, BoundsCheckError, LoopRangeError, NotAffineError
from polypad.ir import nodes as n
from polypad.ir.nodes import Buffer
from polypad.ir.visitor import Rewriter
from polypad.model import AffineSpace
from polypad.model.overflow import executed_set, within_dtypes, wrapping_operation

INT32 = (-(2**31), 2**31 - 1)

#: Issue 21, section 5: the guard is quasi-affine, and `n - i` cannot wrap for n >= 3.
QUARTER = '''
@T.prim_func
def f(A: T.Buffer((2,), "float32"), n: T.int32):
    T.assume(n >= {low})
    for i in T.serial(2, 5):
        if {guard}:
            A[((n - i) // 2) // 2] = 1.0
'''


def run(func: n.PrimFunc, **scalars) -> str | None:
    """The first access outside a buffer when the reference executor runs ``func`` on
    zeros with these scalars (``"assume"`` if an assumption fails first), else None."""
    args = []
    for p in func.params:
        if isinstance(p, Buffer):
            args.append(np.zeros(tuple(p.shape), p.dtype))
        else:
            args.append(scalars[p.name])
    try:
        interpreter.run(lower(func, check_assumptions=True), *args)
    except BoundsCheckError as err:
        return str(err)
    except (AssumptionError, LoopRangeError):
        return "assume"
    return None


class _OneIteration(Rewriter):
    """Each loop whose counter ``counters`` names runs only that counter's value."""

    def __init__(self, counters: dict[str, int]):
        self.counters = counters

    def visit_For(self, loop: n.For) -> n.For:
        body = self.visit(loop.body)
        if loop.var.name not in self.counters:
            return loop if body is loop.body else dataclasses.replace(loop, body=body)
        value = self.counters[loop.var.name]
        # Guarded so that a value outside the loop's own range runs nothing.
        inside = n.And(n.Le(loop.min, n.IntImm(value, loop.var.dtype)),
                       n.Lt(n.IntImm(value, loop.var.dtype), loop.min + loop.extent))
        return dataclasses.replace(loop, min=n.IntImm(value, loop.var.dtype),
                                   extent=n.IntImm(1, loop.var.dtype),
                                   body=n.IfThenElse(inside, body))


def only_instance(func: n.PrimFunc, counters: dict[str, int]) -> n.PrimFunc:
    """``func`` running only the loop iterations where the counters have these values."""
    return dataclasses.replace(func, body=_OneIteration(counters).visit(func.body))


def assert_real(func: n.PrimFunc, decided) -> None:
    """``decided`` is a Refuted whose counterexample is a call with in-range
    parameters on which the executor really reaches the element outside."""
    assert isinstance(decided, Refuted), decided
    cex = decided.counterexample
    for value in cex.params.values():
        assert INT32[0] <= value <= INT32[1], cex
    if not all(abs(v) <= 64 for v in cex.params.values()):
        # Too many iterations to run whole (a guard that holds only at the edge of
        # int32, `n + 1 < n`): run just the counterexample's loop iteration.
        func = only_instance(func, cex.instances[0].indices)
    assert run(func, **cex.params) not in (None, "assume"), cex  # assumptions hold
    element = (cex.element.buffer, cex.element.indices)
    bad = bad_accesses(func, **cex.params)
    assert any(e == element and cex.instances[0].indices.items() <= env.items()
               for env, e in bad), (cex, bad)


def test_a_quasi_affine_guard_is_modelled_and_refuted_with_a_real_call():
    f = pp.parse(QUARTER.format(low=3, guard="0 <= ((n - i) // 2) // 2"))
    decided = analyses.check_bounds(f)
    assert_real(f, decided)
    assert decided.counterexample.params == {"n": 10}
    assert decided.counterexample.element.indices == (2,)
    assert "unless" not in str(decided)


def test_after_simplify_the_parameter_stays_inside_int32():
    # simplify rewrites the guard to `n >= i`; the counterexample was n = 8589934594.
    f = pp.parse(QUARTER.format(low=2, guard="0 <= ((n - i) // 2) // 2"))
    g = pp.transform.simplify(f)
    assert "if n >= i:" in pp.script(g)
    for func in (f, g):
        decided = analyses.check_bounds(func)
        assert_real(func, decided)
        assert decided.counterexample.params["n"] >= 2


def test_a_parameter_past_its_dtype_is_no_counterexample():
    # Only n = 2**31, which no int32 holds, would reach A[4]; it was the counterexample.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    for i in T.serial(4):
        if n >= 2147483647:
            A[n - 2147483647 + i] = 1.0
''')
    assert analyses.check_bounds(f)
    assert run(f, n=2147483647) is None


def test_within_dtypes_bounds_named_parameters_and_dims():
    i, m = n.Var("i", "int32"), n.Var("m", "int8")
    space = AffineSpace((i,), tuple_name="S")
    space.names.name(m)
    box = within_dtypes(isl.Set("[m] -> { S[i] : 0 <= i < m }"), space)
    assert box.is_equal(isl.Set("[m] -> { S[i] : 0 <= i < m <= 127 }"))
    # i + 1 cannot wrap below a named int32 parameter: m <= 2**31 - 1.
    j, k = n.Var("j", "int32"), n.Var("k", "int32")
    space = AffineSpace((j,), tuple_name="S")
    space.names.name(k)
    assert wrapping_operation(j + 1, space, isl.Set("[k] -> { S[j] : 0 <= j < k }")) is None
    assert wrapping_operation(k - j, space, isl.Set("[k] -> { S[j] : 0 <= j < 5 }")) is not None
    assumed = isl.Set("[k] -> { S[j] : 0 <= j < 5 and k >= 3 }")
    assert wrapping_operation(k - j, space, assumed) is None


def test_a_guard_that_wraps_at_the_edge_is_modelled_as_executed():
    # n - 1 < 0 is false at n = -2**31, where n - 1 wraps; isl reads it exactly.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    for i in T.serial(4):
        if n - 1 < 0:
            A[i + n] = 1.0
''')
    decided = analyses.check_bounds(f)
    assert_real(f, decided)
    k = n.Var("k", "int32")
    space = AffineSpace((), tuple_name="S")
    space.names.name(k)
    box = within_dtypes(isl.Set("[k] -> { S[] }"), space)
    got = executed_set(k - 1 < 0, space, box).intersect(box)
    assert got.is_equal(isl.Set("[k] -> { S[] : -2147483648 < k <= 0 }"))
    with pytest.raises(NotAffineError):
        executed_set((k - 1) // 2 < 0, space, box)


# ---------------------------------------------------------------- random nests


SMALL = range(-40, 41)


@pytest.mark.parametrize("transform", [None, "simplify", "hoist_expression"])
@settings(max_examples=25, deadline=None)
@given(text=parameter_nests())
def test_counterexamples_are_calls_that_really_go_outside(transform, text):
    func = pp.parse(text)
    if transform is not None:
        func = getattr(pp.transform, transform)(func)
    decided = analyses.check_bounds(func)
    if isinstance(decided, Refuted):
        assert_real(func, decided)
    elif not isinstance(decided, Unknown):
        # Proved: no call with a small n goes outside (or breaks an assumption first).
        for value in SMALL:
            assert run(func, n=value) in (None, "assume"), (text, value)
