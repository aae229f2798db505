"""The first call of a scheduled CUDA kernel, in a cold process and in a second one.

The issue's goal: compiling a scheduled CUDA kernel takes under 5 s, and a
second process loads it from numba-cuda's on-disk cache
(``codegen.cuda.cache``).  This script runs itself twice, each time in a
fresh Python process sharing one new, empty cache directory
(``POLYPAD_CACHE_DIR``), and prints one row per kernel of the examples'
default GPU schedules (those of ``bench_cuda.py``):

- polypad's part (schedule, barrier plan, emit; the same in both processes);
- the first call (compile or cache load, launch, synchronise) in process 1
  and in process 2;
- how many of the kernel's compiled functions process 2 took from the cache
  (numba-cuda's dispatcher statistics: hits / hits + misses).

A first row says what the process paid before any kernel: importing
``numba.cuda`` and creating the CUDA context.  The kernels are compiled in
the order listed, so the first one also pays Numba's own first compile.

Without a GPU it says so and exits with status 0; with
``NUMBA_ENABLE_CUDASIM=1`` it runs on the simulator (no compile, no cache:
the script's own check, with ``--only elementwise`` at 64 x 64).

Run: ``python benchmarks/bench_cuda_first_call.py [--quick] [--only
sgemm,conv,rowsum,elementwise]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

KEYS = ("sgemm", "conv", "rowsum", "elementwise")


def schedules(only: list[str], quick: bool) -> list[tuple[str, object]]:
    """(label, schedule) of the default GPU schedules ``bench_cuda.py`` times."""
    import bench_cuda as bench

    sgemm, rows, elements = (1024, 4096, 2048) if quick else (4096, 16384, 8192)
    shape = {}
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":  # each thread runs in Python
        elements, shape = 64, dict(threads=16, per_thread=4)
    make = {"sgemm": lambda: (f"SGEMM {sgemm}³", bench.sgemm_schedules(sgemm, False)[0][1]),
            "conv": lambda: ("conv layer", bench.conv_schedule(bench.conv_sizes(quick))),
            "rowsum": lambda: (f"row sum {rows}²", bench.row_sum_schedule(rows)),
            "elementwise": lambda: (f"elementwise {elements}²",
                                    bench.elementwise_schedule(elements, **shape))}
    return [make[key]() for key in only]


def child(only: list[str], quick: bool) -> None:
    """One process's measurements, a JSON object per line on stdout."""
    start = time.perf_counter()
    from numba import cuda

    if not cuda.is_available() and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        print(json.dumps({"no_gpu": True}))
        return
    cuda.current_context()
    print(json.dumps({"label": "import numba.cuda, CUDA context",
                      "setup": time.perf_counter() - start}), flush=True)
    import numpy as np

    import codegen

    for key in only:
        start = time.perf_counter()
        label, sch = schedules([key], quick)[0]
        kernel = codegen.build(sch.func, target="cuda")
        polypad_s = time.perf_counter() - start
        args = [cuda.to_device(np.zeros(tuple(int(e) for e in p.shape), np.dtype(p.dtype)))
                for p in sch.func.params]
        start = time.perf_counter()
        kernel(*args)
        cuda.synchronize()
        first = time.perf_counter() - start
        hits = misses = 0
        for bare, _ in kernel.compile()._impl.kernels:
            stats = getattr(bare, "stats", None)  # the simulator's kernels have none
            if stats is not None:
                hits += sum(stats.cache_hits.values())
                misses += sum(stats.cache_misses.values())
        print(json.dumps({"label": label, "polypad": polypad_s, "first": first,
                          "hits": hits, "misses": misses}), flush=True)


def run_process(only: list[str], quick: bool, cache: str) -> list[dict]:
    """The measurements of one fresh process using the cache directory ``cache``."""
    command = [sys.executable, __file__, "--child", "--only", ",".join(only)]
    command += ["--quick"] if quick else []
    env = dict(os.environ, POLYPAD_CACHE_DIR=cache)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the measuring process failed:\n{done.stdout}{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def table(first: list[dict], second: list[dict]) -> str:
    """The two processes' rows side by side, as a Markdown table."""
    lines = ["| kernel | polypad (s) | first call, process 1 (s) | first call, process 2 (s) "
             "| from the cache in 2 |", "|---|---|---|---|---|"]
    for one, two in zip(first, second, strict=True):
        if "setup" in one:
            lines.append(f"| {one['label']} | | {one['setup']:.2f} | {two['setup']:.2f} | |")
            continue
        total = two["hits"] + two["misses"]
        cached = f"{two['hits']} of {total}" if total else "n/a (simulator)"
        lines.append(f"| {one['label']} | {one['polypad']:.2f} | {one['first']:.2f} | "
                     f"{two['first']:.2f} | {cached} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(KEYS))
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    only = [key for key in options.only.split(",") if key]
    unknown = sorted(set(only) - set(KEYS))
    if unknown:
        parser.error(f"unknown kernels {unknown}; choose from {', '.join(KEYS)}")
    if options.child:
        child(only, options.quick)
        return 0
    with tempfile.TemporaryDirectory(prefix="polypad_first_call_") as cache:
        first = run_process(only, options.quick, cache)
        if first and first[0].get("no_gpu"):
            print("no CUDA GPU (numba.cuda.is_available() is False); nothing to time")
            return 0
        entries = sorted(p.name for p in Path(cache).rglob("*") if p.suffix in (".nbi", ".nbc"))
        second = run_process(only, options.quick, cache)
    print(table(first, second))
    print(f"numba-cuda's cache entries after process 1: {len(entries)} files "
          f"({', '.join(entries[:4])}{' ...' if len(entries) > 4 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
