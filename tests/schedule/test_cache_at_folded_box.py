"""``cache_read(..., at=loop)`` of a region indexed by ``vi // 2`` and ``vi % 4``.

The box around one iteration's region has an extent whose ISL form has a
piece ``PwAff.max_val`` does not take ("expecting integer affine
expression"): the primitive raised that ``isl.Error`` instead of caching or
refusing (the fuzz's seed 7001, ``--shapes blocks``, case 123).  The box's
size is now read off the extent's graph.
"""

from __future__ import annotations

import numpy as np

import codegen
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse

FOLDED = '''
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), D: T.Buffer((8,), "float32")):
    for i0 in T.serial(7):
        with T.block("S0"):
            vi = T.axis.spatial(8, i0 + 1)
            D[vi] = A[vi // 2, vi % 4] + A[vi % 4, 3 - vi // 2]
'''


def test_a_cache_at_a_loop_over_a_folded_region_runs_the_same():
    original = parse(FOLDED)
    sch = Schedule(original)
    assert sch.cache_read("S0", "A", at="i0") == "A_cache"
    (loop,) = [s for s in walk(sch.func.body) if isinstance(s, n.For)
               and s.var.name == "i0"]
    # One iteration reads A[vi // 2, vi % 4] and A[vi % 4, 3 - vi // 2] at vi = i0 + 1:
    # the box around both is 3 x 4 (rows 0 and 2 at i0 = 3), allocated inside the loop.
    (cache,) = [s.buffer for s in walk(loop.body) if isinstance(s, n.Allocate)]
    assert (cache.name, tuple(cache.shape)) == ("A_cache", (3, 4))
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (4, 4)).astype("float32")
    d = rng.integers(-3, 4, (8,)).astype("float32")
    want = d.copy()
    codegen.build(original, target="python")(a.copy(), want)
    for target in ("python", "numba"):
        got = d.copy()
        codegen.build(sch.func, target=target)(a.copy(), got)
        np.testing.assert_array_equal(got, want, err_msg=target)
