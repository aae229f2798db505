"""Scale: deep loop nests and long expressions, the sizes that once crashed.

Two tables.  The first grows a loop nest (extent 2 every 8 levels, 1
elsewhere) and times ``remove_no_op`` and ``simplify`` on it, the Numba
build (nested helper functions past Python's 20 statically nested blocks),
and checks the kernel against the reference executor.  The last column is
the growth exponent of ``remove_no_op`` against the previous depth: it
should stay a small constant (polynomial in depth), where it was once
exponential (72 s at depth 60).

The second grows a sum ``A[i] + A[i] + ...`` and times parsing, the model
(touched region), and both builds, checking Numba against numpy's own
left-to-right float32 sum.

Run: ``python benchmarks/bench_scale.py [--quick]``
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

import analyses  # noqa: E402
import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from polypad.transform import remove_no_op, simplify  # noqa: E402


def nest_text(depth: int) -> str:
    """A ``depth``-deep nest; loops of extent 2 every 8 levels, 1 elsewhere."""
    lines = ["@T.prim_func",
             'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):']
    for k in range(depth):
        lines.append("    " * (k + 1) + f"for i{k} in T.serial({2 if k % 8 == 0 else 1}):")
    last, mid = f"i{depth - 1}", f"i{depth // 2}"
    lines.append("    " * (depth + 1) + f"A[i0 + {last}] = A[i0 + {last}] + B[i8 + {mid}]")
    return "\n".join(lines) + "\n"


def sum_text(terms: int) -> str:
    body = " + ".join(["A[i]"] * terms)
    return ("@T.prim_func\n"
            'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'
            "    for i in T.serial(4):\n"
            f"        B[i] = {body}\n")


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def nests(depths: list[int]) -> None:
    print(f"{'depth':>5} {'remove_no_op s':>14} {'simplify s':>10} {'numba build+run s':>17} "
          f"{'agrees':>6} {'growth':>6}")
    previous = None
    for depth in depths:
        f = pp.parse(nest_text(depth))
        _, no_op = timed(lambda f=f: remove_no_op(f))
        _, simp = timed(lambda f=f: simplify(f))
        b = np.arange(4, dtype=np.float32)
        got, want = np.zeros(4, np.float32), np.zeros(4, np.float32)
        _, build = timed(lambda f=f, got=got, b=b: codegen.build(f)(got, b))  # compiles
        codegen.build(f, target="python")(want, b)
        growth = ("" if previous is None else
                  f"{math.log(no_op / previous[1]) / math.log(depth / previous[0]):.1f}")
        print(f"{depth:>5} {no_op:>14.2f} {simp:>10.2f} {build:>17.2f} "
              f"{str(np.array_equal(got, want)):>6} {growth:>6}", flush=True)
        previous = depth, no_op


def sums(sizes: list[int]) -> None:
    print(f"\n{'terms':>6} {'parse s':>8} {'touched s':>9} {'python build s':>14} "
          f"{'numba build+run s':>17} {'agrees':>6}")
    a = np.random.default_rng(0).random(4, dtype=np.float32)
    for terms in sizes:
        f, parse = timed(lambda terms=terms: pp.parse(sum_text(terms)))
        _, touched = timed(lambda f=f: analyses.domain_touched(f, "A"))
        reference, py_build = timed(lambda f=f: codegen.build(f, target="python"))
        got, ref = np.zeros(4, np.float32), np.zeros(4, np.float32)
        _, nb_build = timed(lambda f=f, got=got: codegen.build(f)(a, got))  # compiles at the call
        want = a.copy()
        for _ in range(terms - 1):
            want = (want + a).astype(np.float32)
        reference(a, ref)
        same = np.array_equal(got, want) and np.array_equal(ref, want)
        print(f"{terms:>6} {parse:>8.2f} {touched:>9.2f} {py_build:>14.2f} "
              f"{nb_build:>17.2f} {str(same):>6}", flush=True)


def main() -> None:
    quick = "--quick" in sys.argv
    nests([12, 16, 24] if quick else [12, 16, 24, 32, 48, 64])
    sums([100, 1000] if quick else [100, 1000, 10_000])


if __name__ == "__main__":
    main()
