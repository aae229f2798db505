"""Numba's threading layers and thread counts, on a quiet and on a busy machine.

A parallel kernel's loop is cut into one chunk per thread (Numba's default
schedule), and the call returns when the last chunk is done: when another
process holds one of the cores, the thread that waits for it finishes a
time slice later (several ms), and a kernel that takes 0.1 ms alone takes
8 ms.  This script measures, for each configuration

- threading layer ``omp`` (GNU OpenMP, Numba's first choice where it loads),
  ``workqueue`` (Numba's own), ``tbb`` (when the TBB library is installed);
- 2 threads or 1; OpenMP's idle workers sleeping at once
  (``OMP_WAIT_POLICY=passive``, polypad's default: codegen/numba/threads.py),
  spinning 300000 turns first (libgomp's own default), 30000 or 1000; chunks of one per thread
  (Numba's default) or 16 smaller chunks taken in turn
  (``numba.set_parallel_chunksize``);

the shipped row sum (``polypad.examples.row_summation.schedule``, 4096 x 4094)
and a sub-millisecond parallel kernel (the same schedule on 128 x 4094), each
parallel and in its serial form (the same schedule without ``parallel``),
with numpy's ``A.sum(axis=1)`` beside them, on the machine as it is and with
one more process spinning on a core.  Each configuration runs in a process of
its own (Numba picks its layer once per process); in a process, each variant
is the median of its calls after a warm-up call, one variant at a time, with
a pause between.

The table gives ms per call and the parallel kernel's time relative to its
serial form (below 1: the threads help; above 1: they cost).  What polypad
does with this is in docs/architecture.md, "Threads and processes".

Run: ``python benchmarks/bench_threading.py [--calls 30]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> environment of the child (and its chunk size).
CONFIGS = {
    "omp, passive (polypad's default)": dict(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="2"),
    "omp, spin 300000 (libgomp's default)": dict(NUMBA_THREADING_LAYER="omp",
                                                 NUMBA_NUM_THREADS="2", GOMP_SPINCOUNT="300000"),
    "omp, spin 30000": dict(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="2",
                            GOMP_SPINCOUNT="30000"),
    "omp, spin 1000": dict(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="2",
                           GOMP_SPINCOUNT="1000"),
    "omp, passive, chunks": dict(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="2",
                                 CHUNKS="16"),
    "workqueue": dict(NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2"),
    "workqueue, chunks": dict(NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2",
                              CHUNKS="16"),
    "tbb": dict(NUMBA_THREADING_LAYER="tbb", NUMBA_NUM_THREADS="2"),
    "omp, passive, 1 thread": dict(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="1"),
}
SIZES = {"row sum 4096": 4096, "row sum 128": 128}
COLS = 4094


def child(calls: int) -> dict:
    """In a child process: time the kernels under this process's configuration."""
    sys.path.insert(0, str(ROOT))
    import numba
    import numpy as np

    import codegen
    from polypad.examples import row_summation
    from polypad.schedule import Schedule

    chunks = int(os.environ.get("CHUNKS", "0"))

    def serial_schedule(func):
        sch = Schedule(func)
        _, lane = sch.split("j", [None, 16], tail="partition")
        sch.rfactor(lane)
        sch.vectorize(lane)
        return sch

    parallel = codegen.build(row_summation.schedule().func, target="numba").compile()
    serial = codegen.build(serial_schedule(row_summation.row_summation).func,
                           target="numba").compile()

    def median_ms(call) -> float:
        call()
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    out = {}
    rng = np.random.default_rng(0)
    for name, rows in SIZES.items():
        A = rng.standard_normal((rows, COLS)).astype(np.float32)
        B = np.zeros(rows, np.float32)
        if chunks:
            numba.set_parallel_chunksize(max(1, rows // chunks))
        variants = {"parallel": lambda A=A, B=B, rows=rows: parallel(A, B, rows, COLS),
                    "serial": lambda A=A, B=B, rows=rows: serial(A, B, rows, COLS),
                    "numpy": lambda A=A, B=B: np.sum(A, axis=1, out=B)}
        for variant, call in variants.items():
            time.sleep(0.3)
            out[f"{name} {variant}"] = median_ms(call)
        assert np.allclose(B, A.astype(np.float64).sum(axis=1), atol=1e-2), name
    from numba.np.ufunc import parallel as layer

    out["layer"] = layer._threading_layer
    from codegen.numba import threads

    out["wait"] = threads.wait_policy()
    return out


def spinner() -> subprocess.Popen:
    """A process that keeps one core busy until it is stopped."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run(config: dict, calls: int) -> dict | str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMP_", "GOMP_", "NUMBA_"))}
    env.update(config)
    proc = subprocess.run([sys.executable, __file__, "--child", "--calls", str(calls)],
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        errors = [line for line in proc.stderr.splitlines() if "Error" in line]
        return errors[-1].strip() if errors else "failed"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="timed calls per variant")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.calls)))
        return
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start "
          f"(other processes count: the machine may already be busy)\n")
    print("| configuration | machine | row sum 4096 x 4094: parallel ms | serial ms | numpy ms "
          "| parallel / serial | row sum 128 x 4094: parallel ms | serial ms | numpy ms "
          "| parallel / serial |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for busy in (False, True):
        for name, config in CONFIGS.items():
            spin = spinner() if busy else None
            try:
                time.sleep(0.2 if busy else 0)
                found = run(config, args.calls)
            finally:
                if spin is not None:
                    spin.kill()
                    spin.wait()
            machine = "+1 core spinning" if busy else "as it is"
            if isinstance(found, str):
                print(f"| {name} | {machine} | {found} |||||||")
                continue
            cells = []
            for size in SIZES:
                p, s, n = (found[f"{size} {v}"] for v in ("parallel", "serial", "numpy"))
                cells += [f"{p:.3g}", f"{s:.3g}", f"{n:.3g}", f"{p / s:.2f}"]
            print(f"| {name} | {machine} | {' | '.join(cells)} |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
