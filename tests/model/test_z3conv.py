"""IR to Z3: floor semantics against Python, sorts, buffers, undef, casts.  Each Z3Env has
a Z3 context of its own, so the values and solvers here are made in `env.ctx`."""

import pytest
import z3

from polypad.errors import PolypadError
from polypad.ir import Buffer, Cast, FloatImm, FloorDiv, FloorMod, Let, Max, Min, Select, Var, const
from polypad.ir.intrinsics import assume, likely, math, undef
from polypad.model import Z3Env, to_z3

i, j = Var("i"), Var("j")
x, y = Var("x", "float32"), Var("y", "float32")


def evaluate(term, env: Z3Env, **values):
    """``term`` with the named IR variables fixed, simplified to a Python value."""
    subs = []
    for var in (i, j, x, y):
        if var.name in values:
            v = values[var.name]
            const_term = (z3.IntVal(v, env.ctx) if var.dtype == "int32"
                          else z3.RealVal(v, env.ctx))
            subs.append((env.var(var), const_term))
    out = z3.simplify(z3.substitute(term, *subs))
    if z3.is_int_value(out):
        return out.as_long()
    if z3.is_rational_value(out):
        return out.as_fraction()
    return z3.is_true(out)


@pytest.mark.parametrize("b", [-5, -4, -3, -1, 1, 2, 4])
def test_floor_div_mod_by_constant_match_python(b):
    env = Z3Env()
    q, r = to_z3(i // b, env), to_z3(i % b, env)
    for a in range(-13, 14):
        assert evaluate(q, env, i=a) == a // b
        assert evaluate(r, env, i=a) == a % b


def test_floor_div_mod_by_variable_match_python():
    env = Z3Env()
    q, r = to_z3(FloorDiv(i, j), env), to_z3(FloorMod(i, j), env)
    for a in range(-9, 10):
        for b in (-4, -3, -1, 1, 3, 4):
            assert evaluate(q, env, i=a, j=b) == a // b
            assert evaluate(r, env, i=a, j=b) == a % b


def test_floor_semantics_proved_for_all_integers():
    env = Z3Env()
    q, r = to_z3(i // j, env), to_z3(i % j, env)
    a, b = env.var(i), env.var(j)
    s = z3.Solver(ctx=env.ctx)
    # Floor division: r has the sign of b and a == b*q + r -- except for the one
    # int32 quotient that wraps around, -2**31 // -1.
    s.add(b != 0, z3.Or(a != -2**31, b != -1), z3.Not(z3.And(a == b * q + r,
                                z3.If(b > 0, z3.And(r >= 0, r < b), z3.And(r <= 0, r > b)))))
    s.add(*env.side)
    assert s.check() == z3.unsat


def test_int32_wraps_like_numpy():
    env = Z3Env()
    a = env.var(i)
    q = to_z3(i * 65536 // 65536, env)
    s = z3.Solver(ctx=env.ctx)
    s.add(*env.side, a == 70000)
    assert s.check() == z3.sat and s.model().eval(q).as_long() == 4464
    s = z3.Solver(ctx=env.ctx)
    s.add(*env.side, to_z3(i // -1, env) != -a)
    assert s.check() == z3.sat and s.model().eval(a).as_long() == -2**31
    zero = to_z3(i // j, env), to_z3(i % j, env)
    s = z3.Solver(ctx=env.ctx)
    s.add(*env.side, env.var(j) == 0, z3.Or(zero[0] != 0, zero[1] != 0))
    assert s.check() == z3.unsat  # numpy: a zero divisor gives 0


def test_sorts_and_structure():
    env = Z3Env()
    assert to_z3(i + 1, env).sort() == z3.IntSort(env.ctx)
    assert to_z3(x * 2.0, env).sort() == z3.RealSort(env.ctx)
    assert to_z3(i < j, env).sort() == z3.BoolSort(env.ctx)
    assert evaluate(to_z3(Min(i, j) + Max(i, j), env), env, i=7, j=-2) == 5
    assert evaluate(to_z3(Select(i < 0, 0 - i, i), env), env, i=-6) == 6
    assert evaluate(to_z3(FloatImm(0.1) * 10.0, env), env) == 1  # 0.1 is 1/10, not binary


def test_buffers_are_one_function_each():
    A = Buffer("A", (4, 4), "float32")
    env = Z3Env()
    t1, t2 = to_z3(A[i, j], env), to_z3(A[i, j], env)
    assert t1.eq(t2)
    f = env.buffer(A)
    assert f.arity() == 2 and f.range() == z3.RealSort(env.ctx)
    assert env.lookup(f.name()) is A and env.lookup(str(env.var(i))) is i


def test_undef_is_fresh_per_occurrence():
    env = Z3Env()
    d = to_z3(undef() - undef(), env)
    s = z3.Solver(ctx=env.ctx)
    s.add(d != 0)
    assert s.check() == z3.sat  # undef - undef is not 0
    assert len(env.undefs) == 2


def test_intrinsics_and_casts():
    env = Z3Env()
    assert to_z3(assume(i < 4), env).eq(to_z3(i < 4, env))
    assert to_z3(likely(i < 4), env).eq(to_z3(i < 4, env))
    e1, e2 = to_z3(math("exp", x), env), to_z3(math("exp", y), env)
    assert e1.decl().eq(e2.decl())  # one uninterpreted exp
    assert evaluate(to_z3(math("floor", x), env), env, x="-2.5") == -3
    assert evaluate(to_z3(math("abs", x), env), env, x="-2.5") == pytest.approx(2.5)
    assert evaluate(to_z3(Cast("int32", x), env), env, x="-2.5") == -2  # truncation
    assert evaluate(to_z3(Cast("float32", i), env), env, i=3) == 3
    assert evaluate(to_z3(Cast("int32", i < j), env), env, i=1, j=2) == 1


def test_let_binds_within_body_and_names_stay_distinct():
    env = Z3Env()
    k = Var("k")
    assert evaluate(to_z3(Let(k, i + 1, k * 2), env), env, i=4) == 10
    other_i = Var("i")
    assert not env.var(other_i).eq(env.var(i))


def test_infinity_is_refused():
    with pytest.raises(PolypadError):
        to_z3(x + FloatImm(float("inf")))


def test_constant_fold_sanity():
    assert z3.simplify(to_z3(const(7) // -2)).as_long() == 7 // -2
