"""Known buffer values TVM's Simplify proves in part of a buffer, and folding what they give.

Issue 9, point 8 (continued from ``test_tvm_capabilities_simplify.py``).
TVM's ``TestSimplifyUsingPartiallyProvenBufferValueGather`` and ``...Scatter``:
a convolution over a buffer whose padding is assumed 0 leaves 0 in the
output's padding, so a clean-up loop over it does nothing.  polypad proves
that each accumulation keeps the 0 stored before it
(:func:`analyses.stored_value.preserving_writes`), and both simplify and
remove_no_op then drop the clean-up.  After a known value replaces a load,
the constants are folded as executed (:func:`polypad.transform._fold.fold_constant`).
"""

from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np
import pytest
from inputs_support import make_inputs
from pass_support import checked, run
from tvm_support import assert_rewrites, assert_unchanged, prim

import codegen
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.script import script
from polypad.semantics.interpreter import _ARITH, convert
from polypad.transform import remove_no_op, simplify
from polypad.transform._fold import fold_constant


def rewrites(params, before, expected):
    return assert_rewrites(simplify, params, before, expected)


def unchanged(params, body):
    assert_unchanged(simplify, params, body)


# ---------------------------------------------------------------- gather and scatter

GATHER_SCATTER_PARAMS = ('A: T.Buffer((24,), "int32"), B: T.Buffer((24,), "int32"), '
                         'F: T.Buffer((3,), "int32")')
PADDING_ASSUMPTION = """
for i in T.serial(24):
    T.assume(3 <= i and i < 17 or A[i] == 0)
"""
CLEANUP = """
for i in T.serial(24):
    if i < 3 or 19 <= i:
        if B[i] != 0:
            B[i] = 0
"""
GATHER = """
for i in T.serial(24):
    B[i] = 0
    for f in T.serial(3):
        if 0 <= i - f:
            B[i] = B[i] + A[i - f] * F[f]
"""
SCATTER = """
for i in T.serial(24):
    B[i] = 0
for i in T.serial(24):
    for f in T.serial(3):
        if i + f < 24:
            B[i + f] = B[i + f] + A[i] * F[f]
"""


def test_simplify_using_partially_proven_buffer_value_gather():
    """A is 0 outside [3, 17), so after the convolution B is 0 outside [3, 19): the
    clean-up loop over that padding never changes anything and goes."""
    rewrites(GATHER_SCATTER_PARAMS, PADDING_ASSUMPTION + GATHER + CLEANUP,
             PADDING_ASSUMPTION + GATHER)


def test_simplify_using_partially_proven_buffer_value_scatter():
    rewrites(GATHER_SCATTER_PARAMS, PADDING_ASSUMPTION + SCATTER + CLEANUP,
             PADDING_ASSUMPTION + SCATTER)


def test_remove_no_op_removes_the_gather_cleanup():
    assert_rewrites(remove_no_op, GATHER_SCATTER_PARAMS, PADDING_ASSUMPTION + GATHER + CLEANUP,
                    PADDING_ASSUMPTION + GATHER)


def test_scatter_cleanup_is_removed_by_remove_no_op():
    assert_rewrites(remove_no_op, GATHER_SCATTER_PARAMS,
                    PADDING_ASSUMPTION + SCATTER + CLEANUP, PADDING_ASSUMPTION + SCATTER)


def test_gather_cleanup_stays_where_the_padding_is_not_known():
    """A is known to be 0 only outside [3, 18): B[19] reads A[17], which may be anything."""
    unchanged(GATHER_SCATTER_PARAMS,
              PADDING_ASSUMPTION.replace("i < 17", "i < 18") + GATHER + CLEANUP)


def test_gather_cleanup_stays_after_a_write_that_changes_the_padding():
    unchanged(GATHER_SCATTER_PARAMS, PADDING_ASSUMPTION + GATHER + """
B[20] = F[0]
""" + CLEANUP)


def test_float_gather_cleanup_stays():
    """With floats, ``B[i] + A[i - f] * F[f]`` keeps 0.0 only if ``F[f]`` is finite (0 * inf
    is NaN): kept constants are integer (or boolean) ones, so nothing is removed."""
    unchanged(GATHER_SCATTER_PARAMS.replace("int32", "float32"),
              (PADDING_ASSUMPTION + GATHER + CLEANUP).replace("== 0", "== 0.0")
              .replace("= 0\n", "= 0.0\n").replace("!= 0", "!= 0.0"))

def _convolution(kind: str, size: int, taps: int, lo: int, hi: int, keep: tuple[int, int]):
    """A gather or scatter convolution over A, zero outside [lo, hi), and a clean-up
    that zeroes B outside ``keep``."""
    params = (f'A: T.Buffer(({size},), "int32"), B: T.Buffer(({size},), "int32"), '
              f'F: T.Buffer(({taps},), "int32")')
    assume = f"""
for i in T.serial({size}):
    T.assume({lo} <= i and i < {hi} or A[i] == 0)
"""
    if kind == "gather":
        compute = f"""
for i in T.serial({size}):
    B[i] = 0
    for f in T.serial({taps}):
        if 0 <= i - f:
            B[i] = B[i] + A[i - f] * F[f]
"""
    else:
        compute = f"""
for i in T.serial({size}):
    B[i] = 0
for i in T.serial({size}):
    for f in T.serial({taps}):
        if i + f < {size}:
            B[i + f] = B[i + f] + A[i] * F[f]
"""
    cleanup = f"""
for i in T.serial({size}):
    if i < {keep[0]} or {keep[1]} <= i:
        if B[i] != 0:
            B[i] = 0
"""
    return params, assume + compute, cleanup


@pytest.mark.parametrize("seed", range(12))
def test_random_convolutions_lose_the_clean_up_exactly_when_it_is_dead(seed):
    """Brute force: B[e] can be nonzero iff some tap reads A in [lo, hi); the clean-up
    must go exactly when none of the elements it zeroes can be, and the results stay."""
    rng = np.random.default_rng(seed)
    size, taps = 12, int(rng.integers(1, 4))
    lo = int(rng.integers(0, 6))
    hi = int(rng.integers(lo + 1, size + 1))
    # Around B's nonzero region [lo, hi + taps - 1): on its edge, or one element inside.
    keep = (max(lo - int(rng.integers(-1, 2)), 0), hi + taps - 1 - int(rng.integers(-1, 2)))
    kind = ("gather", "scatter")[seed % 2]
    params, program, cleanup = _convolution(kind, size, taps, lo, hi, keep)
    f = prim(params, program + cleanup)
    maybe_nonzero = {e for e in range(size) for k in range(taps) if lo <= e - k < hi}
    dead = not any(e < keep[0] or e >= keep[1] for e in maybe_nonzero)
    for pass_ in (simplify, remove_no_op):
        got = checked(pass_(f))
        # (simplify may also simplify the rest, and the clean-up's region)
        assert ("B[i] != 0" in script(got)) is not dead
        if dead and pass_ is remove_no_op:
            assert_structural_equal(got, prim(params, program))
        reference, after = codegen.build(f, target="python"), codegen.build(got, target="python")
        for k in range(4):
            args = make_inputs(f, np.random.default_rng(k))
            for a, b in zip(run(reference, args), run(after, args), strict=True):
                np.testing.assert_array_equal(b, a)


# ---------------------------------------------------------------- folding


def test_known_value_is_folded_into_a_constant():
    """After ``A[0]`` is replaced by -2, ``-2 + 9`` is folded: the store prints ``7``."""
    got = rewrites('A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")', """
        T.assume(A[0] == -2)
        B[0] = A[0] + 9
    """, """
        T.assume(A[0] == -2)
        B[0] = 7
    """)
    assert "B[0] = 7" in script(got)


def test_folding_wraps_like_int32():
    rewrites('A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")', """
        T.assume(A[0] == 2147483647)
        B[0] = A[0] + 1
    """, """
        T.assume(A[0] == 2147483647)
        B[0] = -2147483648
    """)


def test_folding_wraps_like_int8():
    rewrites('A: T.Buffer((1,), "int8"), B: T.Buffer((1,), "int8")', """
        A[0] = T.int8(100)
        B[0] = A[0] * T.int8(3)
    """, """
        A[0] = T.int8(100)
        B[0] = T.int8(44)
    """)


def test_float_folding_is_float32_arithmetic():
    rewrites('A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")', """
        A[0] = 1.5
        B[0] = A[0] * 2.0 - 0.25
    """, """
        A[0] = 1.5
        B[0] = 2.75
    """)


def test_float_sums_that_round_are_not_folded():
    """``0.1 + 0.2`` is 3/10 for the prover but not in float32; ``16777216.0 + 1.0``
    rounds in float32.  Folding either would make the two models disagree."""
    unchanged('A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")', """
        A[0] = 0.1
        A[1] = 16777216.0
        B[0] = A[0] + 0.2
        B[1] = A[1] + 1.0
    """.replace("B[0] = A[0] + 0.2", "B[0] = 0.1 + 0.2").replace(
        "B[1] = A[1] + 1.0", "B[1] = 16777216.0 + 1.0"))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "float16", "float32", "float64"])
def test_constant_folding_matches_execution(dtype):
    """Brute force: every fold equals what the reference executor computes, and a float
    fold is also the exact real result (the prover's reading of the literal)."""
    rng = np.random.default_rng(0)
    ops = [n.Add, n.Sub, n.Mul, n.Min, n.Max]
    ops += [n.Div] if dtype.startswith("float") else [n.FloorDiv, n.FloorMod]
    if dtype.startswith("float"):
        values = [0.0, -0.0, 0.5, 1.5, -2.25, 3.0, 0.1, 65504.0, 16777216.0, 1e30, 2.0**-20]
    else:
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        values = [0, 1, -1, 2, lo, hi, *rng.integers(lo, hi, 6, endpoint=True)]
        values = [int(v) for v in values if lo <= v <= hi]
    imm = (lambda v: n.FloatImm(float(v), dtype)) if dtype.startswith("float") else (
        lambda v: n.IntImm(int(v), dtype))
    folded = 0
    for op in ops:
        for a in values:
            for b in values:
                e = op(imm(a), imm(b))
                got = fold_constant(e)
                if got is e:
                    continue
                folded += 1
                with np.errstate(all="ignore"):
                    want = _executed(e)
                assert got.value == want, (op.__name__, a, b, got, want)
                if dtype.startswith("float"):
                    assert np.signbit(got.value) == np.signbit(want)
                    real = {n.Add: operator.add, n.Sub: operator.sub, n.Mul: operator.mul,
                            n.Div: operator.truediv, n.Min: min, n.Max: max}[op]
                    assert Fraction(repr(got.value)) == real(Fraction(repr(float(a))),
                                                             Fraction(repr(float(b))))
    assert folded > 10


def _executed(e):
    """``e`` evaluated by the reference executor's rules (numpy scalars of its dtype)."""
    return convert(_ARITH[type(e)](convert(e.a.value, e.a.dtype), convert(e.b.value, e.b.dtype)),
                   e.dtype)


def test_float_constants_fold_but_float_identities_stay():
    """TVM's ``TestLoadStoreNoopAfterSimplify``: ``5.0 - 5.0`` folds to ``0.0``, but
    ``A[0] + 0.0`` is not ``A[0]`` bit for bit (-0.0 + 0.0 is +0.0), so it stays
    (integer ``x + 0`` goes: it is ``x`` for every value)."""
    rewrites('A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "int32")', """
        A[0] = A[0] + (5.0 - 5.0)
        B[0] = B[0] + (5 - 5)
    """, """
        A[0] = A[0] + 0.0
        B[0] = B[0]
    """)
