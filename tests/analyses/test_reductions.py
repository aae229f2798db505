"""``analyses.reductions``: which statements are reduction updates, and the dependences
an order that reassociates them must keep -- checked against brute force.

The brute force enumerates every instance of a small function and every pair that
touches one element with a write: an order is legal with reassociation iff it keeps
each such pair in program order, except two instances of one reduction update on its
element; on integers, whose combiners are exact, that exception holds without
reassociation too.  Hypothesis draws orders of whole instances (one band value per instance, so
``reorder_by_map`` may put any instance anywhere); ``reorder_by_map(reassociate=True)``
must accept exactly the legal ones, name a broken pair when it refuses, and compute
what the original computes, bit for bit on integers (to rounding on floats), when it accepts.
"""

from __future__ import annotations

import itertools

import islpy as isl
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codegen
from analyses.dataflow import dependences
from analyses.reductions import find_reductions, reduction_dependences
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.model import extract
from polypad.schedule import Schedule
from polypad.schedule.reschedule_plan import function_schedule, parse_band, place, set_sides
from polypad.schedule.reschedule_scope import scope_of
from polypad.script import parse


def update_func(update: str, guard: str | None = None, dtype: str = "int32") -> n.PrimFunc:
    body = f"B[i] = {update}"
    if guard is not None:
        body = f"if {guard}:\n            {body}"
    return parse(f'''
@T.prim_func
def f(A: T.Buffer((4, 3), "{dtype}"), B: T.Buffer((4,), "{dtype}")):
    for i, k in T.grid(4, 3):
        {body}
''')


@pytest.mark.parametrize(("update", "op"), [
    ("B[i] + A[i, k]", "+"), ("A[i, k] + B[i]", "+"), ("B[i] * A[i, k]", "*"),
    ("T.min(B[i], A[i, k])", "min"), ("T.max(A[i, k] * 2, B[i])", "max"),
    ("B[i] + A[i, k] * A[i, 0]", "+"),
])
def test_reduction_updates_are_found(update, op):
    (r,) = find_reductions(extract(update_func(update)))
    assert (r.statement.name, r.buffer.name, r.op, r.exact) == ("S0", "B", op, True)


@pytest.mark.parametrize(("update", "guard"), [
    ("B[i] - A[i, k]", None),  # not one of + * min max
    ("B[i] * 2 + A[i, k]", None),  # B[i] is not an operand of the top operation
    ("B[i] + B[i]", None),  # reads B twice
    ("B[i] + B[(i + 1) % 4]", None),  # v reads B
    ("B[(i + 1) % 4] + A[i, k]", None),  # reads another element than it writes
    ("B[i] + A[i, k]", "B[0] > 0"),  # the guard reads B
])
def test_other_updates_are_not_reductions(update, guard):
    assert find_reductions(extract(update_func(update, guard))) == ()


def test_a_float_sum_or_max_is_found_but_not_exact():
    (r,) = find_reductions(extract(update_func("B[i] + A[i, k]", dtype="float32")))
    assert not r.exact
    # max keeps the first of two equal zeros: the result's sign depends on the order.
    (r,) = find_reductions(extract(update_func("T.max(B[i], A[i, k])", dtype="float32")))
    assert r.op == "max" and not r.exact
    (r,) = find_reductions(extract(update_func("T.max(B[i], A[i, k])", dtype="int32")))
    assert r.exact


def test_a_data_dependent_guard_keeps_a_reduction():
    (r,) = find_reductions(extract(update_func("B[i] + A[i, k]", guard="A[i, k] > 0")))
    assert r.op == "+"


# ---------------------------------------------------------------- brute force

SHAPES = {
    # init, updates, consumer of each B[i]
    "chain": ('''
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32"), C: T.Buffer((2,), "int32")):
    for i in T.serial(2):
        B[i] = 1
        for k in T.serial(3):
            B[i] = B[i] + A[i, k]
        C[i] = B[i] * 3
''', {"S1"}),
    # one accumulator read after every row: the partial sums are observed
    "running": ('''
@T.prim_func
def f(A: T.Buffer((3, 2), "int32"), B: T.Buffer((1,), "int32"), C: T.Buffer((3,), "int32")):
    for i in T.serial(3):
        if i == 0:
            B[0] = 0
        for k in T.serial(2):
            B[0] = B[0] * A[i, k]
        C[i] = B[0]
''', {"S1"}),
    # a sum, then a max, into the same element: two reductions
    "two": ('''
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32")):
    for i in T.serial(2):
        for k in T.serial(2):
            B[i] = B[i] + A[i, k]
        for k in T.serial(2):
            B[i] = T.max(A[i, k], B[i])
''', {"S0", "S1"}),
    # a float sum: its updates reorder only with reassociate=True
    "fsum": ('''
@T.prim_func
def f(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2,), "float32")):
    for i in T.serial(2):
        B[i] = T.float32(0)
        for k in T.serial(3):
            B[i] = B[i] + A[i, k]
''', {"S1"}),
    # not a reduction: the order of the terms is the meaning
    "horner": ('''
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32")):
    for i in T.serial(2):
        B[i] = 0
        for k in T.serial(3):
            B[i] = B[i] * 3 + A[i, k]
''', set()),
    # a guarded update, and a second buffer written by the updates' input
    "guarded": ('''
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32"), D: T.Buffer((2, 3), "int32")):
    for i in T.serial(2):
        B[i] = 0
        for k in T.serial(3):
            D[i, k] = A[i, k] + 1
            if k != i:
                B[i] = T.min(B[i], D[i, k])
''', {"S2"}),
}


def points(s: isl.Set) -> list[tuple[int, ...]]:
    found: list[isl.Point] = []
    s.foreach_point(found.append)
    return [tuple(p.get_coordinate_val(isl.dim_type.set, j).to_python()
                  for j in range(s.dim(isl.dim_type.set))) for p in found]


def single(m: isl.Map, values) -> tuple:
    at = isl.Set.universe(m.get_space().domain())
    for j, v in enumerate(values):
        at = at.fix_val(isl.dim_type.set, j, isl.Val.int_from_si(m.get_ctx(), v))
    (out,) = points(m.intersect_domain(at).range())
    return out


def brute(f: n.PrimFunc, reductions: set[str]):
    """Every instance (in program order) and every conflicting pair, with whether it is
    free: two instances of one reduction (named by the test, not the detector) -- free
    always (``"exact"``) where the buffer is an integer one, whose combiners are exact,
    and with reassociation only (``"reassociate"``) where it holds floats."""
    model = extract(f)
    instances, touched = [], {}
    for s in model.statements:
        for values in points(s.domain):
            key = (s.name, values)
            instances.append((single(s.time, values), key))
            touched[key] = [(a.kind, a.buffer.name, single(a.relation, values))
                            for a in s.accesses]
    instances = [key for _, key in sorted(instances)]
    dtypes = {p.name: p.dtype for p in f.params}
    pairs = []
    for a, b in itertools.combinations(instances, 2):
        for (ka, ba, ea), (kb, bb, eb) in itertools.product(touched[a], touched[b]):
            if (ba, ea) == (bb, eb) and "write" in (ka, kb):
                free = None
                if a[0] == b[0] and a[0] in reductions:
                    exact = dtypes[ba].startswith(("int", "uint"))
                    free = "exact" if exact else "reassociate"
                pairs.append((a, b, (ba, ea), free))
    return instances, pairs


def reorders(free: str | None, reassociate: bool) -> bool:
    """Whether a pair whose freedom is ``free`` may run in either order."""
    return free == "exact" or (free == "reassociate" and reassociate)


def band_of(order: list) -> str:
    """A one-member band putting each instance at its place in ``order``."""
    model_loops = {}
    pieces = []
    for t, (name, values) in enumerate(order):
        dims = model_loops.setdefault(name, [f"x{j}" for j in range(len(values))])
        cond = " and ".join(f"{d} = {v}" for d, v in zip(dims, values))
        pieces.append(f"{name}[{', '.join(dims)}] -> [{t}]" + (f" : {cond}" if cond else ""))
    return "{ " + "; ".join(pieces) + " }"


def legalised(instances, pairs, priority: list[int], reassociate: bool) -> list:
    """The instances in ``priority`` order as far as the pairs that must stay allow."""
    after = {x: set() for x in instances}
    for a, b, _, free in pairs:
        if not reorders(free, reassociate):
            after[b].add(a)
    rank = dict(zip(instances, priority))
    done, out = set(), []
    while len(out) < len(instances):
        ready = [x for x in instances if x not in done and after[x] <= done]
        pick = min(ready, key=rank.get)
        done.add(pick)
        out.append(pick)
    return out


def run_on(func: n.PrimFunc, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args = [rng.integers(-2**31, 2**31 - 1, p.shape).astype(p.dtype) for p in func.params]
    with np.errstate(over="ignore"):
        codegen.build(func, target="python")(*args)
    return args


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_reassociating_orders_are_legal_exactly_when_brute_force_says(data):
    shape = data.draw(st.sampled_from(sorted(SHAPES)))
    text, reductions = SHAPES[shape]
    f = parse(text)
    # One loop nest: reorder_by_map keeps separate nests in order, the band orders all.
    assert isinstance(f.body, n.For)
    assert {r.statement.name for r in find_reductions(extract(f))} == reductions
    instances, pairs = brute(f, reductions)
    priority = data.draw(st.permutations(range(len(instances))))
    how = data.draw(st.sampled_from(["raw", "legal", "legal-then-swap"]))
    order = [instances[p] for p in priority] if how == "raw" else [
        x for x in legalised(instances, pairs, priority, reassociate=True)]
    if how == "legal-then-swap":
        j = data.draw(st.integers(0, len(order) - 2))
        order[j], order[j + 1] = order[j + 1], order[j]
    place_of = {x: t for t, x in enumerate(order)}
    band = band_of(order)
    for reassociate in (True, False):
        broken = [(a, b, e) for a, b, e, free in pairs
                  if place_of[a] > place_of[b] and not reorders(free, reassociate)]
        sch = Schedule(f)
        try:
            sch.reorder_by_map(None, band, ("t",), reassociate=reassociate)
        except IllegalTransformError as err:
            assert broken, f"refused a legal order ({reassociate=}): {err}"
            cex = err.evidence
            src, dst = ((x.statement, tuple(x.indices.values())) for x in cex.instances)
            element = (cex.element.buffer, cex.element.indices)
            assert (src, dst, element) in broken, f"{cex} is not a broken pair"
            continue
        assert not broken, f"accepted an order that breaks {broken[0]} ({reassociate=})"
        for seed in range(2):
            for want, got in zip(run_on(f, seed), run_on(sch.func, seed), strict=True):
                if want.dtype.kind == "f":  # reassociated float sums round differently
                    np.testing.assert_allclose(got, want, rtol=1e-6)
                else:
                    np.testing.assert_array_equal(got, want)


def test_value_based_dependences_alone_would_let_an_update_pass_the_init():
    """Why the pairs around each update are needed: dataflow relates the init to the
    first update only, so without update-to-update pairs S1(i, 1) may run before it."""
    f = parse(SHAPES["chain"][0])
    band = ("{ S0[i] -> [i, 1]; S1[i, k] -> [i, 0] : k = 1; S1[i, k] -> [i, k + 2] : k != 1; "
            "S2[i] -> [i, 9] }")
    scope = scope_of(f, None)
    bands = parse_band(scope, band, "test")
    placements = [place(s, bands[s.name]) for s in scope.statements]
    set_sides(placements, 2)
    schedule = function_schedule(scope.model, {p.statement.name: p for p in placements}, 2)
    order = schedule.lex_ge_union_map(schedule)  # src -> dst not strictly after

    def broken(tagged: isl.UnionMap) -> isl.UnionMap:
        return tagged.zip().intersect_domain(order.wrap()).zip()

    naive = _without(dependences(f).tagged("all"), "S1")
    assert broken(naive).is_empty()  # wrongly legal
    exact = reduction_dependences(f)
    assert not broken(exact.tagged("all")).is_empty()
    cex = exact.violations(schedule)
    assert [str(x) for x in cex.instances] == ["S0(i=0)", "S1(i=0, k=1)"]


def _without(tagged: isl.UnionMap, name: str) -> isl.UnionMap:
    kept = isl.UnionMap.empty(tagged.get_space())

    def keep(m: isl.Map) -> None:
        nonlocal kept
        space = m.get_space()
        if not (space.domain().unwrap().get_tuple_name(isl.dim_type.in_) == name
                == space.range().unwrap().get_tuple_name(isl.dim_type.in_)):
            kept = kept.union(isl.UnionMap.from_map(m))

    tagged.foreach_map(keep)
    return kept
