"""polypad's GPU kernels (the ``cuda`` target) beside the vendor libraries, on one GPU.

One run prints a table, each row with its correctness check:

- SGEMM 4096³ through ``polypad.examples.matmul.schedule_cuda`` against cupy's
  ``matmul`` (cuBLAS, TF32 off), in TFLOP/s;
- the seed-004 conv layer (Halide's sizes: 5 x 80 x 100, 128 -> 128, 3 x 3)
  through ``polypad.examples.conv_layer.schedule_cuda`` against
  ``torch.nn.functional.conv2d`` + bias + relu (cuDNN, TF32 off);
- a row sum 16384 x 16384 (a block per row, ``rfactor`` into shared memory)
  against ``cupy.sum(axis=1)``, in GB/s;
- an elementwise kernel ``B = A * 2 + 1`` (8192 x 8192) against the device's
  device-to-device copy bandwidth.

Times are medians of ``REPEAT`` calls after a warm-up, each call synchronised;
polypad's kernels get numba device arrays (no copies).  Without a GPU (or
without numba's CUDA support) it says so and exits with status 0.  cupy and
torch are optional: a missing peer leaves its column empty, and the check is
then against numpy on the CPU.

Run: ``python benchmarks/bench_cuda.py [--quick]`` (``--quick``: smaller sizes).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPEAT = 10


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
              "nothing to time")
        return None
    return cuda


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def _median(fn, sync) -> float:
    fn()
    sync()
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _build(func):
    import codegen

    start = time.perf_counter()
    kernel = codegen.build(func, target="cuda")
    built = time.perf_counter() - start
    start = time.perf_counter()
    kernel.compile()
    return kernel, built, time.perf_counter() - start


def _row(rows, name, seconds, rate, unit, peer=None, check="", compile_s=None):
    rows.append((name, seconds, rate, unit, peer, check, compile_s))


def sgemm(cuda, cp, rows, size, per_thread=4, with_peer=True):
    from polypad.examples import matmul

    func = matmul.matmul(size, size, size)
    sch = matmul.schedule_cuda(func, threads=16, per_thread=per_thread, k_tile=16)
    kernel, built, _ = _build(sch.func)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array((size, size), np.float32)
    start = time.perf_counter()
    kernel(da, db, dc)  # the first call compiles the kernel
    first = time.perf_counter() - start
    ours = _median(lambda: kernel(da, db, dc), cuda.synchronize)
    flops = 2.0 * size ** 3
    got = dc.copy_to_host()
    peer, check = None, ""
    if cp is not None:
        os.environ.setdefault("CUPY_TF32", "0")
        ca, cb = cp.asarray(a), cp.asarray(b)
        peer = _median(lambda: cp.matmul(ca, cb), cp.cuda.Device().synchronize)
        want = cp.asnumpy(cp.matmul(ca, cb))
        if with_peer:
            _row(rows, f"cupy matmul (cuBLAS, TF32 off) {size}^3", peer,
                 flops / peer / 1e12, "TFLOP/s")
    else:
        want = a[:256].astype(np.float64) @ b.astype(np.float64)
        got = got[:256]
    err = float(np.abs(got - want).max() / np.abs(want).max())
    check = f"max rel err {err:.1e}" + (" ok" if err < 1e-4 else " FAILED")
    _row(rows, f"polypad matmul.schedule_cuda {size}^3, {per_thread}x{per_thread} per thread",
         ours, flops / ours / 1e12, "TFLOP/s", peer, check, compile_s=first)
    print(f"  (sgemm: build {built:.2f} s, first call with compile {first:.2f} s)")


def conv(cuda, torch, rows, sizes):
    from polypad.examples import conv_layer

    func = conv_layer.conv_layer(**sizes)
    sch = conv_layer.schedule_cuda(func, tile_x=4, tile_c=64)
    kernel, built, _ = _build(sch.func)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal([int(s) for s in p.shape], dtype=np.float32)
            for p in func.params]
    device = [cuda.to_device(x) for x in args]
    start = time.perf_counter()
    kernel(*device)
    first = time.perf_counter() - start
    ours = _median(lambda: kernel(*device), cuda.synchronize)
    n, h, w, ci, co = sizes["n"], sizes["h"], sizes["w"], sizes["ci"], sizes["co"]
    flops = 2.0 * n * h * w * ci * co * 9
    got = device[3].copy_to_host()
    peer = None
    inp, flt, bias = args[0], args[1], args[2]
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
        _row(rows, "torch conv2d + relu (cuDNN, TF32 off)", peer, flops / peer / 1e12,
             "TFLOP/s")
    else:
        want = np.zeros_like(got[:1])
        for rz in range(3):
            for ry in range(3):
                want += np.einsum("yxi,ic->yxc", inp[0, rz:rz + h, ry:ry + w, :],
                                  flt[:, rz, ry, :])[None]
        want = np.maximum(want + bias, 0)
        got = got[:1]
    err = float(np.abs(got - want).max() / np.abs(want).max())
    _row(rows, f"polypad conv_layer.schedule_cuda {n}x{h}x{w}, {ci}->{co}", ours,
         flops / ours / 1e12, "TFLOP/s", peer,
         f"max rel err {err:.1e}" + (" ok" if err < 1e-4 else " FAILED"), compile_s=first)
    print(f"  (conv: build {built:.2f} s, first call with compile {first:.2f} s)")


def row_sum_schedule(rows_n: int, cols: int, threads: int = 256):
    import polypad as pp

    func = pp.parse(f'''
@T.prim_func
def row_sum(A: T.Buffer(({rows_n}, {cols}), "float32"), B: T.Buffer(({rows_n},), "float32")):
    for i in range({rows_n}):
        with T.block("B"):
            B[i] = T.float32(0)
            for k in range({cols}):
                B[i] = B[i] + A[i, k]
''')
    sch = pp.Schedule(func)
    i, k = sch.get_loops("B")
    _, ki = sch.split(k, [None, threads])
    sch.rfactor(ki, 0)
    sch.reorder("k_1", "k_0")
    sch.set_scope("B_rf", "shared")
    sch.bind(i, "blockIdx.x")
    sch.bind("k_1_init", "threadIdx.x")
    sch.bind("k_1", "threadIdx.x")
    return sch


def row_sum(cuda, cp, rows, size):
    sch = row_sum_schedule(size, size, threads=min(256, size))
    kernel, built, _ = _build(sch.func)
    a = np.random.default_rng(2).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array(size, np.float32)
    start = time.perf_counter()
    kernel(da, db)
    first = time.perf_counter() - start
    ours = _median(lambda: kernel(da, db), cuda.synchronize)
    nbytes = a.nbytes + size * 4
    want = a.astype(np.float64).sum(axis=1)
    err = float(np.abs(db.copy_to_host() - want).max() / np.abs(want).max())
    peer = None
    if cp is not None:
        ca = cp.asarray(a)
        peer = _median(lambda: ca.sum(axis=1), cp.cuda.Device().synchronize)
        _row(rows, f"cupy.sum(axis=1) {size}x{size}", peer, nbytes / peer / 1e9, "GB/s")
    _row(rows, f"polypad row sum (rfactor into shared) {size}x{size}", ours,
         nbytes / ours / 1e9, "GB/s", peer,
         f"max rel err {err:.1e}" + (" ok" if err < 1e-4 else " FAILED"), compile_s=first)
    print(f"  (row sum: build {built:.2f} s, first call with compile {first:.2f} s)")


def elementwise(cuda, cp, rows, size, threads: int = 256, per_thread: int = 4):
    import polypad as pp

    func = pp.parse(f'''
@T.prim_func
def scale(A: T.Buffer(({size}, {size}), "float32"), B: T.Buffer(({size}, {size}), "float32")):
    for i, j in T.grid({size}, {size}):
        B[i, j] = A[i, j] * T.float32(2) + T.float32(1)
''')
    # Each thread does per_thread elements, threads apart: independent loads in flight.
    sch = pp.Schedule(func)
    threads = min(threads, size // per_thread)
    jo, jj, ji = sch.split("j", [None, per_thread, threads])
    sch.bind("i", "blockIdx.y")
    sch.bind(jo, "blockIdx.x")
    sch.bind(ji, "threadIdx.x")
    sch.unroll(jj)
    kernel, built, _ = _build(sch.func)
    a = np.random.default_rng(3).standard_normal((size, size), dtype=np.float32)
    da, db = cuda.to_device(a), cuda.device_array((size, size), np.float32)
    start = time.perf_counter()
    kernel(da, db)
    first = time.perf_counter() - start
    ours = _median(lambda: kernel(da, db), cuda.synchronize)
    nbytes = 2 * a.nbytes
    if cp is not None:  # cudaMemcpy device to device, through cupy
        ca, cb = cp.asarray(a), cp.empty_like(cp.asarray(a))
        copy = _median(lambda: cp.copyto(cb, ca), cp.cuda.Device().synchronize)
        peer_name = "cupy.copyto (device to device)"
    else:
        copy = _median(lambda: db.copy_to_device(da), cuda.synchronize)
        peer_name = "numba copy_to_device (device to device)"
    _row(rows, f"{peer_name} {size}x{size}", copy, nbytes / copy / 1e9, "GB/s")
    kernel(da, db)
    ok = np.array_equal(db.copy_to_host(), a * 2 + 1)
    _row(rows, f"polypad elementwise B = A * 2 + 1 {size}x{size}, {per_thread} per thread", ours,
         nbytes / ours / 1e9,
         "GB/s", copy, "exact ok" if ok else "FAILED", compile_s=first)
    # The same kernel launched directly, without the Kernel call's checks.
    (bare, launch), = kernel.compile()._impl.kernels
    grid, block = launch()
    alone = _median(lambda: bare[grid, block](da, db), cuda.synchronize)
    _row(rows, "  the same kernel launched directly", alone, nbytes / alone / 1e9, "GB/s", copy)
    print(f"  (elementwise: build {built:.2f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", default="sgemm,conv,rowsum,elementwise")
    parser.add_argument("--per-thread-8", action="store_true",
                        help="also SGEMM with 8 x 8 outputs per thread")
    options = parser.parse_args()
    cuda = _gpu()
    if cuda is None:
        return 0
    cp, torch = _optional("cupy"), _optional("torch")
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    print(f"{name}, numba {__import__('numba').__version__}, numpy {np.__version__}, "
          f"cupy {getattr(cp, '__version__', 'absent')}, "
          f"torch {getattr(torch, '__version__', 'absent')}, "
          f"{datetime.date.today().isoformat()}")
    rows: list = []
    only = set(options.only.split(","))
    quick = options.quick
    if "sgemm" in only:
        sgemm(cuda, cp, rows, 1024 if quick else 4096)
        if options.per_thread_8:  # the same speed, and 13.6 s to compile on an H200
            sgemm(cuda, cp, rows, 1024 if quick else 4096, per_thread=8, with_peer=False)
    if "conv" in only:
        sizes = dict(n=1, ci=64, co=64, w=100, h=80) if quick else \
            dict(n=5, ci=128, co=128, w=100, h=80)
        conv(cuda, torch, rows, sizes)
    if "rowsum" in only:
        row_sum(cuda, cp, rows, 4096 if quick else 16384)
    if "elementwise" in only:
        elementwise(cuda, cp, rows, 2048 if quick else 8192)
    print()
    print("| kernel | time | rate | vs peer | check | first call (compile) |")
    print("|---|---|---|---|---|---|")
    for name, seconds, rate, unit, peer, check, compile_s in rows:
        ratio = f"{peer / seconds:.2f}x" if peer else "the peer"
        first = f"{compile_s:.2f} s" if compile_s is not None else ""
        print(f"| {name} | {seconds * 1e3:.3f} ms | {rate:.2f} {unit} | {ratio} | {check} | "
              f"{first} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
