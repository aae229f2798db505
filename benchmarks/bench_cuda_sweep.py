"""The parameters of polypad's GPU schedules, swept on one GPU, beside the vendor peers.

``bench_cuda.py`` times each example's chosen schedule; this script times the
grid the choice was made from, in one run, each row with its correctness check
and the registers and local memory (spills) of its kernels as the driver
reports them:

- SGEMM 4096³ (``polypad.examples.matmul.schedule_cuda``): threads per side,
  outputs per thread (single or in runs of ``vector``), the ``k`` step and its
  unrolling, double-buffered tiles;
- the seed-004 conv layer (``polypad.examples.conv_layer.schedule_cuda``):
  threads and outputs per thread along ``x`` and the channels, the step;
- the row sum 16384² (``row_summation.schedule_cuda``): threads per block, loads
  in flight per thread;
- the elementwise ``B = A * 2 + 1`` 8192²: threads per block, elements per thread,
  single or in runs of 4 (2) moved by one 16-byte (8-byte) load and store
  (``vector``: a vectorized loop, :mod:`codegen.cuda.wide`); the copy is timed
  again after them, to show how far the GPU's own rate moved in the run.

The peers are cuBLAS (cupy, TF32 off), cuDNN (torch, TF32 off), ``cupy.sum`` and
the device-to-device copy, timed in the same run.  Each row's output is filled
with NaN before it runs, so that its check sees its own results.  A schedule that fails to
build or to run is a row saying why; the others still run.  Without a GPU it
says so and exits with status 0.

Run: ``python benchmarks/bench_cuda_sweep.py [--only sgemm,conv,rowsum,elementwise]``
[--match REGEX]
(about 5 minutes on an H200, mostly compiling).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import traceback

import bench_cuda as bench
import numpy as np

SGEMM = [  # (label, keyword arguments of matmul.schedule_cuda)
    ("16x16 threads, 8x8 each, k 8 by 2, double-buffered (the classic kernel)",
     dict(double_buffer=True, vector=1)),
    ("16x16 threads, 8x8 each, k 8 by 4", dict(k_unroll=4, vector=1, double_buffer=False)),
    ("16x16 threads, 8x8 each, k 8 by 8", dict(k_unroll=8, vector=1, double_buffer=False)),
    ("16x16 threads, 8x8 each, k 16 by 2", dict(k_tile=16, vector=1, double_buffer=False)),
    ("16x16 threads, 8x8 each, k 8 by 8, double-buffered",
     dict(k_unroll=8, double_buffer=True, vector=1)),
    ("16x16 threads, 8x8 each, k 8 by 2, double-buffered through registers",
     dict(double_buffer=True, through_registers=True, vector=1)),
    ("16x16 threads, 8x8 each, k 8 by 1, double-buffered",
     dict(k_unroll=1, double_buffer=True, vector=1)),
    ("16x16 threads, 8x8 each, k 8 by 4, double-buffered",
     dict(k_unroll=4, double_buffer=True, vector=1)),
    ("16x16 threads, 4x4 each, k 16",
     dict(per_thread=4, k_tile=16, k_unroll=1, vector=1, double_buffer=False)),
    ("16x16 threads, 4x4 each, k 8 by 8",
     dict(per_thread=4, k_unroll=8, vector=1, double_buffer=False)),
    ("16x16 threads, 4x4 each, k 8 by 8, double-buffered",
     dict(per_thread=4, k_unroll=8, double_buffer=True, vector=1)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 2, double-buffered",
     dict(vector=4, wide_copies=False)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 4, double-buffered",
     dict(vector=4, k_unroll=4, wide_copies=False)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 8, double-buffered",
     dict(vector=4, k_unroll=8, wide_copies=False)),
    ("16x16 threads, 8x8 each in runs of 2, k 8 by 2, double-buffered",
     dict(vector=2, wide_copies=False)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 2, double-buffered, wide copies (default)",
     dict(vector=4, wide_copies=True)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 4, double-buffered, wide copies",
     dict(vector=4, k_unroll=4, wide_copies=True)),
    ("16x16 threads, 8x8 each in runs of 4, k 8 by 2, wide copies",
     dict(vector=4, wide_copies=True, double_buffer=False)),
    ("16x16 threads, 4x4 each in runs of 4, k 8 by 8, double-buffered",
     dict(per_thread=4, vector=4, k_unroll=8, wide_copies=False)),
    ("8x8 threads, 8x8 each, k 8 by 2", dict(threads=8, vector=1, double_buffer=False)),
    ("32x32 threads, 4x4 each, k 8 by 2",
     dict(threads=32, per_thread=4, vector=1, double_buffer=False)),
]
CONV = [  # (label, keyword arguments of conv_layer.schedule_cuda)
    ("20x16 threads, 5x4 each, k 8 by 2 (default)", {}),
    ("20x16 threads, 5x8 each", dict(c_per_thread=8)),
    ("20x16 threads, 5x8 each, k 16", dict(c_per_thread=8, k_tile=16)),
    ("20x16 threads, 5x8 each, double-buffered", dict(c_per_thread=8, double_buffer=True)),
    ("20x16 threads, 5x4 each, double-buffered", dict(double_buffer=True)),
    ("20x16 threads, 5x4 each, k 8 by 8", dict(k_unroll=8)),
    ("20x16 threads, 5x4 each, k 8 by 4", dict(k_unroll=4)),
    ("25x8 threads, 4x8 each, k 8 by 8", dict(x_threads=25, x_per_thread=4, c_threads=8,
                                              c_per_thread=8, k_unroll=8)),
    ("10x16 threads, 10x8 each", dict(x_threads=10, x_per_thread=10, c_per_thread=8)),
    ("25x8 threads, 4x8 each", dict(x_threads=25, x_per_thread=4, c_threads=8,
                                     c_per_thread=8)),
    ("20x32 threads, 5x4 each", dict(c_threads=32, c_per_thread=4)),
]
MATCH = re.compile("")  # --match
ROW_SUM = [(f"{t} threads, {u} loads in flight", dict(threads=t, unroll=u))
           for t, u in ((256, 4), (256, 8), (512, 4), (512, 8), (1024, 4), (128, 8))]
ELEMENTWISE = [(f"{t} threads, {p} per thread" + (f" in runs of {v}" if v > 1 else ""),
                dict(threads=t, per_thread=p, vector=v))
               for t, p, v in ((256, 16, 1), (256, 8, 1), (256, 4, 1), (128, 8, 1), (512, 4, 1),
                               (1024, 4, 1),
                               # runs of 4 (2): one 16-byte (8-byte) load and store each
                               (256, 4, 4), (256, 8, 4), (256, 16, 4), (128, 8, 4),
                               (512, 4, 4), (1024, 4, 4), (256, 8, 2))]


def _resources(kernel) -> str:
    """Registers per thread and local memory per thread (spills) of each compiled
    kernel, as the driver reports them."""
    out = []
    for bare, _ in kernel.compile()._impl.kernels:
        try:
            regs = bare.get_regs_per_thread()
            local = bare.get_local_mem_per_thread()
            regs = regs if isinstance(regs, int) else max(regs.values())
            local = local if isinstance(local, int) else max(local.values())
            out.append(f"{regs} regs, {local} B local")
        except Exception as error:  # noqa: BLE001 - informative only
            out.append(f"? ({type(error).__name__})")
    return "; ".join(out)


def _row(rows, cuda, name, build, args, amount, unit, peer, check, output=None):
    """Build, time and check one schedule, or a row saying why it could not (nothing
    where ``--match`` leaves it out).  ``output``, the device array the kernel writes,
    is filled with NaN first, so that a kernel that leaves it alone fails its check
    rather than passing on the row before's results."""
    import codegen

    if not MATCH.search(name):
        return

    start = time.perf_counter()
    try:
        if output is not None:
            _poison(output)
        sch = build()
        scheduled = time.perf_counter() - start
        kernel = codegen.build(sch.func, target="cuda")
        first, _, alone = bench._timed(cuda, sch, args, kernel)
        rows.add(f"{name} [{_resources(kernel)}; schedule {scheduled:.1f} s]", alone,
                 amount / alone, unit, peer, check(), first)
    except Exception as error:  # noqa: BLE001 - one bad point must not end the sweep
        traceback.print_exc(limit=3)
        print(f"| {name} | failed: {type(error).__name__}: {str(error)[:200]} |", flush=True)


def _poison(array) -> None:
    """Fill a numba device array with NaN, in place (through cupy)."""
    import cupy as cp

    cp.asarray(array).fill(cp.nan)


def sweep_sgemm(cuda, cp, rows, size=4096):
    from polypad.examples import matmul

    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array((size, size), np.float32)
    ca, cb = cp.asarray(a), cp.asarray(b)
    peer = bench._median(lambda: cp.matmul(ca, cb), cp.cuda.Device().synchronize)
    want = cp.asnumpy(cp.matmul(ca, cb))
    flops = 2.0 * size ** 3
    rows.add(f"cupy matmul {size}^3 (cuBLAS, TF32 off)", peer, flops / peer / 1e12, "TFLOP/s")
    func = matmul.matmul(size, size, size)
    for label, kwargs in SGEMM:
        _row(rows, cuda, f"SGEMM {label}", lambda kw=kwargs: matmul.schedule_cuda(func, **kw),
             (da, db, dc), flops / 1e12, "TFLOP/s", peer,
             lambda: bench._check(dc.copy_to_host(), want), dc)


def sweep_conv(cuda, torch, rows):
    from polypad.examples import conv_layer

    sizes = bench.conv_sizes(False)
    func = conv_layer.conv_layer(**sizes)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal([int(s) for s in p.shape], dtype=np.float32)
            for p in func.params]
    device = [cuda.to_device(x) for x in args]
    torch.backends.cudnn.allow_tf32 = False
    x = torch.from_numpy(args[0]).permute(0, 3, 1, 2).contiguous().cuda()
    wt = torch.from_numpy(args[1]).permute(3, 0, 1, 2).contiguous().cuda()
    bt = torch.from_numpy(args[2]).cuda()

    def peer_call():
        return torch.relu(torch.nn.functional.conv2d(x, wt, bt))

    peer = bench._median(peer_call, torch.cuda.synchronize)
    want = peer_call().permute(0, 2, 3, 1).cpu().numpy()
    s = sizes
    flops = 2.0 * s["n"] * s["h"] * s["w"] * s["ci"] * s["co"] * 9
    rows.add("torch conv2d + relu (cuDNN, TF32 off)", peer, flops / peer / 1e12, "TFLOP/s")
    for label, kwargs in CONV:
        _row(rows, cuda, f"conv {label}",
             lambda kw=kwargs: conv_layer.schedule_cuda(func, **kw), device, flops / 1e12,
             "TFLOP/s", peer, lambda: bench._check(device[3].copy_to_host(), want), device[3])


def sweep_row_sum(cuda, cp, rows, size=16384):
    from polypad.examples import row_summation

    a = np.random.default_rng(2).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array(size, np.float32)
    ca = cp.asarray(a)
    peer = bench._median(lambda: ca.sum(axis=1), cp.cuda.Device().synchronize)
    nbytes = a.nbytes + size * 4
    rows.add(f"cupy.sum(axis=1) {size}^2", peer, nbytes / peer / 1e9, "GB/s")
    want = a.astype(np.float64).sum(axis=1)
    func = row_summation.row_sum(size, size)
    for label, kwargs in ROW_SUM:
        _row(rows, cuda, f"row sum {label}",
             lambda kw=kwargs: row_summation.schedule_cuda(func, **kw), (da, db),
             nbytes / 1e9, "GB/s", peer, lambda: bench._check(db.copy_to_host(), want), db)


def sweep_elementwise(cuda, cp, rows, size=8192):
    a = np.random.default_rng(3).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array((size, size), np.float32)
    ca, cb = cp.asarray(a), cp.empty((size, size), np.float32)
    copy = bench._median(lambda: cp.copyto(cb, ca), cp.cuda.Device().synchronize)
    nbytes = 2 * a.nbytes
    rows.add(f"cupy.copyto {size}^2 (device to device)", copy, nbytes / copy / 1e9, "GB/s")
    for label, kwargs in ELEMENTWISE:
        _row(rows, cuda, f"elementwise {label}",
             lambda kw=kwargs: bench.elementwise_schedule(size, **kw), (da, db),
             nbytes / 1e9, "GB/s", copy,
             lambda: "exact ok" if np.array_equal(db.copy_to_host(), a * 2 + 1) else "FAILED",
             db)
    # The copy again, after the variants: how far the GPU's own rate moved in the run.
    again = bench._median(lambda: cp.copyto(cb, ca), cp.cuda.Device().synchronize)
    rows.add(f"cupy.copyto {size}^2 again, after the variants", again, nbytes / again / 1e9,
             "GB/s", copy)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="sgemm,conv,rowsum,elementwise")
    parser.add_argument("--match", default="", help="a regular expression: time only the "
                        "schedules whose row names it matches (the peers always)")
    options = parser.parse_args()
    only = set(options.only.split(","))
    global MATCH
    MATCH = re.compile(options.match)
    cuda = bench._gpu()
    if cuda is None:
        return 0
    cp, torch = bench._optional("cupy"), bench._optional("torch")
    if cp is None or torch is None:
        print("bench_cuda_sweep: needs cupy and torch for the peers")
        return 0
    rows = bench.Rows()
    bench.run_sections([("sgemm", lambda: sweep_sgemm(cuda, cp, rows)),
                        ("conv", lambda: sweep_conv(cuda, torch, rows)),
                        ("rowsum", lambda: sweep_row_sum(cuda, cp, rows)),
                        ("elementwise", lambda: sweep_elementwise(cuda, cp, rows))],
                       only, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
