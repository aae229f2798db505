"""Kernels against the machine: polypad's Numba kernels next to numpy and BLAS.

One run prints a table (and, with ``--json PATH``, writes it as JSON):

- the machine's peak: numpy's float32 matmul (BLAS sgemm) at 2048^3
  (1024^3 with ``--quick``), in GFLOP/s;
- the seed-004 conv layer (Halide's apps/conv_layer sizes: 5 x 80 x 100,
  128 -> 128 channels, 3 x 3; one image with ``--quick``) as the plain nest
  and through ``polypad.examples.conv_layer.schedule``, at the default vector
  width and at 256 bits, against numpy's im2col (the copy included) + BLAS
  sgemm + bias + relu, in GFLOP/s and as a fraction of the sgemm peak;
- the row sum of a 4096 x 4094 float32 array through
  ``polypad.examples.row_summation`` -- unscheduled; with the outer loop
  ``parallel`` (the accumulator is the emitter's own,
  codegen/numba/accumulators.py); and through ``row_summation.schedule`` (rows in
  parallel, each summed in 16 vector lanes by ``rfactor``) -- against
  ``A.sum(axis=1)``; and the unscheduled source with the accumulator edited
  back out (by hand, never polypad output), to show what the accumulator is
  worth;
- the RFC 0077 padded row sum (A laid out as ``[i, j // 4, j % 4]`` with pad
  value 0.0, then ``sequential_buffer_access``), guarded and overcomputed
  (``remove_branching_through_overcompute``);
- a vectorized elementwise kernel (``B = A * 2 + 1``, 4096 x 4096, the row
  split by 16 and the inner loop vectorized) emitted in place (the default
  flags) against the same loop in a helper function (``fastmath="full"``,
  which keeps helpers): what inlining the vectorized loops is worth.

For every row: the median time of ``REPEAT`` calls after a warm-up call, the
rate (GB/s for memory-bound kernels: bytes read and written once; GFLOP/s for
sgemm), the ratio to the row's peer (peer time / row time: above 1 is
faster), the fraction of the sgemm peak in GFLOP/s (one add per element for
a row sum: these kernels are bound by memory or by the add chain, never by
the FPU's peak), the build time
(``codegen.build``: lowering, the bounds proof and emission), the cold compile
(an empty kernel cache) and the cached load (Numba's on-disk cache, with the
in-process caches dropped), and a correctness check against float64.  Last,
issue 12's targets, each met or missed by how much, from the same run.

numpy's OpenBLAS is told its CPU by ``OPENBLAS_CORETYPE`` (and cache size by
``OPENBLAS_L2_SIZE``) on some machines, which forces its AVX2 kernel on an
AVX-512 machine (half the sgemm rate): the script re-executes itself without
both before numpy loads.

Run: ``python benchmarks/bench_kernels.py [--quick] [--json PATH]``.
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
import atexit  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# A fresh kernel cache, so that "cold" is a real compile; removed at exit.
os.environ["POLYPAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="polypad_bench_kernels_")
atexit.register(shutil.rmtree, os.environ["POLYPAD_CACHE_DIR"], ignore_errors=True)

import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from codegen.numba import compiler  # noqa: E402
from codegen.numba import vector_width as widths  # noqa: E402
from polypad.examples import conv_layer  # noqa: E402
from polypad.examples.row_summation import row_summation  # noqa: E402
from polypad.examples.row_summation import schedule as row_summation_schedule  # noqa: E402
from polypad.transform import remove_branching_through_overcompute  # noqa: E402

ROWS, COLS = 4096, 4094


def median_s(fn, repeat: int) -> float:
    fn()  # warm-up (and, for a kernel, the first call's checks)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def build_times(func, **options) -> tuple[codegen.Kernel, dict]:
    """``func`` built and compiled, with the build, cold compile and cached load times."""
    start = time.perf_counter()
    kernel = codegen.build(func, **options)
    built = time.perf_counter() - start
    start = time.perf_counter()
    kernel.compile()
    cold = time.perf_counter() - start
    # Drop the in-process caches: the next compile loads Numba's on-disk cache.
    width = widths.resolve(options.get("vector_width"))
    name = compiler.module_name(kernel.source, width)
    compiler._loaded.pop(name, None)
    sys.modules.pop(name, None)
    kernel = codegen.build(func, **options)
    start = time.perf_counter()
    kernel.compile()
    cached = time.perf_counter() - start
    return kernel, {"build_s": built, "compile_cold_s": cold, "load_cached_s": cached}


def row(name: str, seconds: float, *, gbytes: float | None = None,
        gflop: float | None = None, peer: str | None = None, peer_s: float | None = None,
        times: dict | None = None, check: str = "") -> dict:
    return {"name": name, "time_ms": seconds * 1e3,
            "GB/s": gbytes / seconds if gbytes else None,
            "GFLOP/s": gflop / seconds if gflop else None,
            "peer": peer, "ratio": peer_s / seconds if peer_s else None,
            **(times or {}), "check": check}


def check_sum(out: np.ndarray, want: np.ndarray) -> str:
    error = float(np.max(np.abs(out.astype(np.float64) - want)))
    scale = float(np.max(np.abs(want)))
    assert np.all(np.isfinite(out)) and error <= 1e-4 * max(scale, 1.0) + 1e-3, error
    return f"ok (max err {error:.0e} vs float64)"


# ---------------------------------------------------------------- rows

def sgemm_rows(size: int, repeat: int) -> list[dict]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    out = np.empty((size, size), np.float32)
    seconds = median_s(lambda: np.matmul(a, b, out=out), repeat)
    probe = rng.integers(0, size, 8)
    want = a[probe].astype(np.float64) @ b.astype(np.float64)
    error = float(np.max(np.abs(out[probe] - want)))
    assert error < 1e-2, error
    return [row(f"numpy sgemm {size}^3 (the peak)", seconds, gflop=2 * size**3 / 1e9,
                check=f"ok (max err {error:.0e} on 8 rows vs float64)")]


def row_sum_rows(repeat: int) -> list[dict]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    want = a.sum(axis=1, dtype=np.float64)
    b = np.empty(ROWS, np.float32)
    gbytes, gflop = (a.nbytes + b.nbytes) / 1e9, a.size / 1e9  # one add per element
    numpy_s = median_s(lambda: a.sum(axis=1), repeat)
    rows = [row("row sum 4096x4094: numpy A.sum(axis=1)", numpy_s, gbytes=gbytes, gflop=gflop,
                check=check_sum(a.sum(axis=1), want))]

    sch = pp.Schedule(row_summation)
    sch.parallel("i")
    unscheduled, t_unscheduled = build_times(row_summation)
    scheduled, t_scheduled = build_times(sch.func)
    lanes, t_lanes = build_times(row_summation_schedule().func)
    # The emission before the accumulator: B[i] loaded and stored every iteration.
    before = unscheduled.source.replace(
        """        B_acc = B[i]
        for j in range(m):
            B_acc = B_acc + A[i, j]
        B[i] = B_acc""", """        for j in range(m):
            B[i] = B[i] + A[i, j]""").replace("cache=True, ", "")
    assert before != unscheduled.source.replace("cache=True, ", ""), "the edit must apply"
    namespace: dict = {}
    exec(compile(before, "<edited kernel>", "exec"), namespace)  # noqa: S102
    for label, fn, times in [
        ("polypad unscheduled", unscheduled, t_unscheduled),
        ("polypad unscheduled, accumulator edited out", namespace["kernel"], None),
        ("polypad parallel(i) + accumulator", scheduled, t_scheduled),
        ("polypad.examples.row_summation.schedule (parallel rows, rfactor "
         "into 16 lanes)", lanes, t_lanes),
    ]:
        b[:] = np.nan
        seconds = median_s(lambda fn=fn: fn(a, b, ROWS, COLS), repeat)
        rows.append(row(f"row sum 4096x4094: {label}", seconds, gbytes=gbytes, gflop=gflop,
                        peer="numpy A.sum(axis=1)", peer_s=numpy_s, times=times,
                        check=check_sum(b, want)))
    return rows


RFC_ROW_SUM = f'''
@T.prim_func
def row_summation(A: T.Buffer(({ROWS}, {COLS}), "float32"), B: T.Buffer(({ROWS},), "float32")):
    for i in T.serial({ROWS}):
        B[i] = 0.0
        for j in T.serial({COLS}):
            B[i] = B[i] + A[i, j]
'''


def padded_rows(repeat: int) -> list[dict]:
    sch = pp.Schedule(pp.parse(RFC_ROW_SUM))
    sch.transform_layout(None, "A", lambda i, j: [i, j // 4, j % 4], pad_value=0.0)
    sch.sequential_buffer_access(None, "A")
    guarded = sch.func
    overcomputed = remove_branching_through_overcompute(guarded)
    assert overcomputed is not guarded, "the guard should go"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    packed = np.zeros((ROWS, COLS // 4 + 1, 4), np.float32)
    packed.reshape(ROWS, -1)[:, :COLS] = a
    want = a.sum(axis=1, dtype=np.float64)
    b = np.empty(ROWS, np.float32)
    gbytes, gflop = (packed.nbytes + b.nbytes) / 1e9, packed.size / 1e9
    rows, guarded_s = [], None
    for label, func in [("guarded", guarded), ("overcomputed", overcomputed)]:
        kernel, times = build_times(func)
        b[:] = np.nan
        seconds = median_s(lambda k=kernel: k(packed, b), repeat)
        rows.append(row(f"RFC padded row sum (x4): {label}", seconds, gbytes=gbytes,
                        gflop=gflop,
                        peer="guarded" if guarded_s else None, peer_s=guarded_s,
                        times=times, check=check_sum(b, want)))
        guarded_s = guarded_s or seconds
    return rows


def im2col_conv(input: np.ndarray, filter: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """relu(conv + bias) as numpy writes it: im2col (a copy), one BLAS sgemm, bias, relu."""
    n, hp, wp, ci = input.shape
    windows = np.lib.stride_tricks.sliding_window_view(input, (3, 3), axis=(1, 2))
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * (hp - 2) * (wp - 2), 9 * ci)
    weights = filter.transpose(1, 2, 0, 3).reshape(9 * ci, -1)
    out = cols @ weights
    out += bias
    np.maximum(out, 0, out=out)
    return out.reshape(n, hp - 2, wp - 2, -1)


def conv_rows(repeat: int, quick: bool) -> list[dict]:
    sizes = dict(conv_layer.HALIDE_SIZES)
    if quick:
        sizes["n"] = 1
    n, ci, co, w, h = (sizes[k] for k in ("n", "ci", "co", "w", "h"))
    rng = np.random.default_rng(0)
    inp = rng.standard_normal((n, h + 2, w + 2, ci), dtype=np.float32)
    filt = rng.standard_normal((ci, 3, 3, co), dtype=np.float32)
    bias = rng.standard_normal(co, dtype=np.float32)
    want = im2col_conv(inp.astype(np.float64), filt.astype(np.float64), bias)
    out = np.empty((n, h, w, co), np.float32)
    gflop = 2.0 * n * h * w * co * ci * 9 / 1e9
    label = f"conv {n}x{h}x{w}, {ci}->{co}, 3x3"

    def check(got: np.ndarray) -> str:
        error = float(np.max(np.abs(got - want)))
        assert error < 1e-3 * max(1.0, float(np.max(np.abs(want)))), error
        return f"ok (max err {error:.0e} vs float64)"

    peer_s = median_s(lambda: im2col_conv(inp, filt, bias), repeat)
    rows = [row(f"{label}: numpy im2col + BLAS + bias + relu", peer_s, gflop=gflop,
                check=check(im2col_conv(inp, filt, bias)))]
    plain = conv_layer.conv_layer(n, ci, co, w, h)
    start = time.perf_counter()
    scheduled = conv_layer.schedule(plain).func
    schedule_s = time.perf_counter() - start
    versions = [("plain nest", plain, {}, 1),
                ("polypad.examples.conv_layer.schedule", scheduled, {}, repeat),
                ("the same schedule, vector_width=256", scheduled, {"vector_width": 256},
                 repeat)]
    for name, func, options, runs in versions:
        kernel, times = build_times(func, **options)
        if name != "plain nest":
            times["schedule_s"] = schedule_s
        out[:] = np.nan
        seconds = median_s(lambda k=kernel: k(inp, filt, bias, out), runs)
        rows.append(row(f"{label}: {name}", seconds, gflop=gflop,
                        peer="numpy im2col + BLAS", peer_s=peer_s, times=times,
                        check=check(out)))
    return rows


ELEMENTWISE = '''
@T.prim_func
def scale(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i in T.serial(4096):
        for j in T.serial(4096):
            B[i, j] = A[i, j] * 2.0 + 1.0
'''


def vector_rows(repeat: int) -> list[dict]:
    sch = pp.Schedule(pp.parse(ELEMENTWISE))
    _, inner = sch.split("j", [None, 16])
    sch.vectorize(inner)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    want = a * np.float32(2.0) + np.float32(1.0)
    b = np.empty_like(a)
    gbytes, gflop = 2 * a.nbytes / 1e9, 2 * a.size / 1e9
    rows, helper_s = [], None
    # Multiplying by 2 is exact, so a contracted a * 2 + 1 rounds as the reference.
    for label, mode in [("vectorized loop in a helper (fastmath='full')", "full"),
                        ("vectorized loop in place (fastmath='contract')", "contract")]:
        kernel, times = build_times(sch.func, fastmath=mode)
        b[:] = np.nan
        seconds = median_s(lambda k=kernel: k(a, b), repeat)
        np.testing.assert_array_equal(b, want)
        rows.append(row(f"B = A * 2 + 1, 4096x4096: {label}", seconds, gbytes=gbytes,
                        gflop=gflop,
                        peer="helper" if helper_s else None, peer_s=helper_s, times=times,
                        check="ok (bitwise vs numpy)"))
        helper_s = helper_s or seconds
    return rows


# ---------------------------------------------------------------- output

def table(rows: list[dict], peak: float) -> str:
    header = ["kernel", "ms", "rate", "vs peer", "of peak", "build s", "cold s", "cached s",
              "check"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        rate = (f"{r['GB/s']:.1f} GB/s" if r["GB/s"] else f"{r['GFLOP/s']:.0f} GFLOP/s")
        ratio = f"{r['ratio']:.2f}x {r['peer']}" if r["ratio"] else ""
        of_peak = f"{r['GFLOP/s'] / peak:.1%}" if r["GFLOP/s"] else ""

        times = [f"{r[key]:.3f}" if r.get(key) is not None else ""
                 for key in ("build_s", "compile_cold_s", "load_cached_s")]
        lines.append("| " + " | ".join([
            r["name"], f"{r['time_ms']:.2f}", rate, ratio, of_peak, *times, r["check"]]) + " |")
    return "\n".join(lines)


def targets(rows: list[dict], peak: float) -> list[str]:
    """Issue 12's targets, each met or missed by how much, from this run's rows."""
    def find(prefix: str, part: str) -> dict:
        return next(r for r in rows if r["name"].startswith(prefix) and part in r["name"])

    def verdict(what: str, value: float, goal: float, unit: str, higher: bool = True) -> str:
        met = value >= goal if higher else value <= goal
        gap = "" if met else f" (missed by {abs(goal - value):.2f}{unit})"
        return f"{what}: {value:.2f}{unit}, target {'>=' if higher else '<='} " \
               f"{goal:g}{unit}: {'met' if met else 'NOT met'}{gap}"

    conv = find("conv", "conv_layer.schedule")
    rsum = find("row sum", "row_summation.schedule")
    lines = [verdict("conv vs numpy im2col + BLAS", conv["ratio"], 1.0, "x"),
             verdict("conv fraction of the sgemm peak", conv["GFLOP/s"] / peak * 100, 60, "%"),
             verdict("row sum vs numpy A.sum(axis=1)", rsum["ratio"], 1.0, "x")]
    scheduled = [r for r in rows if "schedule" in r["name"] and r.get("compile_cold_s")]
    lines.append(verdict("slowest compile of a scheduled kernel",
                         max(r["compile_cold_s"] for r in scheduled), 5, " s", higher=False))
    lines.append(verdict("slowest cached load", max(r["load_cached_s"] for r in scheduled),
                         0.5, " s", higher=False))
    return lines


def machine() -> dict:
    model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "numba threads": numba.get_num_threads(),
            "numba": numba.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sgemm 1024^3, fewer repeats")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    repeat = 5 if args.quick else 15
    rows = sgemm_rows(1024 if args.quick else 2048, repeat)
    rows += conv_rows(repeat, args.quick)
    rows += row_sum_rows(repeat)
    rows += padded_rows(repeat)
    rows += vector_rows(repeat)
    info = machine()
    print(f"machine: {info}")
    print(table(rows, rows[0]["GFLOP/s"]))
    print("\ntargets (issue 12), from this run:")
    for line in targets(rows, rows[0]["GFLOP/s"]):
        print("- " + line)
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
