"""The kernel zoo: every kernel as a plain nest, as scheduled, and its numpy peer.

For each kernel of ``benchmarks/zoo_kernels.py`` (matmul, batched 16 x 16
matmul, depthwise conv, transpose, softmax, a two-stage blur, max-pool, int8
dot, layer norm, matrix-vector, argmax, a 1-D stencil, a prefix sum and the
shipped row sum) one run builds the plain nest and the schedule the docs
teach with Numba, and times the three variants one after the other: each
the median of its calls after a warm-up call, the next variant after a pause
(Numba's OpenMP workers spin for a while after a parallel kernel returns and
would take the cores from the next variant's threads).  Every output is
checked against the peer run in float64 (exactly, for integers).  All three
variants run on the same input arrays, each starting on a 64-byte boundary as
TVM's runtime allocates them (``--numpy-placement``: where numpy puts them; see
``zoo.ALIGN``).

It prints ``kernel | plain | scheduled | numpy | scheduled/plain |
scheduled/numpy``: times in ms, ratios as speedups (above 1: the scheduled
kernel is faster).  Compare ratios from one run, not numbers across runs; on
a busy machine the ratios move too, and the header prints the load average.

numpy's OpenBLAS is told its CPU by ``OPENBLAS_CORETYPE`` (and cache size by
``OPENBLAS_L2_SIZE``) on some machines, which forces a slower kernel (the
AVX2 one on an AVX-512 machine): this script re-executes itself without both
before numpy loads, and prints the kernel OpenBLAS chose.

Run: ``python benchmarks/bench_zoo.py [--quick] [--only NAME ...] [--json PATH]
[--numpy-placement]``
(all sizes: under 5 minutes on 2 cores once the kernels are in the cache;
``--quick``: small sizes, seconds).
"""

from __future__ import annotations

import os
import sys

_FORCED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(name in os.environ for name in _FORCED):  # before numpy loads OpenBLAS
    for name in _FORCED:
        os.environ.pop(name, None)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import argparse  # noqa: E402
import ctypes  # noqa: E402
import datetime  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from zoo import ALIGN, ZOO, check, inputs, reference  # noqa: E402

import codegen  # noqa: E402
from codegen.numba import threads  # noqa: E402

PAUSE_S = 0.5  # between variants: lets the last variant's worker threads go to sleep


def openblas_core() -> str:
    """The kernel numpy's OpenBLAS runs (what threadpoolctl reports as
    ``internal_api``/``architecture``), read from the library itself."""
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("internal_api") == "openblas":
                return f"{info.get('architecture')} ({info.get('num_threads')} threads)"
    except ImportError:
        pass
    libs = glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "*openblas*"))
    for lib in libs:
        handle = ctypes.CDLL(lib)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            get = getattr(handle, name, None)
            if get is not None:
                get.restype = ctypes.c_char_p
                return get().decode()
    config = np.show_config(mode="dicts") if "mode" in np.show_config.__code__.co_varnames \
        else {}
    return str(config.get("Build Dependencies", {}).get("blas", "unknown"))


def median_s(call, budget_s: float, least: int = 3, most: int = 50) -> float:
    """The median of ``call``'s times after a warm-up call: as many calls as fit in
    ``budget_s`` (between ``least`` and ``most``)."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    runs = max(least, min(most, int(budget_s / max(first, 1e-6))))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(zoo, sizes: dict, budget_s: float, align: int | None = ALIGN) -> dict:
    """Build, check and time one kernel's three variants."""
    plain_func = zoo.kernel(**sizes)
    start = time.perf_counter()
    scheduled_func = zoo.schedule(plain_func).func
    schedule_s = time.perf_counter() - start
    kernels = {}
    for name, func in (("plain", plain_func), ("scheduled", scheduled_func)):
        start = time.perf_counter()
        kernels[name] = codegen.build(func, target="numba").compile()
        kernels[name + "_build_s"] = time.perf_counter() - start
    args, arrays = inputs(plain_func, sizes, align=align)
    want = reference(zoo, arrays)
    row = {"kernel": zoo.name, "kind": zoo.kind, "sizes": sizes, "peer": zoo.peer_name,
           "schedule_s": schedule_s}
    variants = {"plain": lambda: kernels["plain"](*args),
                "scheduled": lambda: kernels["scheduled"](*args),
                "numpy": lambda: zoo.peer(*arrays)}
    for name, call in variants.items():
        time.sleep(PAUSE_S)
        row[name + "_s"] = median_s(call, budget_s)
        row[name + "_error"] = check(arrays, want)
        row[name + "_build_s"] = kernels.get(name + "_build_s")
    row["rate"] = zoo.work(**sizes) / row["scheduled_s"] / 1e9
    row["unit"] = zoo.unit
    return row


def table(rows: list) -> str:
    lines = ["| kernel | sizes | plain ms | scheduled ms | numpy ms | scheduled / plain "
             "| scheduled / numpy | scheduled rate | largest error | peer |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
        error = max(r["plain_error"], r["scheduled_error"], r["numpy_error"])
        lines.append(
            f"| {r['kernel']} | {sizes} | {r['plain_s'] * 1e3:.3g} | "
            f"{r['scheduled_s'] * 1e3:.3g} | {r['numpy_s'] * 1e3:.3g} | "
            f"{r['plain_s'] / r['scheduled_s']:.2f}x | {r['numpy_s'] / r['scheduled_s']:.2f}x | "
            f"{r['rate']:.1f} {r['unit']} | {error:.1e} | {r['peer']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--only", nargs="*", help="kernel names (prefixes) to run")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds of timed calls per variant (default 1.5; 0.3 quick)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--numpy-placement", action="store_true",
                        help="inputs where numpy allocates them (16 bytes past a page for "
                             f"large ones), not on {ALIGN}-byte boundaries")
    args = parser.parse_args()
    budget = args.budget if args.budget is not None else (0.3 if args.quick else 1.5)
    chosen = [z for z in ZOO if not args.only or any(z.name.startswith(o) for o in args.only)]

    import numba

    load = os.getloadavg()[0]
    placement = "where numpy puts them" if args.numpy_placement else f"{ALIGN}-byte aligned"
    print(f"kernel zoo, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
          f"{os.cpu_count()} CPUs, load average {load:.1f} at the start "
          f"({'busy' if load > 0.5 else 'quiet'}); numpy {np.__version__}, OpenBLAS kernel "
          f"{openblas_core()}; Numba {numba.__version__}, "
          f"threading layer {numba.config.THREADING_LAYER!r} configured, "
          f"{numba.config.NUMBA_NUM_THREADS} threads, OpenMP workers wait: {threads.wait_policy()}"
          f"; inputs {placement}")
    rows = []
    for zoo in chosen:
        sizes = zoo.quick if args.quick else zoo.sizes
        rows.append(bench(zoo, sizes, budget, None if args.numpy_placement else ALIGN))
        r = rows[-1]
        print(f"  {zoo.name}: plain {r['plain_s'] * 1e3:.3g} ms, scheduled "
              f"{r['scheduled_s'] * 1e3:.3g} ms, numpy {r['numpy_s'] * 1e3:.3g} ms", flush=True)
    from numba.np.ufunc import parallel

    print(f"\nthreading layer that ran: {parallel._threading_layer}; "
          f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print(table(rows))
    losers = [r["kernel"] for r in rows
              if r["scheduled_s"] > r["plain_s"] or r["scheduled_s"] > r["numpy_s"]]
    bad = [r["kernel"] for r in rows
           if max(r["plain_error"], r["scheduled_error"], r["numpy_error"]) > 1e-3]
    print(f"\nscheduled slower than the plain nest or numpy: {', '.join(losers) or 'none'}")
    print(f"outputs off the float64 reference by more than 1e-3: {', '.join(bad) or 'none'}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
