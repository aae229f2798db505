"""The model reads an index under the function's top-level parameter assumptions.

``C[i] = B[i] + B[T.min(i + 2, n - 1)]`` over an ``int8`` ``n`` and ``i``:
``i + 2`` wraps at ``i = 126`` (``n = 127``), where ``T.min`` would pick
``-128``, so the model refuses the index (``NotAffineError``) and with it
every primitive that builds the model.  Under ``T.assume(3 <= n and n <= 60)``
at the top of the function it cannot wrap where the statement runs
(:mod:`polypad.model.parameter_facts`), and ``compute_at``,
``reverse_compute_at``, ``store_at`` and ``cache_read`` go ahead; each result
is compared with the expected function and run against the original for
every assumed ``n``, on the reference executor and Numba.

Only an assumption certain to have run before the statement counts: the
same fact under an ``if``, inside a loop, after the consumer, about a
buffer's value, or in a form that itself wraps, leaves the refusal as it
was without any assumption.
"""

from __future__ import annotations

import numpy as np
import pytest
from scalar_runs_support import assert_runs_the_same

import codegen
from polypad.errors import AssumptionError, NotAffineError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse, script

ASSUMED = "T.assume(3 <= n and n <= 60)"

# {head} goes before the allocation, {producer} into the producer's block.
TEXT = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    {head}B = T.alloc_buffer((64,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            {producer}B[i] = A[i] * 3 + 1
    for i in T.serial(n):
        with T.block("C"):
            C[i] = B[i] + B[T.min(i + T.int8(2), n - T.int8(1))]
    {tail}
'''


def program(head: str = "", producer: str = "", tail: str = "") -> str:
    """TEXT with ``head`` (a statement before the allocation), ``producer`` (one in
    the producer's block) and ``tail`` (one after the consumer's loop)."""
    return TEXT.format(head=f"{head}\n    " if head else "",
                       producer=f"{producer}\n            " if producer else "",
                       tail=tail or "")


def _compute_at(sch: Schedule) -> None:
    sch.compute_at("B", sch.get_loops("C")[0])


def _reverse_compute_at(sch: Schedule) -> None:
    sch.reverse_compute_at("C", sch.get_loops("B")[0])


def _store_at(sch: Schedule) -> None:
    _compute_at(sch)
    sch.store_at("B", sch.get_loops("C")[0])


def _cache_read(sch: Schedule) -> None:
    sch.cache_read("C", "B", "local", at=sch.get_loops("C")[0])


def _split_compute_at(sch: Schedule) -> None:
    io, _ = sch.split(sch.get_loops("C")[0], [None, 4])
    sch.compute_at("B", io)


PRIMITIVES = {"compute_at": _compute_at, "reverse_compute_at": _reverse_compute_at,
              "store_at": _store_at, "cache_read": _cache_read,
              "split_compute_at": _split_compute_at}

SIGNATURE = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    T.assume(3 <= n and n <= 60)
'''

EXPECTED = {
    "compute_at": '''
    B = T.alloc_buffer((64,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
            if i == n - T.int8(2):
                B[n - T.int8(1)] = A[n - T.int8(1)] * 3 + 1
            elif n >= i + T.int8(3):
                B[i + T.int8(2)] = A[i + T.int8(2)] * 3 + 1
        with T.block("C"):
            C[i] = B[i] + B[T.min(i + T.int8(2), n - T.int8(1))]
''',
    "reverse_compute_at": '''
    B = T.alloc_buffer((64,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
        with T.block("C"):
            if i >= T.int8(2):
                C[i - T.int8(2)] = (B[i - T.int8(2)]
                                    + B[T.min(i - T.int8(2) + T.int8(2), n - T.int8(1))])
            if i == n - T.int8(1):
                for i_1 in T.serial(T.max(n - T.int8(2), T.int8(0)),
                                    T.max(n - T.int8(2), T.int8(0)) + T.min(n, T.int8(2))):
                    C[i_1] = B[i_1] + B[T.min(i_1 + T.int8(2), n - T.int8(1))]
''',
    "store_at": '''
    for i in T.serial(n):
        B = T.alloc_buffer((3,), "int32")
        with T.block("B"):
            B[0] = A[i] * 3 + 1
            if i == n - T.int8(2):
                B[n - i - T.int8(1)] = A[n - T.int8(1)] * 3 + 1
            elif n >= i + T.int8(3):
                B[2] = A[i + T.int8(2)] * 3 + 1
        with T.block("C"):
            C[i] = B[0] + B[T.min(n - i - T.int8(1), T.int8(2))]
''',
    "cache_read": '''
    B = T.alloc_buffer((64,), "int32")
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    for i in T.serial(n):
        B_local = T.alloc_buffer((3,), "int32", scope="local")
        with T.block("B_local"):
            B_local[T.int8(0)] = B[i + T.int8(0)]
            if i + T.int8(2) == n:
                B_local[T.int8(1)] = B[i + T.int8(1)]
            elif n >= i + T.int8(3):
                B_local[T.int8(2)] = B[i + T.int8(2)]
        with T.block("C"):
            C[i] = B_local[0] + B_local[T.min(n - i - T.int8(1), T.int8(2))]
''',
    "split_compute_at": '''
    B = T.alloc_buffer((64,), "int32")
    for i_0 in T.serial((n + T.int8(3)) // T.int8(4)):
        with T.block("B"):
            for i in T.serial(T.int8(4) * i_0,
                              T.int8(4) * i_0 + T.min(n - T.int8(4) * i_0, T.int8(6))):
                B[i] = A[i] * 3 + 1
        for i_1 in T.serial(T.int8(4)):
            if i_0 * T.int8(4) + i_1 < n:
                with T.block("C"):
                    C[i_0 * T.int8(4) + i_1] = (
                        B[i_0 * T.int8(4) + i_1]
                        + B[T.min(i_0 * T.int8(4) + i_1 + T.int8(2), n - T.int8(1))])
''',
}

IN_RANGE = [(v,) for v in range(3, 61)]


def _random(seed: int):
    def inputs(func: n.PrimFunc) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.integers(-1000, 1000, p.shape).astype(p.dtype) for p in func.params
                if isinstance(p, n.Buffer)]
    return inputs


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_a_top_level_assumption_keeps_the_index_from_wrapping(name):
    func = parse(program(ASSUMED))
    sch = Schedule(func)
    PRIMITIVES[name](sch)
    verify(sch.func)
    assert_structural_equal(sch.func, parse(SIGNATURE + EXPECTED[name]))
    assert_structural_equal(sch.trace.apply_to(func).func, sch.func)
    for seed in (1, 2):
        assert_runs_the_same(func, sch.func, IN_RANGE, inputs=_random(seed))


def _refusal(text: str, apply) -> NotAffineError:
    """The error ``apply`` raises on ``text``'s function; the refusing primitive leaves
    the function as it was (only a split before it, if any, has been applied)."""
    func = parse(text)
    sch = Schedule(func)
    with pytest.raises(NotAffineError) as err:
        apply(sch)
    if sch.trace.steps:
        assert [step.primitive for step in sch.trace.steps] == ["split"]
    else:
        assert sch.func is func
    return err.value


def _assert_refused_as_unbounded(text: str, apply) -> None:
    """``text`` is refused with the error (class, operation, message) the program with
    no assumption gets, up to the statement's number."""
    plain = _refusal(program(), apply)
    found = _refusal(text, apply)
    assert type(found) is type(plain) is NotAffineError
    assert script(found.expr) == script(plain.expr) == "T.min(i + 2, n - 1)"
    head = ("T.min(i + 2, n - 1) may wrap around its int8 range: i + 2 = 128 at i = 126, "
            "n = 127 (in index 0 of ")
    assert str(plain).startswith(head) and str(found).startswith(head)
    assert str(found.evidence) == str(plain.evidence) == "i + 2 = 128 at i = 126, n = 127"


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_without_the_assumption_every_primitive_is_refused(name):
    err = _refusal(program(), PRIMITIVES[name])
    index = "T.min(i_0 * 4 + i_1 + 2, n - 1)" if name == "split_compute_at" \
        else "T.min(i + 2, n - 1)"
    assert script(err.expr) == index
    # The evidence: the first instance (counters outer first, then n) where the
    # operand of T.min leaves int8, found here by brute force over every int8 n.
    if name == "split_compute_at":
        culprit, first = "i_0 * 4 + i_1 + 2", min(
            (i0, i1, m) for m in range(128) for i0 in range(-(-m // 4)) for i1 in range(4)
            if i0 * 4 + i1 < m and i0 * 4 + i1 + 2 > 127)
        value = first[0] * 4 + first[1] + 2
        names = ("i_0", "i_1", "n")
    else:
        culprit, first = "i + 2", min(
            (i, m) for m in range(128) for i in range(m) if i + 2 > 127)
        value, names = first[0] + 2, ("i", "n")
    assert value > 127
    wrap = err.evidence
    assert (script(wrap.operation), wrap.dtype, wrap.value) == (culprit, "int8", value)
    assert wrap.point == tuple(zip(names, first, strict=True))
    at = ", ".join(f"{k} = {v}" for k, v in wrap.point)
    assert str(err) == (f"{index} may wrap around its int8 range: {culprit} = {value} at "
                        f"{at} (in index 0 of B[{index}] in statement S1)")


UNUSABLE = {
    # Under a branch: where the branch is not taken, nothing bounds n.
    "under_if": program(f"if n > T.int8(0):\n        {ASSUMED}"),
    # Inside a loop: run once per iteration, never for an empty loop.
    "in_loop": program(producer=ASSUMED),
    "in_a_loop_of_its_own": program(f"for j in T.serial(n):\n        {ASSUMED}"),
    # After the consumer: the consumer runs whether or not it holds.
    "after": program(tail=ASSUMED),
    # The upper bound reads a buffer: a fact about memory, not about n.
    "reads_a_buffer": program("T.assume(3 <= n and n <= A[0])"),
    # Mentions a loop counter: only inside that loop.
    "loop_counter": program(producer="T.assume(i < 60 and n <= 60)"),
    # isl would read n + 1 <= n as never true (so nothing would wrap); executed it
    # holds at n = 127, exactly where i + 2 wraps.
    "wraps_itself": program("T.assume(n + T.int8(1) <= n)"),
}


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_an_assumption_not_certain_to_hold_is_not_used(case):
    _assert_refused_as_unbounded(UNUSABLE[case], _compute_at)


def test_a_conjunct_over_parameters_is_used_beside_one_that_reads_a_buffer():
    func = parse(program("T.assume(n <= 60 and A[0] >= 0)"))
    sch = Schedule(func)
    _compute_at(sch)
    assert_structural_equal(sch.func, parse(SIGNATURE.replace(
        "3 <= n and n <= 60", "n <= 60 and A[0] >= 0") + EXPECTED["compute_at"]))


def test_a_violated_assumption_is_reported_by_the_checking_executors():
    # Lowering removes T.assume: a plain Numba kernel relies on it (a false one makes
    # the result void); the reference executor, and Numba with check_assumptions,
    # check it in the original and in the rewrite alike.
    func = parse(program(ASSUMED))
    sch = Schedule(func)
    _compute_at(sch)
    checking = [codegen.build(f, target="python") for f in (func, sch.func)]
    checking += [codegen.build(sch.func, check_assumptions=True)]
    for kernel in checking:
        for value in (2, 61, -5):
            with pytest.raises(AssumptionError, match=f"3 <= n <= 60\\) is false .* n = {value}"):
                kernel(value, np.zeros(64, "int32"), np.zeros(64, "int32"))
