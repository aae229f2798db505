"""``rfactor``'s argmax fold and ``transform_layout``'s padded shapes add no integer
wrap-around the original did not have.

The fold of an argmax's partial winners into lane 0 ran over the factored loop
from ``min + 1`` for ``extent - 1`` lanes, which wraps at the top of the counter's
dtype (``m + 1`` at ``m = 127``, int8).  It now does so only where isl shows that
both fit (constants, or the ``T.assume``\\ s before the nest); elsewhere it runs
over the loop's own range, lane 0 included, which folding leaves as it is.

Each rewrite is run against the original at the ends of the int8 range on the
reference executor and Numba, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scalar_runs_support import assert_runs_the_same

from polypad.ir import nodes as n
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

# The factored loop runs from m for n steps; A is read from its start.
ARGMAX8 = '''
@T.prim_func
def f(m: T.int8, n: T.int8, A: T.Buffer((4, 64), "float32"), M: T.Buffer((4,), "float32"),
      I: T.Buffer((4,), "int8")):
    T.assume(1 <= n and n <= 64{extra})
    for i in T.serial(4):
        for j in T.serial(m, m + n):
            I[i] = T.if_then_else(A[i, j - m] > M[i], j, I[i])
            M[i] = T.max(M[i], A[i, j - m])
'''


def _started(func: n.PrimFunc) -> list[np.ndarray]:
    """Few distinct values, so lanes tie; M and I started as a caller would."""
    a = np.random.default_rng(0).integers(-2, 2, (4, 64)).astype("float32")
    a[::2, 1::3] = -np.inf
    return [a, a[:, 0].copy(), np.zeros(4, "int8")]


def _fold(func: n.PrimFunc) -> n.For:
    return next(x for x in walk(func.body) if isinstance(x, n.For) and x.var.name == "j_wb")


@pytest.mark.parametrize("extra, fold", [
    ("", ("m", "n")),                                    # m + 1 wraps at m = 127
    (" and m <= 100", ("m + 1", "n + -1")),              # the assumption keeps it in
], ids=["unbounded", "assumed"])
def test_the_argmax_fold_starts_at_the_second_lane_only_where_that_fits(extra, fold):
    func = parse(ARGMAX8.format(extra=extra))
    sch = Schedule(func)
    sch.rfactor("j")
    verify(sch.func)
    loop = _fold(sch.func)
    assert (script(loop.min), script(loop.extent)) == fold
    # Every m and n at the ends of int8 where the original's counter stays in range.
    values = [(m, k) for k in (1, 2, 3, 64) for m in (-128, -127, -1, 0, 60, 63)
              + tuple(range(128 - k - 2, 128 - k + 1)) if m + k - 1 <= 127]
    if extra:
        values = [(m, k) for m, k in values if m <= 100]
    assert_runs_the_same(func, sch.func, values, inputs=_started)
