"""polypad's GPU kernels (the ``cuda`` target) beside the vendor libraries, on one GPU.

One run prints a table, each row with its correctness check:

- SGEMM 4096³ through ``polypad.examples.matmul.schedule_cuda`` (128 x 128
  tiles, 8 x 8 per thread; variants below) against cupy's ``matmul`` (cuBLAS,
  TF32 off), in TFLOP/s;
- the seed-004 conv layer (Halide's sizes: 5 x 80 x 100, 128 -> 128, 3 x 3)
  through ``polypad.examples.conv_layer.schedule_cuda`` (implicit GEMM, 5 x 4
  per thread, shared tiles of the input and the filter) against
  ``torch.nn.functional.conv2d`` + bias + relu (cuDNN, TF32 off);
- a row sum 16384 x 16384 through ``polypad.examples.row_summation.schedule_cuda``
  (a block per row, register partial sums, a tree in shared memory) against
  ``cupy.sum(axis=1)``, in GB/s;
- an elementwise kernel ``B = A * 2 + 1`` (8192 x 8192, 16 elements per thread,
  loads first) against the device-to-device copy bandwidth.

Each polypad row is timed twice: through the ``Kernel`` call (argument checks,
launch configuration; tens of microseconds) and by launching the compiled
kernels directly, which is what the vendor rows time; "vs peer" uses the
direct launch.  Times are medians over ``REPEAT`` batches of ``BATCH``
back-to-back calls after a warm-up, one synchronisation per batch (until
2026-11-28: single synchronised calls); the first call's time is the compile.  Without a GPU (or
without numba's CUDA support) it says so and exits with status 0.  cupy and
torch are optional: a missing peer leaves its column empty, and the check is
then against numpy on the CPU.

``--ptx`` needs no GPU, only the CUDA toolkit's NVVM and ``ptxas``: it
compiles every kernel of the same schedules for ``--cc`` (default 9.0, H100
and H200) and prints the compile time (Numba's front end and NVVM; ptxas, the driver's
part, is not in it) and ptxas's registers and spills per kernel, the first
thing to look at when a kernel is slow.

Run: ``python benchmarks/bench_cuda.py [--quick] [--only sgemm,conv,rowsum,elementwise]
[--variants] [--ptx]``.  The default run takes about a minute on an H200
(schedules ~15 s, compiles ~20 s, the rest timing); ``--variants`` adds the
SGEMM variants (single-buffered, 4 x 4 per thread with the step unrolled
fully, the tiles staged through registers, outputs in runs of 4), the conv layer's (the step
unrolled by 2, double-buffered, also through registers) and the elementwise
kernel's (runs of 4 moved by 16-byte loads and stores), with compiles of up
to 20 s each.  ``bench_cuda_sweep.py`` times the whole grid the defaults were
chosen from.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPEAT = 10
BATCH = 10


def _gpu():
    """numba.cuda with a GPU, or None (after saying why)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        print("bench_cuda: NUMBA_ENABLE_CUDASIM=1 selects the simulator; nothing to time")
        return None
    try:
        from numba import cuda
    except ImportError as error:
        print(f"bench_cuda: numba's CUDA support is not installed ({error}); "
              "pip install 'polypad[cuda]'")
        return None
    if not cuda.is_available():
        print("bench_cuda: no CUDA GPU found (numba.cuda.is_available() is False); "
              "nothing to time (--ptx compiles the kernels without one)")
        return None
    return cuda


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def _median(fn, sync) -> float:
    """Seconds per call of ``fn``: the median over ``REPEAT`` batches of ``BATCH``
    back-to-back calls, one ``sync`` per batch.  A call queues its kernels and
    returns, so within a batch the next launch's Python work overlaps the kernel
    running; a synchronised single call would add a launch's tens of microseconds
    to kernels of 0.15 ms (two H200 runs of 2026-11-28, timed that way, disagreed
    by 20% on those)."""
    fn()
    sync()
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        for _ in range(BATCH):
            fn()
        sync()
        times.append((time.perf_counter() - start) / BATCH)
    return statistics.median(times)


# ---------------------------------------------------------------- the kernels


def sgemm_schedules(size: int, variants: bool) -> list:
    from polypad.examples import matmul

    func = matmul.matmul(size, size, size)
    out = [("8x8 per thread in runs of 4, 128x128 tiles, k step 8 unrolled by 2, "
            "double-buffered, tile copies and C in runs of 4", matmul.schedule_cuda(func))]
    if variants:
        out.append(("8x8 per thread, single ones 16 apart, copies element by element, "
                    "double-buffered", matmul.schedule_cuda(func, vector=1)))
        out.append(("8x8 per thread in runs of 4, not double-buffered (2 barriers per step)",
                    matmul.schedule_cuda(func, double_buffer=False)))
        out.append(("4x4 per thread in runs of 4, 64x64 tiles, k step 8 unrolled fully, "
                    "double-buffered",
                    matmul.schedule_cuda(func, per_thread=4, k_unroll=8)))
        out.append(("8x8 per thread in runs of 4, double-buffered, next tiles through registers",
                    matmul.schedule_cuda(func, through_registers=True)))
        out.append(("8x8 per thread in runs of 4 (shared loads of 4 floats), copies element "
                    "by element, double-buffered", matmul.schedule_cuda(func, wide_copies=False)))
    return out


def conv_sizes(quick: bool) -> dict:
    return dict(n=1, ci=64, co=64, w=100, h=80) if quick else \
        dict(n=5, ci=128, co=128, w=100, h=80)


def conv_schedule(sizes: dict):
    from polypad.examples import conv_layer

    return conv_layer.schedule_cuda(conv_layer.conv_layer(**sizes))


def conv_variants(sizes: dict) -> list:
    """The conv layer's variants: its shared tiles double-buffered, and through
    registers too (``--variants``)."""
    from polypad.examples import conv_layer

    func = conv_layer.conv_layer(**sizes)
    return [("step unrolled by 2", conv_layer.schedule_cuda(func, k_unroll=2)),
            ("tiles double-buffered", conv_layer.schedule_cuda(func, double_buffer=True)),
            ("double-buffered through registers",
             conv_layer.schedule_cuda(func, double_buffer=True, through_registers=True))]


def row_sum_schedule(size: int):
    from polypad.examples import row_summation

    return row_summation.schedule_cuda(row_summation.row_sum(size, size), threads=256,
                                       unroll=4)


def elementwise_schedule(size: int, threads: int = 256, per_thread: int = 16,
                         vector: int = 1):
    """``B = A * 2 + 1`` at ``size x size`` (:func:`polypad.examples.elementwise.schedule_cuda`:
    ``per_thread`` elements per thread, ``threads`` apart or in runs of ``vector``)."""
    from polypad.examples import elementwise

    return elementwise.schedule_cuda(elementwise.scale(size, size), threads=threads,
                                     per_thread=per_thread, vector=vector)


# ---------------------------------------------------------------- timing on a GPU


class Rows:
    def __init__(self):
        self.rows: list = []

    def add(self, name, seconds, rate, unit, peer=None, check="", first=None):
        row = (name, seconds, rate, unit, peer, check, first)
        self.rows.append(row)
        # Each row as it is measured too: a run stopped at its time limit keeps them.
        print(self.line(row), flush=True)

    @staticmethod
    def line(row) -> str:
        name, seconds, rate, unit, peer, check, first = row
        ratio = f"{peer / seconds:.2f}x" if peer else "the peer"
        compile_s = f"{first:.2f} s" if first is not None else ""
        return (f"| {name} | {seconds * 1e3:.3f} ms | {rate:.2f} {unit} | {ratio} | "
                f"{check} | {compile_s} |")

    def table(self) -> str:
        out = ["| kernel | time | rate | vs peer | check | first call (compile) |",
               "|---|---|---|---|---|---|"]
        out += [self.line(row) for row in self.rows]
        return "\n".join(out)


def _timed(cuda, sch, args, kernel=None):
    """Build ``sch.func`` (unless ``kernel`` is its build), call it once (compiling), and
    time it through the Kernel call and launched directly: (first call s, Kernel call s,
    direct s)."""
    import codegen

    kernel = kernel if kernel is not None else codegen.build(sch.func, target="cuda")
    start = time.perf_counter()
    kernel(*args)
    cuda.synchronize()
    first = time.perf_counter() - start
    through = _median(lambda: kernel(*args), cuda.synchronize)
    impl = kernel.compile()._impl
    launches = [(bare, launch()) for bare, launch in impl.kernels]
    # The buffers the host allocates for each call (the conv layer's convolution before
    # its ReLU), allocated once here (constant shapes).
    extra = [cuda.device_array(tuple(int(e) for e in buffer.shape), buffer.dtype)
             for buffer in impl.host]

    def direct():
        for bare, (grid, block) in launches:
            bare[grid, block](*args, *extra)

    alone = _median(direct, cuda.synchronize)
    return first, through, alone


def _check(got, want) -> str:
    err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    return f"max rel err {err:.1e}" + (" ok" if err < 1e-4 else " FAILED")


def run_sgemm(cuda, cp, rows: Rows, size: int, variants: bool) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    flops = 2.0 * size ** 3
    peer = None
    if cp is not None:
        os.environ.setdefault("CUPY_TF32", "0")
        ca, cb = cp.asarray(a), cp.asarray(b)
        peer = _median(lambda: cp.matmul(ca, cb), cp.cuda.Device().synchronize)
        want = cp.asnumpy(cp.matmul(ca, cb))
        rows.add(f"cupy matmul (cuBLAS, TF32 off) {size}^3", peer, flops / peer / 1e12,
                 "TFLOP/s")
    else:
        want = a[:256].astype(np.float64) @ b.astype(np.float64)
    for label, sch in sgemm_schedules(size, variants):
        dc = cuda.device_array((size, size), np.float32)
        first, through, alone = _timed(cuda, sch, (da, db, dc))
        got = dc.copy_to_host() if cp is not None else dc.copy_to_host()[:256]
        rows.add(f"polypad SGEMM {size}^3, {label}", alone, flops / alone / 1e12, "TFLOP/s",
                 peer, _check(got, want), first)
        rows.add("  the same through the Kernel call", through, flops / through / 1e12,
                 "TFLOP/s", peer)


def run_conv(cuda, torch, rows: Rows, sizes: dict, variants: bool = False) -> None:
    from polypad.examples import conv_layer

    func = conv_layer.conv_layer(**sizes)
    sch = conv_schedule(sizes)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal([int(s) for s in p.shape], dtype=np.float32)
            for p in func.params]
    device = [cuda.to_device(x) for x in args]
    n, h, w, ci, co = sizes["n"], sizes["h"], sizes["w"], sizes["ci"], sizes["co"]
    flops = 2.0 * n * h * w * ci * co * 9
    inp, flt, bias = args[0], args[1], args[2]
    peer = None
    if torch is not None and torch.cuda.is_available():
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.from_numpy(inp).permute(0, 3, 1, 2).contiguous().cuda()  # NHWC -> NCHW
        # filter[rx, rz, ry, c]: input channel, row, column, output channel.
        wt = torch.from_numpy(flt).permute(3, 0, 1, 2).contiguous().cuda()
        bt = torch.from_numpy(bias).cuda()

        def peer_call():
            return torch.relu(torch.nn.functional.conv2d(x, wt, bt))

        peer = _median(peer_call, torch.cuda.synchronize)
        want = peer_call().permute(0, 2, 3, 1).cpu().numpy()
        rows.add("torch conv2d + relu (cuDNN, TF32 off)", peer, flops / peer / 1e12, "TFLOP/s")
    else:
        want = np.zeros((1, h, w, co), np.float32)
        for rz in range(3):
            for ry in range(3):
                want += np.einsum("yxi,ic->yxc", inp[0, rz:rz + h, ry:ry + w, :],
                                  flt[:, rz, ry, :])[None]
        want = np.maximum(want + bias, 0)
    schedules = [("", sch)] + ([(f", {label}", v) for label, v in conv_variants(sizes)]
                               if variants else [])
    for label, each in schedules:
        device[3] = cuda.device_array(args[3].shape, np.float32)
        first, through, alone = _timed(cuda, each, device)
        got = device[3].copy_to_host()
        got = got if peer is not None else got[:1]
        rows.add(f"polypad conv_layer.schedule_cuda {n}x{h}x{w}, {ci}->{co}{label}", alone,
                 flops / alone / 1e12, "TFLOP/s", peer, _check(got, want), first)
        rows.add("  the same through the Kernel call", through, flops / through / 1e12,
                 "TFLOP/s", peer)


def run_row_sum(cuda, cp, rows: Rows, size: int) -> None:
    sch = row_sum_schedule(size)
    a = np.random.default_rng(2).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array(size, np.float32)
    nbytes = a.nbytes + size * 4
    peer = None
    if cp is not None:
        ca = cp.asarray(a)
        peer = _median(lambda: ca.sum(axis=1), cp.cuda.Device().synchronize)
        rows.add(f"cupy.sum(axis=1) {size}x{size}", peer, nbytes / peer / 1e9, "GB/s")
    first, through, alone = _timed(cuda, sch, (da, db))
    want = a.astype(np.float64).sum(axis=1)
    rows.add(f"polypad row_summation.schedule_cuda {size}x{size}", alone, nbytes / alone / 1e9,
             "GB/s", peer, _check(db.copy_to_host(), want), first)
    rows.add("  the same through the Kernel call", through, nbytes / through / 1e9, "GB/s",
             peer)


#: The elementwise variants ``--variants`` adds: (label, keyword arguments).
ELEMENTWISE_VARIANTS = [("256 threads, 8 per thread in runs of 4", dict(per_thread=8, vector=4)),
                        ("256 threads, 16 per thread in runs of 4",
                         dict(per_thread=16, vector=4))]


def run_elementwise(cuda, cp, rows: Rows, size: int, variants: bool = False) -> None:
    sch = elementwise_schedule(size)
    a = np.random.default_rng(3).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array((size, size), np.float32)
    nbytes = 2 * a.nbytes
    if cp is not None:  # cudaMemcpy device to device, through cupy
        ca, cb = cp.asarray(a), cp.empty_like(cp.asarray(a))
        copy = _median(lambda: cp.copyto(cb, ca), cp.cuda.Device().synchronize)
        peer_name = "cupy.copyto (device to device)"
    else:
        copy = _median(lambda: db.copy_to_device(da), cuda.synchronize)
        peer_name = "numba copy_to_device (device to device)"
    rows.add(f"{peer_name} {size}x{size}", copy, nbytes / copy / 1e9, "GB/s")
    first, through, alone = _timed(cuda, sch, (da, db))
    ok = np.array_equal(db.copy_to_host(), a * 2 + 1)
    rows.add(f"polypad elementwise B = A * 2 + 1 {size}x{size}, 16 per thread", alone,
             nbytes / alone / 1e9, "GB/s", copy, "exact ok" if ok else "FAILED", first)
    rows.add("  the same through the Kernel call", through, nbytes / through / 1e9, "GB/s",
             copy)
    for label, kwargs in ELEMENTWISE_VARIANTS if variants else ():
        if cp is not None:
            cp.asarray(db).fill(cp.nan)  # the check sees this kernel's results
        first, through, alone = _timed(cuda, elementwise_schedule(size, **kwargs), (da, db))
        ok = np.array_equal(db.copy_to_host(), a * 2 + 1)
        rows.add(f"polypad elementwise {size}x{size}, {label}", alone, nbytes / alone / 1e9,
                 "GB/s", copy, "exact ok" if ok else "FAILED", first)


# ---------------------------------------------------------------- --ptx: no GPU needed


def ptx_report(label: str, func, cc: tuple[int, int]) -> list[str]:
    """Compile each kernel of ``func`` for ``cc`` with NVVM and run ``ptxas -v``: one
    line per kernel with the compile time, registers and spills."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    from numba import cuda, types

    import codegen
    from polypad.ir.nodes import Buffer

    source = codegen.build(func, target="cuda").source
    namespace: dict = {}
    exec(compile(source, f"<{label}>", "exec"), namespace)  # noqa: S102 - our own text
    from analyses.gpu_sync import plan_barriers
    from codegen.cuda.emit import host_buffers

    params = list(func.params) + host_buffers(plan_barriers(func))
    signature = tuple(types.Array(getattr(types, p.dtype), len(p.shape), "C")
                      if isinstance(p, Buffer) else types.int32 for p in params)
    out = []
    for k, (kernel, _) in enumerate(namespace["KERNELS"]):
        start = time.perf_counter()
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=cc)
        except Exception as error:  # noqa: BLE001 - reported, the others still compile
            # numba-cuda's max() of floats is a device function compiled for the current
            # device, which needs a GPU (the conv layer's ReLU).
            out.append(f"{label}, kernel {k}: not compiled without a GPU "
                       f"({str(error).splitlines()[0]})")
            continue
        seconds = time.perf_counter() - start
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(ptx)
        found = subprocess.run(["ptxas", "-v", "--gpu-name", f"sm_{cc[0]}{cc[1]}", f.name,
                                "-o", os.devnull], capture_output=True, text=True)
        os.unlink(f.name)
        info = " ".join(line.split(":", 1)[-1].strip() for line in found.stderr.splitlines()
                        if "registers" in line or "spill" in line)
        fma = ptx.count("fma.rn.f32")
        out.append(f"{label}, kernel {k}: compiled (Numba + NVVM) in {seconds:.2f} s; {info}; "
                   f"{fma} fma in the PTX")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", default="sgemm,conv,rowsum,elementwise")
    parser.add_argument("--variants", action="store_true",
                        help="also the SGEMM variants (step unrolled fully; 4 x 4 per thread; "
                             "double-buffered tiles, also through registers) and the "
                             "conv layer's (double-buffered, also through registers)")
    parser.add_argument("--ptx", action="store_true",
                        help="no GPU: compile for --cc and print ptxas's registers and spills")
    parser.add_argument("--cc", default="9.0", help="compute capability for --ptx")
    options = parser.parse_args()
    only = set(options.only.split(","))
    quick = options.quick
    sgemm_size, row_size, element_size = (1024, 4096, 2048) if quick else (4096, 16384, 8192)
    if options.ptx:
        cc = tuple(int(x) for x in options.cc.split("."))
        schedules = []
        if "sgemm" in only:
            schedules += [(f"SGEMM {label}", sch) for label, sch in
                          sgemm_schedules(sgemm_size, options.variants)]
        if "conv" in only:
            schedules.append(("conv layer", conv_schedule(conv_sizes(quick))))
            if options.variants:
                schedules += [(f"conv layer, {label}", v)
                              for label, v in conv_variants(conv_sizes(quick))]
        if "rowsum" in only:
            schedules.append(("row sum", row_sum_schedule(row_size)))
        if "elementwise" in only:
            schedules.append(("elementwise", elementwise_schedule(element_size)))
            if options.variants:
                schedules += [(f"elementwise, {label}", elementwise_schedule(element_size, **kw))
                              for label, kw in ELEMENTWISE_VARIANTS]
        for label, sch in schedules:
            for line in ptx_report(label, sch.func, cc):
                print(line, flush=True)
        return 0
    cuda = _gpu()
    if cuda is None:
        return 0
    cp, torch = _optional("cupy"), _optional("torch")
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    print(f"{name}, numba {__import__('numba').__version__}, numpy {np.__version__}, "
          f"cupy {getattr(cp, '__version__', 'absent')}, "
          f"torch {getattr(torch, '__version__', 'absent')}, "
          f"{datetime.date.today().isoformat()}", flush=True)
    rows = Rows()
    sections = [("sgemm", lambda: run_sgemm(cuda, cp, rows, sgemm_size, options.variants)),
                ("conv", lambda: run_conv(cuda, torch, rows, conv_sizes(quick),
                                          options.variants)),
                ("rowsum", lambda: run_row_sum(cuda, cp, rows, row_size)),
                ("elementwise", lambda: run_elementwise(cuda, cp, rows, element_size,
                                                        options.variants))]
    run_sections(sections, only, rows)
    return 0


def run_sections(sections, only: set, rows: Rows) -> None:
    """Run each ``(key, section)`` whose key is in ``only``, saying how long it took,
    then print the table of ``rows``."""
    for key, section in sections:
        if key in only:
            start = time.perf_counter()
            section()
            print(f"  ({key}: {time.perf_counter() - start:.1f} s)", flush=True)
    print()
    print(rows.table())


if __name__ == "__main__":
    sys.exit(main())
