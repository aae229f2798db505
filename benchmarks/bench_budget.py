"""Time budgets: the nest that once ran for over 400 s, at growing extents.

``for i in T.serial(N): A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]`` chains
every write to two earlier ones.  Stating "which instance last wrote this
element" costs ISL more cases as N grows, and instantiating the chain fact
by fact used to grow exponentially (0.3 s at N = 8, 13.9 s at N = 14, over
400 s beyond).  The table gives, per extent, the seconds each pass takes
under the default budget and whether it changed the function; the last
columns run the function on random inputs before and after the passes (the
reference executor) and say whether the results agree: the comparison that
keeps a fast answer honest.  The target is <= 5 s per pass at every extent.

Run: ``python benchmarks/bench_budget.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

import analyses  # noqa: E402
import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from polypad import budget  # noqa: E402
from polypad.transform import remove_no_op, simplify  # noqa: E402

CHAIN = '''
@T.prim_func
def chain(A: T.Buffer((7,), "float32"), n: T.int32):
    for i in T.serial({extent}):
        A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]
'''


def agree(f, g) -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(7).astype(np.float32)
    a1, a2 = a.copy(), a.copy()
    codegen.build(f, target="python")(a1, 28)
    codegen.build(g, target="python")(a2, 28)
    return bool(np.array_equal(a1, a2))


def main() -> None:
    print(f"default budget: {budget.default_budget():g} s\n")
    print("| extent | simplify s | changed | remove_no_op s | changed | is_no_op(loop) "
          "| s | results agree |")
    print("|---|---|---|---|---|---|---|---|")
    for extent in ("8", "14", "20", "28", "T.min(n, 28)"):
        f = pp.parse(CHAIN.format(extent=extent))
        row = [extent]
        g = f
        for p in (simplify, remove_no_op):
            t = time.perf_counter()
            out = p(g)
            row += [f"{time.perf_counter() - t:.2f}", "yes" if out is not g else "no"]
            g = out
        t = time.perf_counter()
        decided = analyses.is_no_op(f, f.body)
        row += [type(decided).__name__, f"{time.perf_counter() - t:.2f}", str(agree(f, g))]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
