"""Corners of the wrap-around checks: ``store_at`` (and the caches placed at a loop)
shift a buffer's indices to the corner of a box in isl's reader form of the
difference; that form is now checked, over the instances that run, not to wrap
in an operand whose value it takes (:mod:`polypad.schedule.box_indices`).

Where isl's form may wrap (a ``uint8`` stencil clamped at 0: ``4 * io - 2``
leaves uint8 at ``io = 0``), the index is written over int64 and cast back, and
runs as the original for every input; a plain int8/int32/int64 shift stays as
isl writes it; an int64 index that may wrap has no wider form and is refused
with the instance and the parameters.
"""

from __future__ import annotations

import islpy as isl
import pytest
from scalar_runs_support import assert_runs_the_same
from test_at_copies_wrap import STENCIL_U8

from analyses.evidence import Instance
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.layout import IndexMap
from polypad.model import extract
from polypad.schedule import Schedule
from polypad.schedule.box_indices import exact_index, runs_of
from polypad.script import parse, script

# C reads B[max(i, 2) - 2]: the box of B at io is clipped at 0, its corner a max (the
# program whose cache corner wrapped in uint8).
CLAMPED_U8 = STENCIL_U8


def _stored(text: str, split: bool = False):
    func = parse(text)
    sch = Schedule(func)
    loop = "io"
    if split:
        loop, _ = sch.split(sch.get_loops("C")[0], [None, 4])
    sch.compute_at("B", loop)
    sch.store_at("B", loop)
    verify(sch.func)
    return func, sch.func


def _indices_of(func: n.PrimFunc, name: str) -> set[str]:
    out = set()
    for x in walk(func.body):
        if isinstance(x, n.BufferLoad | n.BufferStore) and x.buffer.name == name:
            out.add(script(x.indices[0]))
    return out


def test_store_at_writes_a_uint8_shift_that_may_wrap_over_int64():
    func, out = _stored(CLAMPED_U8)
    wide = 'T.Cast("int64", {})'.format
    assert _indices_of(out, "B") == {
        f'T.Cast("uint8", T.min({wide("i")}, {wide("i")} - 4 * {wide("io")} + 2))',
        "T.if_then_else(io >= 4 or io < 1, ii, ii + 2)",
        f'T.Cast("uint8", T.if_then_else({wide("io")} == 0 and {wide("ii")} < 2, T.int64(0), '
        f'T.if_then_else({wide("io")} == 0 and {wide("ii")} >= 2, {wide("ii")} - 2, '
        f'{wide("ii")})))',
    }
    assert_runs_the_same(func, out)


SYMBOLIC = '''
@T.prim_func
def f(n: T.{dt}, A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    {head}B = T.alloc_buffer((64,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for i in T.serial(n):
        with T.block("C"):
            C[i] = B[i] + B[T.min(i, n - T.{dt}(3)) + T.{dt}(2)]
'''


@pytest.mark.parametrize("dt", ["int8", "int32", "int64"])
@pytest.mark.parametrize("head", ["", "T.assume(3 <= n and n <= 60)\n    "],
                         ids=["unbounded", "assumed"])
def test_store_at_keeps_a_shift_that_cannot_wrap_as_isl_writes_it(dt, head):
    func, out = _stored(SYMBOLIC.format(dt=dt, head=head), split=True)
    assert _indices_of(out, "B") == {"i - 4 * i_0", "i_1", "T.min(n - 4 * i_0 - 1, i_1 + 2)"}
    if dt == "int8":
        assert_runs_the_same(func, out, [(v,) for v in range(3, 61)])


# An int64 index whose operand of max leaves int64 where the statement runs.
INT64 = '''
@T.prim_func
def f(n: T.int64, A: T.Buffer((4,), "int32")):
    for i in T.serial(n):
        A[i % T.int64(4)] = 1
'''


def test_an_int64_index_that_may_wrap_has_no_wider_form_and_is_refused():
    func = parse(INT64)
    model = extract(func)
    (s,) = model.statements
    (i,) = s.loop_vars
    (nvar,) = [p for p in func.params if isinstance(p, n.Var)]
    index = op.floormod(op.max_(op.add(i, nvar), op.const(0, "int64")), op.const(4, "int64"))
    with pytest.raises(IllegalTransformError, match="no wider form") as err:
        exact_index(index, s, model, runs_of(s, None), "store_at('B', 'io')")
    cex = err.value.evidence
    (found,) = cex.instances
    assert isinstance(found, Instance)
    assert found.indices["i"] + cex.params["n"] > 2**63 - 1
    assert 0 <= found.indices["i"] < cex.params["n"]
    # The same index where facts about n (T.assume) keep i + n in int64 stays as it is.
    small = isl.Set(f"[{model.names.name(nvar)}] -> {{ : 0 <= {model.names.name(nvar)} <= 100 }}")
    assert exact_index(index, s, model, runs_of(s, small), "store_at") is index


# ---------------------------------------------------------------- int64 has no wider form

# reorder_by_map over an int64 loop that T.assume bounds only above: isl's extent
# (n - 1) // 4 + 1 wraps at n = -2**63, where the loop then ran 2**61 empty
# iterations (the original none).  The quotient's constant is split off instead.
REORDER64 = '''
@T.prim_func
def f(n: T.int64, A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    T.assume(n <= T.int64(14))
    with T.block("b"):
        for i in T.serial(n):
            B[i // T.int64(4), i % T.int64(4)] = A[i] * 2
'''


def test_an_int64_extent_that_may_wrap_has_its_quotient_split():
    func = parse(REORDER64)
    sch = Schedule(func)
    sch.reorder_by_map("b", "{ b[i] -> [floor(i/4), i mod 4] }", ("io", "ii"))
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    T.assume(n <= T.int64(14))
    with T.block("b"):
        for io in T.serial(n // T.int64(4) + (n % T.int64(4) - T.int64(1)) // T.int64(4)
                           + T.int64(1)):
            for ii in T.serial(T.min(n, T.int64(4))):
                if T.int64(4) * io + ii < n:
                    B[io, ii] = A[T.int64(4) * io + ii] * 2
'''))
    assert_runs_the_same(func, sch.func, [(-2**63,), (-5,), (0,), (1,), (6,), (14,)])


def test_an_int64_extent_with_no_exact_form_is_refused_with_the_parameters():
    from polypad.model import AffineSpace
    from polypad.model.exact_forms import exact_form
    from polypad.model.to_ir import pw_aff_to_expr

    model = extract(parse(INT64))
    (size,) = model.params
    space = AffineSpace([], names=model.names)
    name = model.names.name(size)
    # 2 * n // 3 + 1: no constant inside the quotient, and 2 * n leaves int64 past 2**62.
    pa = isl.PwAff(f"[{name}] -> {{ [(floor((2 * {name}) / 3) + 1)] }}")
    with pytest.raises(IllegalTransformError, match="no wider form") as err:
        exact_form(pa, [], space.names, space, space.universe)
    assert not -2**63 <= 2 * err.value.params[name] < 2**63
    bounded = space.universe.intersect_params(
        isl.Set(f"[{name}] -> {{ : 0 <= {name} <= 1000 }}"))
    kept = exact_form(pa, [], space.names, space, space.universe, bounded)
    assert script(kept) == script(pw_aff_to_expr(pa, [], space.names))  # as isl writes it


def test_an_int64_padding_predicate_that_may_wrap_is_refused_and_one_that_cannot_is_kept():
    size, io, ii = (n.Var(name, "int64") for name in ("n", "io", "ii"))
    four = IndexMap(lambda i: [i // 4, i % 4]).padding_predicate((size,), [io, ii])
    assert script(four) == "4 * io + ii >= n"  # 4 * io + 3 <= n + 3 - 4 + 3 fits int64
    with pytest.raises(IllegalTransformError, match="3 \\* io \\+ ii outside") as err:
        IndexMap(lambda i: [i // 3, i % 3]).padding_predicate((size,), [io, ii])
    assert err.value.params == {"n": 2**63 - 1}


# ---------------------------------------------------------------- physical shapes

def test_a_physical_extent_that_may_leave_int32_is_computed_in_int64():
    size, m = n.Var("n", "int32"), n.Var("m", "int32")
    flat = IndexMap(lambda i, j: [i, j])
    (extent,) = flat.physical_shape((size, m))
    assert script(extent) == 'T.Cast("int64", n) * T.Cast("int64", m)'
    # 65536 * 65536 wrapped to 0 in int32; 4 * ceil(n / 4) to -2**31 at n = 2**31 - 1.
    assert _value(extent, {"n": 65536, "m": 65536}) == 2**32
    (padded,) = IndexMap(lambda i: [i // 4, i % 4]).physical_shape((size,))
    assert script(padded) == '(T.Cast("int64", n) + 3) // 4 * 4'
    assert _value(padded, {"n": 2**31 - 1}) == 2**31


def test_a_physical_extent_that_fits_keeps_its_dtype_and_int64_has_no_wider_one():
    small = n.Var("n", "int16")
    (extent,) = IndexMap(lambda i, j: [i, j]).physical_shape((small, 4))
    assert (script(extent), extent.dtype) == ('T.Cast("int32", n) * 4', "int32")
    (fits,) = IndexMap(lambda i, j: [i, j]).physical_shape((small // 8, 4))
    assert (script(fits), fits.dtype) == ("n // 8 * 4", "int16")
    wide, m = n.Var("n", "int64"), n.Var("m", "int64")
    (product,) = IndexMap(lambda i, j: [i, j]).physical_shape((wide, m))
    assert (script(product), product.dtype) == ("n * m", "int64")
    assert IndexMap(lambda i: [i // 4, i % 4]).physical_shape((10,)) == (12,)


def _value(expr: n.Expr, values: dict[str, int]) -> int:
    names = sorted(values)
    params = ", ".join(f"{k}: T.int32" for k in names)
    g = parse(f'@T.prim_func\ndef g({params}, out: T.Buffer((1,), "{expr.dtype}")):\n'
              f"    out[0] = {script(expr)}\n")
    import numpy as np

    import codegen

    out = np.zeros(1, expr.dtype)
    codegen.build(g, target="python")(*(values[k] for k in names), out)
    return int(out[0])


# Over an unbounded int64 n, the guard 3 * io + ii < n of the last io leaves int64 at
# n = 2**63 - 1 (and would let an instance through that the original never ran).
MOD64 = '''
@T.prim_func
def f(n: T.int64, A: T.Buffer((4,), "int32")):
    {head}for i in T.serial(n):
        A[i % T.int64(4)] = A[i % T.int64(4)] + 1
'''


def test_an_int64_guard_that_may_wrap_is_refused_unless_an_assumption_rules_it_out():
    sch = Schedule(parse(MOD64.format(head="")))
    with pytest.raises(IllegalTransformError, match="3 \\* io \\+ ii < n computes") as err:
        sch.reorder_by_map(None, "{ S0[i] -> [floor(i/3), i mod 3] }", ("io", "ii"))
    assert err.value.evidence.params == {"n": 2**63 - 1}
    func = parse(MOD64.format(head="T.assume(n <= T.int64(1000))\n    "))
    sch = Schedule(func)
    sch.reorder_by_map(None, "{ S1[i] -> [floor(i/3), i mod 3] }", ("io", "ii"))
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int64, A: T.Buffer((4,), "int32")):
    T.assume(n <= T.int64(1000))
    for io in T.serial(n // T.int64(3) + (n % T.int64(3) - T.int64(1)) // T.int64(3)
                       + T.int64(1)):
        for ii in T.serial(T.min(n, T.int64(3))):
            if T.int64(3) * io + ii < n:
                A[(ii - io) % T.int64(4)] = A[(ii - io) % T.int64(4)] + 1
'''))
    assert_runs_the_same(func, sch.func, [(-2**63,), (-1,), (0,), (7,), (1000,)])


def test_a_constant_group_over_int32s_range_flattens_in_int64():
    from polypad.ir import Var
    from polypad.layout.physical import flatten_indices

    i, j = Var("i", "int32"), Var("j", "int32")
    (flat,) = flatten_indices((i, j), (65536, 65536), ())
    assert flat.dtype == "int64"  # i * 65536 + j reaches 2**32 - 1
    (small,) = flatten_indices((i, j), (4096, 4096), ())
    assert small.dtype == "int32"
    wide = Var("w", "int64")
    assert flatten_indices((wide, j), (4, 4), ())[0].dtype == "int64"


def test_store_at_keeps_a_shift_in_a_condition_as_the_plain_difference():
    # A read of B in an if's condition has no statement whose runs would check isl's
    # form: the plain difference (in the box wherever it runs) is kept, and the result
    # runs as the original at every value.
    text = CLAMPED_U8.replace(
        """                C[io * T.uint8(4) + ii] = (
                    B[io * T.uint8(4) + ii]
                    + B[T.max(io * T.uint8(4) + ii, T.uint8(2)) - T.uint8(2)])""",
        """                if B[T.max(io * T.uint8(4) + ii, T.uint8(2)) - T.uint8(2)] % 2 == 0:
                    C[io * T.uint8(4) + ii] = B[io * T.uint8(4) + ii]""")
    func, out = _stored(text)
    conditions = [x.condition for x in walk(out.body) if isinstance(x, n.IfThenElse)]
    assert [script(c) for c in conditions] == [
        "B[T.max(io * 4 + ii, 2) - 2 - T.if_then_else(io >= 1 and io < 4, 4 * io - 2, 4 * io)]"
        " % 2 == 0"]
    assert_runs_the_same(func, out)
