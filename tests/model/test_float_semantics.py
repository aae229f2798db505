"""One IR -> Z3 converter, two meanings of a float: the env's FloatSemantics decides.

Each term is checked by Z3 against the value IEEE 754 (numpy's float32) or the reals
give, so a semantics that converted a float operation the other way fails here."""

import math

import numpy as np
import pytest
import z3

from polypad.errors import PolypadError
from polypad.ir import Buffer, Cast, FloatImm, Max, Min, Var
from polypad.ir.intrinsics import math as math_call
from polypad.ir.intrinsics import undef
from polypad.model import REALS, STRICT_IEEE, FloatSemantics, Z3Env, float_semantics, to_z3
from polypad.model.float_semantics import py_value

x, y = Var("x", "float32"), Var("y", "float32")
i = Var("i")


def value_of(expr, floats: FloatSemantics, **values):
    """``expr`` converted under ``floats`` with the named float32 variables fixed, as
    Z3 evaluates it (a Python value)."""
    env = Z3Env(floats=floats)
    term = to_z3(expr, env)
    solver = z3.Solver(ctx=env.ctx)
    for var in (x, y):
        if var.name in values:
            v = values[var.name]
            solver.add(env.var(var) == (z3.FPVal(v, z3.Float32(env.ctx), ctx=env.ctx)
                                        if floats is STRICT_IEEE else z3.RealVal(v, env.ctx)))
    solver.add(*env.side)
    assert solver.check() == z3.sat
    return py_value(solver.model().eval(term, model_completion=True))


def test_the_strict_ieee_keyword_picks_the_semantics():
    assert float_semantics(False) is REALS and float_semantics(True) is STRICT_IEEE
    assert (REALS.method, STRICT_IEEE.method) == ("z3", "z3-ieee")
    assert not REALS.bit_precise and STRICT_IEEE.bit_precise


def test_an_env_makes_float_symbols_of_its_semantics():
    assert Z3Env().floats is REALS
    assert z3.is_real(to_z3(x, Z3Env()))
    env = Z3Env(floats=STRICT_IEEE)
    assert to_z3(x, env).sort() == z3.Float32(env.ctx)
    assert to_z3(Var("d", "float64"), env).sort() == z3.Float64(env.ctx)
    buf = Buffer("A", (4,), "float16")
    assert to_z3(buf[i], env).sort() == z3.Float16(env.ctx)


@pytest.mark.parametrize("a, b", [(0.1, 0.2), (1e30, 1e30), (3.0, 7.0), (-2.5, 1e-3)])
def test_strict_ieee_arithmetic_rounds_as_float32(a, b):
    fa, fb = np.float32(a), np.float32(b)
    with np.errstate(over="ignore"):  # 1e30 * 1e30 is inf in float32, as Z3 must say
        wants = (fa + fb, fa * fb, fa - fb, fa / fb)
    for expr, want in zip((x + y, x * y, x - y, x / y), wants):
        got = value_of(expr, STRICT_IEEE, x=float(fa), y=float(fb))
        assert got == float(want) or (math.isinf(got) and math.isinf(float(want)))


def test_reals_are_exact_where_ieee_rounds():
    # 0.1 + 0.2 is 3/10 over the reals, and not 0.3f in float32 arithmetic.
    assert value_of(x + y, REALS, x=0.1, y=0.2) == pytest.approx(0.3, abs=0)
    got = value_of(x + y, STRICT_IEEE, x=float(np.float32(0.1)), y=float(np.float32(0.2)))
    assert got == float(np.float32(0.1) + np.float32(0.2))


def test_infinity_exists_only_under_ieee():
    inf = FloatImm(math.inf)
    assert math.isnan(value_of(inf * FloatImm(0.0), STRICT_IEEE))
    with pytest.raises(PolypadError, match="no value over the reals"):
        to_z3(inf * FloatImm(0.0), Z3Env())


def test_same_value_tells_negative_zero_apart_only_under_ieee():
    # FloatImm(-0.0) == FloatImm(0.0) as nodes: the converter must not look one up
    # for the other under IEEE.
    for floats, apart in ((REALS, False), (STRICT_IEEE, True)):
        env = Z3Env(floats=floats)
        a, b = to_z3(FloatImm(-0.0), env), to_z3(FloatImm(0.0), env)
        solver = z3.Solver(ctx=env.ctx)
        solver.add(floats.same_value(a, b))
        assert (solver.check() == z3.unsat) is apart
        # IEEE ==, a comparison in the IR, holds for -0.0 and 0.0 in both.
        assert value_of(FloatImm(-0.0).equal(FloatImm(0.0)), floats) is True


def test_min_and_max_follow_the_first_operand_on_nan_under_ieee():
    nan = FloatImm(math.nan)
    # Python's min(nan, 1.0) is nan and min(1.0, nan) is 1.0, as the reference executor.
    assert math.isnan(value_of(Min(nan, FloatImm(1.0)), STRICT_IEEE))
    assert value_of(Min(FloatImm(1.0), nan), STRICT_IEEE) == 1.0
    assert value_of(Max(FloatImm(2.0), FloatImm(5.0)), REALS) == 5.0


def test_casts_and_exact_intrinsics_under_each_semantics():
    assert value_of(Cast("int32", FloatImm(-2.7)), STRICT_IEEE) == -2
    assert value_of(Cast("int32", FloatImm(-2.7)), REALS) == -2
    assert value_of(math_call("floor", FloatImm(-2.5)), STRICT_IEEE) == -3.0
    assert value_of(math_call("abs", FloatImm(-2.5)), STRICT_IEEE) == 2.5
    assert value_of(math_call("floor", FloatImm(-2.5)), REALS) == -3.0


def test_undef_is_finite_under_ieee():
    env = Z3Env(floats=STRICT_IEEE)
    term = to_z3(undef("float32"), env)
    solver = z3.Solver(ctx=env.ctx)
    solver.add(*env.side, z3.Or(z3.fpIsInf(term, env.ctx), z3.fpIsNaN(term, env.ctx)))
    assert solver.check() == z3.unsat
