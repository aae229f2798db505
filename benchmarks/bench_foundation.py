"""Foundation numbers, measured in one run and printed as a table.

- parse + verify + model extraction of a 6-deep loop nest (with a guard and
  quasi-affine indices), against ``ast.parse`` alone as the floor;
- Numba compile time of that kernel cold (empty cache directory) and warm
  (a second process reusing the on-disk cache), each in a fresh process;
- ``row_summation`` throughput at 4096 x 4094 against numpy's ``sum(axis=1)``
  and against the reference interpreter (on a slice: it is slow by design).

Run: ``python benchmarks/bench_foundation.py``
"""

from __future__ import annotations

import ast
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

SIX_DEEP = '''
@T.prim_func
def nest6(A: T.Buffer((4, 6, 8, 6, 4, 16), "float32"),
          B: T.Buffer((4, 6, 8, 6, 4, 14), "float32")):
    for n, c, h, w in T.grid(4, 6, 8, 6):
        for co in T.serial(4):
            for ci in T.serial(14):
                if 4 * co + ci // 4 < 14 and h + w < 12:
                    B[n, c, h, w, co, ci] = (A[n, c, h, w, co, (ci + 2) % 16] * 2.0
                                             + A[n, c, h, w, co, ci // 2])
'''


def _median_ms(fn, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def bench_front_end() -> list[tuple[str, str]]:
    from polypad.ir.verify import verify
    from polypad.model import extract
    from polypad.script import parse

    def parse_only():
        verify(parse(SIX_DEEP))

    def parse_and_model():
        f = parse(SIX_DEEP)
        verify(f)
        model = extract(f)
        for st in model.statements:
            st.domain.count_val()  # force isl to settle the domain

    return [
        ("ast.parse alone (floor)", f"{_median_ms(lambda: ast.parse(SIX_DEEP)):.3f} ms"),
        ("parse + verify, 6-deep nest", f"{_median_ms(parse_only):.3f} ms"),
        ("parse + verify + model, 6-deep nest", f"{_median_ms(parse_and_model):.3f} ms"),
    ]


_COMPILE_CHILD = textwrap.dedent('''
    import time, sys
    import codegen
    from polypad.script import parse
    f = parse(sys.argv[1])
    k = codegen.build(f)
    start = time.perf_counter()
    k.compile()
    print(time.perf_counter() - start)
''')


def bench_compile() -> list[tuple[str, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, POLYPAD_CACHE_DIR=cache)
        for label in ("Numba compile, cold (empty cache)", "Numba compile, warm (on-disk cache)"):
            out = subprocess.run([sys.executable, "-c", _COMPILE_CHILD, SIX_DEEP], env=env,
                                 capture_output=True, text=True, check=True)
            rows.append((label, f"{float(out.stdout.strip()):.3f} s"))
    return rows


def bench_row_summation(rows: int = 4096, cols: int = 4094) -> list[tuple[str, str]]:
    import codegen
    from polypad.demo import bundled_example
    from polypad.script import parse

    f = parse(bundled_example("row_summation"))
    kernel = codegen.build(f)
    kernel.compile()
    reference = codegen.build(f, target="python")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = np.empty(rows, dtype=np.float32)
    t_kernel = _median_ms(lambda: kernel(a, b, rows, cols), 10)
    t_numpy = _median_ms(lambda: a.sum(axis=1), 10)
    small = np.ascontiguousarray(a[:8, :512])
    t_ref = _median_ms(lambda: reference(small, b[:8].copy(), 8, 512), 2)
    ref_per_elem = t_ref / small.size
    gb = a.nbytes / 1e9
    return [
        (f"row_summation {rows}x{cols}, polypad Numba",
         f"{t_kernel:.2f} ms ({gb / t_kernel * 1e3:.2f} GB/s)"),
        (f"row_summation {rows}x{cols}, numpy sum(axis=1)",
         f"{t_numpy:.2f} ms ({gb / t_numpy * 1e3:.2f} GB/s)"),
        ("kernel / numpy time", f"{t_kernel / t_numpy:.2f}x"),
        ("reference interpreter (extrapolated from 8x512)",
         f"{ref_per_elem * a.size / 1e3:.1f} s"),
    ]


def main() -> None:
    table = bench_front_end() + bench_compile() + bench_row_summation()
    width = max(len(k) for k, _ in table)
    print(f"{'measurement':<{width}}  value")
    print("-" * (width + 24))
    for key, value in table:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
