"""padding_set timing: isl is symbolic, so the time must not grow with the extent.

Compared in the same run with brute-force enumeration (numpy: every logical
index mapped, the image subtracted from the transformed box).  For scale,
TVM 0.27's ``IndexMap.non_surjective_inverse`` takes about 0.6 ms on the
small case on these machines (quoted from the issue, not measured here).

Run: ``python benchmarks/bench_layout.py``
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from polypad.ir import Var
from polypad.layout import IndexMap


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def brute_force_padding(extent: int) -> int:
    """Number of padding elements of ``i -> [i // 4, i % 4]`` on ``[extent]``."""
    i = np.arange(extent, dtype=np.int64)
    rows = (extent + 3) // 4
    used = np.zeros((rows, 4), dtype=bool)
    used[i // 4, i % 4] = True
    return int((~used).sum())


def main() -> None:
    m = IndexMap(lambda i: [i // 4, i % 4])
    rows = []
    for label, shape, brute in (("[14]", (14,), 14), ("[14_000_000]", (14_000_000,), 14_000_000),
                                ("[14_000_001]", (14_000_001,), 14_000_001),
                                ("[n] (symbolic)", (Var("n"),), None)):
        t_isl = _median_ms(lambda shape=shape: m.padding_set(shape), 50)
        size = m.padding_set(shape).count_val() if brute is not None else "symbolic"
        if brute is None:
            t_brute, check = "n/a", ""
        else:
            t_brute = f"{_median_ms(lambda b=brute: brute_force_padding(b), 5):.3f}"
            check = "agree" if brute_force_padding(brute) == int(str(size)) else "DISAGREE"
        rows.append((label, f"{t_isl:.3f}", t_brute, str(size), check))
    header = ("shape", "isl padding_set ms", "brute force ms", "padding elems", "check")
    widths = [max(len(r[k]) for r in rows + [header]) for k in range(5)]
    for row in [header] + rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    print("reference: TVM 0.27 non_surjective_inverse on [14] ~ 0.6 ms (quoted, not measured)")


if __name__ == "__main__":
    main()
