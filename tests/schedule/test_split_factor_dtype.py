"""A split (or tile) factor, or a new loop's stride, past the loop counter's dtype.

The new counters keep the loop's dtype, and the index ``i_0 * stride + i_1`` writes
the stride as a constant of it.  Tiling an ``int8`` loop by 200 used to fail deep in
the IR with ``DTypeError: 200 is outside the range of int8 ...; write it as a wider
constant, e.g. T.int64(200)``, about a constant the caller never wrote.  It is now an
:class:`ArgumentValueError` naming the loop, the factor and the dtype, raised before
anything changes.  A factor up to the dtype's maximum is still split, and runs as the
original for every ``n`` -- which it did not for a factor past half the range: the
outer loop's count ``n // k + (n % k + k - 1) // k`` wrapped (:func:`ceil_div`).
"""

from __future__ import annotations

import pytest
from scalar_runs_support import assert_runs_the_same

from polypad import Schedule, parse
from polypad.errors import ArgumentValueError
from polypad.ir.structural import assert_structural_equal

TEXT = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32")):
    for i in T.serial({extent}):
        B[i] = A[i] * 2
'''

HINT = "the new loops' counters are int8 too, so each factor must be at most 127"


@pytest.mark.parametrize("extent", ["n", "T.int8(120)"])
@pytest.mark.parametrize("apply, factor", [
    (lambda sch: sch.tile(["i"], [200]), 200),
    (lambda sch: sch.tile(["i"], [200], tail="pad"), 200),
    (lambda sch: sch.split("i", [None, 200]), 200),
    (lambda sch: sch.split("i", [None, 128], tail="partition"), 128),
])
def test_a_factor_past_the_counter_dtype_is_refused_by_name(extent, apply, factor):
    func = parse(TEXT.format(extent=extent))
    sch = Schedule(func)
    with pytest.raises(ArgumentValueError) as err:
        apply(sch)
    assert type(err.value) is ArgumentValueError
    assert str(err.value) == (f"split: the factor {factor} of the loop over i is past the "
                              f"range of its int8 counter (at most 127); {HINT}")
    assert sch.func is func and not sch.trace.steps


@pytest.mark.parametrize("extent", ["n", "T.int8(120)"])
def test_a_stride_past_the_counter_dtype_is_refused_by_name(extent):
    func = parse(TEXT.format(extent=extent))
    sch = Schedule(func)
    with pytest.raises(ArgumentValueError) as err:
        sch.split("i", [None, 16, 16])
    assert str(err.value) == (
        "split: the factors [None, 16, 16] of the loop over i give new loop 0 (0 the "
        "outermost) the stride 256, past the range of its int8 counter (at most 127); the "
        "product of the factors inside each new loop must be at most 127")
    assert sch.func is func


@pytest.mark.parametrize("factor, count", [
    # e % k + (k - 1) passes 127 for k > 64: the count's 0-or-1 term is a T.min, as the
    # old form wrapped (126 + 126 at n = 126) to a count of -1 and ran nothing.
    (127, "n // 127 + T.min(n % 127, T.int8(1))"),
    (65, "n // 65 + T.min(n % 65, T.int8(1))"),
    (64, "n // 64 + (n % 64 + 63) // 64"),
])
def test_a_factor_up_to_the_dtype_maximum_splits_and_runs_as_the_original(factor, count):
    func = parse(TEXT.format(extent="n"))
    sch = Schedule(func)
    sch.tile(["i"], [factor])
    assert_structural_equal(sch.func, parse(f'''
@T.prim_func
def f(n: T.int8, A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32")):
    for i_0 in T.serial({count}):
        for i_1 in T.serial(T.int8({factor})):
            if i_1 < n - i_0 * T.int8({factor}):
                B[i_0 * T.int8({factor}) + i_1] = A[i_0 * T.int8({factor}) + i_1] * 2
'''))
    assert_runs_the_same(func, sch.func, values=[(m,) for m in range(-128, 128)])
