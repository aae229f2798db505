"""A statement moved across a top-level ``T.assume`` (docs/semantics.md, "T.assume").

``C[i] = B[i] + B[T.min(i + 2, n - 1)]`` over ``int8`` ``n`` and ``i`` stands
after ``T.assume(3 <= n and n <= 60)``, whose parameter facts keep ``i + 2``
from wrapping there (:mod:`polypad.model.parameter_facts`).
``reverse_compute_at`` moves it into the producer's loop, before the
assumption, where at ``n = 127`` (excluded) its index does wrap.

That is sound: a call that breaks the assumption is void for the original
and the rewrite alike, and for every ``n`` the assumption allows both
compute the same on both executors.  On the excluded values the checking
executors stop both functions, the original at the assumption, the rewrite
at the assumption or, at ``n = 127``, at the wrapped access that now runs
before it (``BoundsCheckError``); neither returns.  The opposite move
(``compute_at`` of the producer to after the assumption) likewise computes the
same for every allowed ``n``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scalar_runs_support import assert_runs_the_same

import codegen
from polypad.errors import AssumptionError, BoundsCheckError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify
from polypad.schedule import Schedule
from polypad.script import parse

SIGNATURE = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), C: T.Buffer((128,), "int32")):
    B = T.alloc_buffer((128,), "int32")
'''

ORIGINAL = SIGNATURE + '''
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
    T.assume(3 <= n and n <= 60)
    for i in T.serial(n):
        with T.block("C"):
            C[i] = B[i] + B[T.min(i + T.int8(2), n - T.int8(1))]
'''

MOVED_BEFORE = SIGNATURE + '''
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
    T.assume(3 <= n and n <= 60)
'''

MOVED_AFTER = SIGNATURE + '''
    T.assume(3 <= n and n <= 60)
    for i in T.serial(n):
        with T.block("B"):
            B[i] = A[i] * 3 + 1
            if i == n - T.int8(2):
                B[n - T.int8(1)] = A[n - T.int8(1)] * 3 + 1
            elif n >= i + T.int8(3):
                B[i + T.int8(2)] = A[i + T.int8(2)] * 3 + 1
        with T.block("C"):
            C[i] = B[i] + B[T.min(i + T.int8(2), n - T.int8(1))]
'''

ALLOWED = [(v,) for v in range(3, 61)]
EXCLUDED = [-128, -1, 0, 2, 61, 64, 100, 126, 127]


def _inputs(func: n.PrimFunc) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(-1000, 1000, p.shape).astype(p.dtype) for p in func.params
            if isinstance(p, n.Buffer)]


def _stops(kernel, value: int) -> type:
    """The class of the error ``kernel`` stops with at ``n = value``; it must stop."""
    with pytest.raises((AssumptionError, BoundsCheckError)) as err:
        kernel(value, *_inputs(parse(ORIGINAL)))
    return type(err.value)


def test_a_consumer_moved_before_the_assumption_computes_the_same_where_it_holds():
    f = parse(ORIGINAL)
    sch = Schedule(f)
    sch.reverse_compute_at("C", sch.get_loops("B")[0])
    verify(sch.func)
    assert_structural_equal(sch.func, parse(MOVED_BEFORE))
    assert_runs_the_same(f, sch.func, ALLOWED, inputs=_inputs)


def test_a_producer_moved_after_the_assumption_computes_the_same_where_it_holds():
    f = parse(ORIGINAL)
    sch = Schedule(f)
    sch.compute_at("B", sch.get_loops("C")[0])
    assert_structural_equal(sch.func, parse(MOVED_AFTER))
    assert_runs_the_same(f, sch.func, ALLOWED, inputs=_inputs)


def test_where_the_assumption_fails_the_checking_executors_stop_both():
    # Plain Numba is not run here: there a false assumption makes either kernel void.
    original = codegen.build(parse(ORIGINAL), target="python")
    moved = parse(MOVED_BEFORE)
    rewritten = [codegen.build(moved, target="python"),
                 codegen.build(moved, check_assumptions=True)]
    for value in EXCLUDED:
        assert _stops(original, value) is AssumptionError
        # The moved consumer runs before the assumption: at n = 127 its index i_1 + 2
        # wraps to -128 first, which the reference executor catches, and Numba's check
        # of that access, which the bounds analysis cannot decide, too.
        want = BoundsCheckError if value == 127 else AssumptionError
        assert _stops(rewritten[0], value) is want
        assert _stops(rewritten[1], value) is want
