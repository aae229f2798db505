"""The ISL AST converter against brute force: the loops it builds visit exactly the
schedule's instances, in the schedule's order."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

import codegen
from polypad.errors import PolypadError
from polypad.ir import nodes as ir
from polypad.schedule.ast_to_ir import AstToIR, ast_expr_to_ir, ast_to_ir

LOG = ir.Buffer("L", (256, 4), "int32")
COUNT = ir.Buffer("C", (1,), "int32")


def _logger(names: list[str]):
    """A user-node callback appending (statement, counters...) to the log L."""
    at = ir.BufferLoad(COUNT, (ir.IntImm(0),))

    def user(name: str, args: list[ir.Expr]) -> ir.Stmt:
        stores = [ir.BufferStore(LOG, ir.IntImm(names.index(name)), (at, ir.IntImm(0)))]
        for k, arg in enumerate(args):
            stores.append(ir.BufferStore(LOG, arg, (at, ir.IntImm(k + 1))))
        stores.append(ir.BufferStore(COUNT, at + 1, (ir.IntImm(0),)))
        return ir.SeqStmt(tuple(stores))

    return user


def _points(s: isl.Set) -> list[list[int]]:
    found: list[list[int]] = []

    def take(point):
        found.append([point.get_coordinate_val(isl.dim_type.set, k).to_python()
                      for k in range(s.dim(isl.dim_type.set))])

    s.foreach_point(take)
    return found


def _brute_force(schedule: isl.UnionMap, names: list[str]) -> list[tuple]:
    """Every instance as (time, statement index, counters), sorted by time."""
    maps: list[isl.Map] = []
    schedule.foreach_map(maps.append)
    rows = []
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        for x in _points(m.domain()):
            single = m.intersect_domain(_point_set(m.domain().get_space(), x))
            (t,) = _points(single.range())
            rows.append((tuple(t), names.index(name), tuple(x)))
    return sorted(rows)


def _point_set(space: isl.Space, values: list[int]) -> isl.Set:
    s = isl.Set.universe(space)
    for k, v in enumerate(values):
        s = s.fix_val(isl.dim_type.set, k, isl.Val(str(v)))
    return s


def _run(schedule_text: str, params: dict[str, int]) -> tuple[list[tuple], list[tuple]]:
    """(what the converted loops log, what brute force expects) at ``params``."""
    schedule = isl.UnionMap(schedule_text)
    names = sorted({m.get_tuple_name(isl.dim_type.in_) for m in _maps(schedule)})
    build = isl.AstBuild.from_context(isl.Set.universe(schedule.get_space().params()))
    node = build.node_from_schedule_map(schedule)
    env = {p: ir.Var(p) for p in params}
    body = ast_to_ir(node, _logger(names), env)
    func = ir.PrimFunc("log", (*env.values(), LOG, COUNT), body)
    log = np.zeros(LOG.shape, "int32")
    count = np.zeros(1, "int32")
    codegen.build(func, target="python")(*params.values(), log, count)
    got = [(int(row[0]), tuple(int(v) for v in row[1:])) for row in log[:count[0]]]
    fixed = schedule
    for p, v in params.items():
        fixed = fixed.intersect_params(isl.Set(f"[{p}] -> {{ : {p} = {v} }}"))
    want = [(k, x + (0,) * (3 - len(x))) for _, k, x in _brute_force(fixed, names)]
    return got, want


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


CASES = {
    # Bounds ceil((c0 - n) / 2) and floor((c0 + n) / 3) on negative dividends.
    "negative floor division": (
        "[n] -> { S[i, j] -> [i, j] : 0 <= i < 10 and 2j >= i - n and 3j <= i + n }",
        [{"n": -3}, {"n": 0}, {"n": 4}]),
    # floord(c0, 3) and floord(c0 - 1, 3) + 1 on negative c0.
    "floor bounds below zero": (
        "{ S0[i, j] -> [i, j, 0] : -6 <= i <= 6 and -5 <= j and 3j <= i; "
        "S1[i, j] -> [i, j, 1] : -6 <= i <= 6 and 3j >= i and j <= 3 }", [{}]),
    "min and max bounds": (
        "[n] -> { S[i, j] -> [i, j] : 0 <= i < n and i - 3 <= j <= i and 0 <= j <= 5 }",
        [{"n": 9}, {"n": 2}]),
    "guard with modulo": ("{ S[i] -> [i] : 0 <= i < 20 and i mod 3 != 1 }", [{}]),
    "stride over negatives": ("{ S[i] -> [i] : -20 <= i < 20 and (i + 1) mod 4 = 0 }", [{}]),
    "floor in the schedule": ("{ S[i] -> [floor((i - 5) / 3), -i] : -10 <= i <= 10 }", [{}]),
    "sequence and guard": (
        "{ S0[i] -> [i, 0] : 0 <= i < 6; S1[i] -> [i, 1] : 2 <= i < 9 }", [{}]),
    "interleaved by parity": (
        "{ S0[i] -> [i] : 0 <= i < 10 and i mod 2 = 0; S1[i] -> [i] : 0 <= i < 10 and "
        "i mod 2 = 1 }", [{}]),
    "tiles with a partial tile": (
        "[n] -> { S[i] -> [floor(i / 4), i mod 4] : 0 <= i < n }", [{"n": 14}, {"n": 0}]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_loops_visit_the_schedule_in_order(name):
    text, settings = CASES[name]
    for params in settings:
        got, want = _run(text, params)
        assert got == want, params


PIECEWISE = {
    "select of floor and modulo": "[n] -> { [(floor(n / 3))] : n >= 0; [(-n mod 5)] : n < 0 }",
    "max minus a floor": "[n, m] -> { [(max(n, m) - floor((n - m) / 4))] }",
    "floors and a modulo of a signed value": "[n] -> { [(floor((n - 2) / 3) + (n mod 4))] }",
    "min of three": "[n, m] -> { [(min(min(n, 2m), 7 - n))] }",
}


@pytest.mark.parametrize("name", list(PIECEWISE))
def test_expressions_match_isl_values(name):
    pa = isl.PwAff(PIECEWISE[name])
    params = [pa.get_dim_name(isl.dim_type.param, k) for k in range(pa.dim(isl.dim_type.param))]
    build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space().params()))
    env = {p: ir.Var(p) for p in params}
    expr = ast_expr_to_ir(build.expr_from_pw_aff(pa), env)
    out = ir.Buffer("out", (1,), "int32")
    func = ir.PrimFunc("f", (*env.values(), out), ir.BufferStore(out, expr, (ir.IntImm(0),)))
    kernel = codegen.build(func, target="python")
    for values in np.ndindex(*(13,) * len(params)):
        values = [v - 6 for v in values]
        fixed = ", ".join(f"{p} = {v}" for p, v in zip(params, values, strict=True))
        point = isl.Set(f"[{', '.join(params)}] -> {{ : {fixed} }}")
        if point.intersect(pa.domain()).is_empty():
            continue
        result = np.zeros(1, "int32")
        kernel(*values, result)
        assert result[0] == pa.eval(point.sample_point()).to_python(), values


def test_unknown_identifier_is_named():
    node = isl.AstBuild.from_context(isl.Set("[n] -> { : }")).node_from_schedule_map(
        isl.UnionMap("[n] -> { S[i] -> [i] : 0 <= i < n }"))
    with pytest.raises(PolypadError, match="'n'"):
        ast_to_ir(node, lambda name, args: None)


def test_dropped_statements_leave_nothing():
    node = isl.AstBuild.from_context(isl.Set("{ : }")).node_from_schedule_map(
        isl.UnionMap("{ S[i] -> [i] : 0 <= i < 4 }"))
    assert AstToIR(user=lambda name, args: None).stmt(node) is None
