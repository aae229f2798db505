"""Vector width against speed: the measurement behind ``codegen.build``'s default
``vector_width`` (codegen/numba/vector_width.py).

Each kernel is compiled three ways -- as LLVM tunes it for this CPU (no
width set), at 256 and at 512 bits -- and timed in one run, the variants'
calls interleaved (the order rotating) so that a load that comes and goes
on the machine falls on all of them alike.  Timings are the best and the
median of ``repeat`` calls after a warm-up (on a shared machine the best is
the steadier); ``ratio`` is the best 256-bit time over the row's best
(above 1: faster than 256 bits).  ``registers`` are the widest vector
registers in the machine code (a float64 conversion may widen a 256-bit
float32 loop into zmm registers).  Every output is checked against numpy.

- Hand-written Numba kernels, compiled with ``numba.njit(pipeline_class=
  codegen.numba.vector_width.pipeline_class(width))``: ``B = A * 2 + 1`` on
  4096 x 4096 float32 (memory-bound), a row sum of the same array with
  reassociation allowed (so LLVM vectorizes it), and the seed-004 conv layer
  (N=5, CI=CO=128, H=80, W=100, 3x3; input ``[n, y+rz, x+ry, ci]``, filter
  ``[ci, rz, ry, co]``) as a 5 x 64 register tile: 5 output columns by 64
  channels, summed over the 1152-long reduction, with the accumulators on the
  stack (:mod:`codegen.numba.stack`, which LLVM keeps in registers: 20 zmm at 512
  bits, 40 ymm -- more than the 32 registers -- at 256) or, as the emitter
  did before, on the heap (loaded and stored every step).
- polypad kernels built with ``codegen.build(f, vector_width=...)``: the
  elementwise kernel (rows parallel, the row split by 16 and vectorized) and
  the row sum example with ``parallel("i")``, which LLVM cannot vectorize
  without reassociation, so the width changes nothing.

Run: ``python benchmarks/bench_vector_width.py [--quick]``; from another
script, :func:`rows` returns the table's rows and :func:`table` formats them.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import llvmlite.binding as llvm
import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# A fresh kernel cache: Numba shows no assembly for code loaded from its cache.
os.environ.setdefault("POLYPAD_CACHE_DIR", tempfile.mkdtemp(prefix="polypad_bench_width_"))
atexit.register(shutil.rmtree, os.environ["POLYPAD_CACHE_DIR"], ignore_errors=True)

import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from codegen import vector_width as widths  # noqa: E402
from codegen.numba.stack import stack_zeros  # noqa: E402
from polypad.examples.row_summation import row_summation  # noqa: E402

#: The variants of each kernel: None is LLVM's own tuning for the CPU.
VARIANTS = (None, 256, 512)
N, H, W, CI, CO = 5, 80, 100, 128, 128
TILE_X, TILE_CO = 5, 64
TILE = TILE_X * TILE_CO  # a literal for stack_zeros


# ---------------------------------------------------------------- hand-written kernels

def elementwise(A, B):
    for i in numba.prange(A.shape[0]):
        for j in range(A.shape[1]):
            B[i, j] = A[i, j] * np.float32(2.0) + np.float32(1.0)


def row_sum(A, B):
    for i in numba.prange(A.shape[0]):
        acc = np.float32(0.0)
        for j in range(A.shape[1]):
            acc += A[i, j]
        B[i] = acc


def conv_stack(inp, flt, out):
    for ny in numba.prange(N * H):
        n, y = ny // H, ny % H
        for xo in range(W // TILE_X):
            for cb in range(CO // TILE_CO):
                acc = numba.carray(stack_zeros(TILE, np.float32), (TILE_X, TILE_CO))
                for rz in range(3):
                    for ry in range(3):
                        for ci in range(CI):
                            for xi in range(TILE_X):
                                a = inp[n, y + rz, xo * TILE_X + xi + ry, ci]
                                for c in range(TILE_CO):
                                    acc[xi, c] += a * flt[ci, rz, ry, cb * TILE_CO + c]
                for xi in range(TILE_X):
                    for c in range(TILE_CO):
                        out[n, y, xo * TILE_X + xi, cb * TILE_CO + c] = acc[xi, c]


def conv_heap(inp, flt, out):
    for ny in numba.prange(N * H):
        n, y = ny // H, ny % H
        for xo in range(W // TILE_X):
            for cb in range(CO // TILE_CO):
                acc = np.zeros((TILE_X, TILE_CO), np.float32)
                for rz in range(3):
                    for ry in range(3):
                        for ci in range(CI):
                            for xi in range(TILE_X):
                                a = inp[n, y + rz, xo * TILE_X + xi + ry, ci]
                                for c in range(TILE_CO):
                                    acc[xi, c] += a * flt[ci, rz, ry, cb * TILE_CO + c]
                for xi in range(TILE_X):
                    for c in range(TILE_CO):
                        out[n, y, xo * TILE_X + xi, cb * TILE_CO + c] = acc[xi, c]


def jit(fn, width: int | None, fastmath) -> Callable:
    options = {} if width is None else {"pipeline_class": widths.pipeline_class(width)}
    return numba.njit(parallel=True, fastmath=fastmath, error_model="numpy", **options)(fn)


ELEMENTWISE = '''
@T.prim_func
def scale(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i in T.serial(4096):
        for j in T.serial(4096):
            B[i, j] = A[i, j] * 2.0 + 1.0
'''


# ---------------------------------------------------------------- measuring

def _registers(dispatcher) -> str:
    """The widest vector registers in ``dispatcher``'s machine code."""
    asm = dispatcher.inspect_asm(dispatcher.signatures[0])
    return next((r for r in ("zmm", "ymm", "xmm") if f"%{r}" in asm), "-")


def _measure(name: str, variants: dict, args: tuple, out, want, repeat: int,
             tol: float) -> list[dict]:
    """Rows for ``variants`` (label -> (callable, its Numba dispatcher once called)),
    calls interleaved;
    each variant's ``out`` within ``tol`` times the largest ``want`` of ``want``."""
    compile_s = {}
    for label, (call, _) in variants.items():
        start = time.perf_counter()
        call(*args)
        compile_s[label] = time.perf_counter() - start
        error = float(np.max(np.abs(out - want)))
        assert error <= tol * float(np.max(np.abs(want))), f"{name} at {label}: error {error}"
    times: dict = {label: [] for label in variants}
    labels = list(variants)
    for k in range(repeat):
        for label in labels[k % len(labels):] + labels[:k % len(labels)]:
            call = variants[label][0]
            start = time.perf_counter()
            call(*args)
            times[label].append(time.perf_counter() - start)
    base = min(times[256])
    return [{"kernel": name, "width": "llvm" if label is None else label,
             "ms": min(t) * 1e3, "median_ms": statistics.median(t) * 1e3,
             "ratio": base / min(t),
             "registers": _registers(dispatcher()), "compile_s": compile_s[label]}
            for (label, (_, dispatcher)), t in zip(variants.items(), times.values(),
                                                   strict=True)]


def _hand(fn, fastmath) -> dict:
    variants = {}
    for width in VARIANTS:
        dispatcher = jit(fn, width, fastmath)
        variants[width] = (dispatcher, lambda d=dispatcher: d)
    return variants


def _built(func, **options) -> dict:
    variants = {}
    for width in VARIANTS[1:]:
        kernel = codegen.build(func, vector_width=width, **options)
        variants[width] = (kernel, lambda k=kernel: k._impl)
    return variants


def rows(repeat: int = 10) -> list[dict]:
    """The table's rows: kernel, width (bits, or ``"llvm"`` for LLVM's own), best
    and median ms, ratio to 256 bits, widest registers used, first-call seconds."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = np.empty_like(a)
    sums = np.empty(4096, np.float32)
    inp = rng.standard_normal((N, H + 2, W + 2, CI), dtype=np.float32)
    flt = rng.standard_normal((CI, 3, 3, CO), dtype=np.float32)
    out = np.empty((N, H, W, CO), np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(inp, (3, 3), axis=(1, 2))
    conv = np.tensordot(windows, flt, axes=([3, 4, 5], [0, 1, 2]))  # [n, y, x, co]
    contract, reorder = {"contract"}, {"reassoc", "contract"}
    result = []
    result += _measure("B = A * 2 + 1, 4096^2", _hand(elementwise, contract), (a, b), b,
                       a * 2 + 1, repeat, 0)
    result += _measure("row sum 4096^2, reassoc", _hand(row_sum, reorder), (a, sums), sums,
                       a.sum(axis=1, dtype=np.float64), repeat, 1e-5)
    result += _measure("conv 5x64 tile, stack acc", _hand(conv_stack, contract),
                       (inp, flt, out), out, conv, repeat, 1e-5)
    result += _measure("conv 5x64 tile, heap acc", _hand(conv_heap, contract),
                       (inp, flt, out), out, conv, max(repeat // 2, 3), 1e-5)

    sch = pp.Schedule(pp.parse(ELEMENTWISE))
    sch.parallel("i")
    _, inner = sch.split("j", [None, 16])
    sch.vectorize(inner)
    result += _measure("polypad B = A * 2 + 1", _built(sch.func), (a, b), b, a * 2 + 1,
                       repeat, 0)
    sch = pp.Schedule(row_summation)
    sch.parallel("i")
    result += _measure("polypad row sum, parallel(i)", _built(sch.func),
                       (a, sums, 4096, 4096), sums, a.sum(axis=1, dtype=np.float64), repeat, 1e-5)
    return result


def table(rows: list[dict]) -> str:
    header = ["kernel", "width", "ms", "median ms", "ratio", "registers", "first call s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['width']} | {r['ms']:.2f} | {r['median_ms']:.2f} | "
                     f"{r['ratio']:.2f} | "
                     f"{r['registers']} | {r['compile_s']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    print(f"CPU {llvm.get_host_cpu_name()}, AVX-512: {widths.cpu_has_avx512()}, "
          f"numba threads: {numba.get_num_threads()}, default vector_width: "
          f"{widths.resolve(None)}")
    print(table(rows(5 if args.quick else 20)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
