"""Where a scheduled CUDA kernel's compile time goes, stage by stage, without a GPU.

The first call of a ``cuda`` kernel compiles it: Numba's front end (bytecode
to Numba IR, typing, lowering to LLVM IR), LLVM IR printed as text, NVVM
(LLVM IR to PTX), and, on a GPU, the driver's assembler at load time (PTX to
SASS, which ``ptxas`` does here).  This script times each stage for the
default SGEMM 4096³, conv layer and elementwise schedules (``--variants``:
SGEMM with the step unrolled fully and with ``vector=4``, the elementwise
kernel in runs of 4 and 2, too) by compiling for ``--cc`` (default 9.0) through
numba-cuda's own entry points, one stage at a time, and prints one row per
kernel: the stages, ptxas's registers and spills, the PTX's fma count
(the proxy that the kernel stayed as good), its loads from shared memory
by width (four, two or one value per instruction) and its loads and stores
of global memory by width.  ``--match REGEX`` compiles only the kernels whose
labels it matches.

``--save DIR`` writes each kernel's emitted source into ``DIR``;
``--compare DIR`` also compiles the sources saved there (by another
checkout: the "before" of a change to the emitter) and prints them beside.
A second process skips every stage but the last: the ``cuda`` target
compiles its module from a file (``codegen.cuda.cache``) with numba-cuda's
on-disk cache on, whose entries are keyed by the GPU's compute capability,
so that needs a GPU to measure.

It needs numba-cuda's NVRTC (``libnvrtc.so``, which numba-cuda loads to
link its libdevice) and ``ptxas`` (the CUDA toolkit) on ``PATH``; no driver,
no GPU.  Without NVRTC it says how to get it: ``pip install
'polypad[cuda]'`` (numba-cuda's ``cu13`` extra brings
``nvidia-cuda-nvrtc``), or ``pip download nvidia-cuda-nvrtc==13.*``, unpack
the wheel and ``export LD_LIBRARY_PATH=<unpacked>/nvidia/cu13/lib``.

Times are CPU seconds (``time.process_time``; ptxas's from ``getrusage``),
which a machine shared with other work disturbs less than the wall clock,
of one compile in a process that has already compiled a small kernel
(Numba's own start is not in them); compare rows from the same run.

Run: ``LD_LIBRARY_PATH=... python benchmarks/bench_cuda_compile.py
[--variants] [--match REGEX] [--save DIR] [--compare DIR]``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"  # before numba.cuda is first imported

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

NVRTC_HELP = (
    "numba-cuda could not compile without NVRTC ({error}).\n"
    "Get libnvrtc: pip install 'polypad[cuda]' (numba-cuda[cu13] brings nvidia-cuda-nvrtc), "
    "or\n  pip download --no-deps 'nvidia-cuda-nvrtc==13.*' -d /tmp/nvrtc && "
    "cd /tmp/nvrtc && unzip -o -q '*.whl' -d x\n"
    "  export LD_LIBRARY_PATH=/tmp/nvrtc/x/nvidia/cu13/lib\n"
    "and run this script again.")

#: Front-end passes grouped as the report prints them (Numba's pass names); the rest
#: is bytecode analysis and the untyped rewrites.
TYPING = {"nopython_type_inference", "partial_type_inference", "nopython_rewrites",
          "inline_overloads", "annotate_types", "ir_legalization",
          "nopython_supported_feature_validation"}
LOWERING = {"strip_phis", "create_library", "native_lowering", "cuda_native_lowering",
            "nopython_backend", "cuda_backend"}


#: (threads, elements per thread, run length) of the elementwise variants (``--variants``).
ELEMENTWISE_VARIANTS = ((256, 4, 4), (256, 8, 4), (256, 16, 4), (128, 8, 4), (256, 8, 2))


def schedules(variants: bool) -> list[tuple[str, object]]:
    """(label, scheduled function) of the kernels timed."""
    from bench_cuda import elementwise_schedule

    from polypad.examples import conv_layer, matmul

    sgemm = matmul.matmul(4096, 4096, 4096)
    out = [("SGEMM 4096³ (default)", matmul.schedule_cuda(sgemm).func),
           ("conv layer (default)", conv_layer.schedule_cuda(conv_layer.conv_layer(
               n=5, ci=128, co=128, w=100, h=80)).func)]
    out.append(("elementwise 8192² (default)", elementwise_schedule(8192).func))
    if variants:
        for threads, per_thread, vector in ELEMENTWISE_VARIANTS:
            out.append((f"elementwise, {threads} threads, {per_thread} per thread in runs of "
                        f"{vector}", elementwise_schedule(8192, threads, per_thread,
                                                          vector).func))
        out.append(("SGEMM, k_unroll=8", matmul.schedule_cuda(sgemm, k_unroll=8).func))
        out.append(("SGEMM, vector=4", matmul.schedule_cuda(sgemm, vector=4).func))
        out.append(("SGEMM, vector=4, k_unroll=4",
                    matmul.schedule_cuda(sgemm, vector=4, k_unroll=4).func))
        out.append(("SGEMM, vector=4, wide_copies",
                    matmul.schedule_cuda(sgemm, vector=4, wide_copies=True).func))
    return out


def signature(func) -> tuple:
    """The kernels' argument types: C-contiguous arrays, int32 scalars."""
    from numba.cuda import types

    from analyses.gpu_sync import plan_barriers
    from codegen.cuda.emit import host_buffers
    from polypad.ir.nodes import Buffer

    params = list(func.params) + host_buffers(plan_barriers(func))
    return tuple(types.Array(getattr(types, p.dtype), len(p.shape), "C")
                 if isinstance(p, Buffer) else types.int32 for p in params)


def kernels_of(source: str, label: str) -> list:
    """The ``@cuda.jit`` dispatchers of an emitted module."""
    namespace: dict = {}
    exec(compile(source, f"<{label}>", "exec"), namespace)  # noqa: S102 - our own text
    return [kernel for kernel, _ in namespace["KERNELS"]]


def stages(py_func, sig, cc: tuple[int, int]) -> dict:
    """Compile ``py_func`` for ``cc`` as ``numba.cuda.compile_ptx`` does, timing each
    stage; the PTX and ptxas's report too."""
    from numba.cuda import compiler
    from numba.cuda.cudadrv import nvvm

    seconds: dict[str, float] = {}
    start = time.process_time()
    cres = compiler.compile_cuda(py_func, None, sig, debug=False, lineinfo=False,
                                 fastmath=False, nvvm_options={"fastmath": False, "opt": 3},
                                 cc=cc, abi="numba", abi_info={})
    seconds["front end"] = time.process_time() - start
    passes = {}
    for times in cres.metadata["pipeline_times"].values():  # one pipeline: "cuda"
        passes.update(times)
    split = {"bytecode, untyped": 0.0, "typing": 0.0, "lowering": 0.0}
    for name, timing in passes.items():
        name = name.split("_", 1)[-1]  # "12_nopython_type_inference"
        total = timing.init + timing.run + timing.finalize
        key = "typing" if name in TYPING else "lowering" if name in LOWERING \
            else "bytecode, untyped"
        split[key] += total
    # Numba times its passes by the wall clock: their shares of the front end's CPU time.
    scale = seconds["front end"] / max(sum(split.values()), 1e-9)
    seconds.update({key: value * scale for key, value in split.items()})
    lib = cres.library
    kernel = lib.get_function(cres.fndesc.llvm_func_name)
    lib._entry_name = cres.fndesc.llvm_func_name
    compiler.kernel_fixup(kernel, False)
    nvvm.set_launch_bounds(kernel, None)
    start = time.process_time()
    ir_text = lib.llvm_strs
    seconds["IR text"] = time.process_time() - start
    start = time.process_time()
    ptx = lib.get_asm_str(cc=cc)
    seconds["NVVM"] = time.process_time() - start
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    try:
        start = _children()
        found = subprocess.run(["ptxas", "-v", "--gpu-name", f"sm_{cc[0]}{cc[1]}", f.name,
                                "-o", os.devnull], capture_output=True, text=True)
        seconds["ptxas"] = _children() - start
    except FileNotFoundError:
        found, seconds["ptxas"] = None, float("nan")
    finally:
        os.unlink(f.name)
    report = found.stderr if found is not None else ""
    registers = _number(report, "Used ", " registers")
    spills = _number(report, "bytes stack frame, ", " bytes spill stores")
    return {"seconds": seconds, "registers": registers, "spills": spills,
            "fma": ptx.count("fma.rn.f32"), "ir lines": sum(t.count("\n") for t in ir_text),
            "shared loads": shared_loads(ptx), "global": global_accesses(ptx)}


def shared_loads(ptx: str) -> str:
    """The PTX's loads from shared memory by width: ``v4/v2/1`` (four, two or one value
    per instruction)."""
    lines = [line for line in ptx.splitlines() if "ld.shared." in line]
    v4 = sum("ld.shared.v4." in line for line in lines)
    v2 = sum("ld.shared.v2." in line for line in lines)
    return f"{v4}/{v2}/{len(lines) - v4 - v2}"


def global_accesses(ptx: str) -> str:
    """The PTX's loads and stores of global memory by width: ``v4/v2/1 ld, v4/v2/1 st``."""
    out = []
    for kind in ("ld.global.", "st.global."):
        lines = [line for line in ptx.splitlines() if kind in line]
        v4 = sum(f"{kind}v4." in line or ".v4." in line for line in lines)
        v2 = sum(".v2." in line for line in lines)
        out.append(f"{v4}/{v2}/{len(lines) - v4 - v2} {kind[:2]}")
    return ", ".join(out)


def _children() -> float:
    """CPU seconds of the finished child processes (ptxas)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _number(text: str, before: str, after: str) -> str:
    for line in text.splitlines():
        if before in line and after in line:
            return line.split(before, 1)[1].split(after, 1)[0].strip()
    return "?"


COLUMNS = ("bytecode, untyped", "typing", "lowering", "IR text", "NVVM", "ptxas")


def row(label: str, found: dict) -> str:
    s = found["seconds"]
    total = s["front end"] + s["IR text"] + s["NVVM"] + s["ptxas"]
    cells = " | ".join(f"{s[c]:.2f}" for c in COLUMNS)
    return (f"| {label} | {cells} | {total:.2f} | {found['registers']} | {found['spills']} "
            f"| {found['fma']} | {found['shared loads']} | {found['global']} |")


def warm_up(cc) -> None:
    """Compile a small kernel, so that Numba's own start is in no row; say how to get
    NVRTC where it is missing."""
    from numba import cuda
    from numba.cuda import types

    def tiny(a):
        a[0] = a[0] + 1

    try:
        cuda.compile_ptx(tiny, (types.float32[::1],), cc=cc)
    except Exception as error:  # noqa: BLE001 - whatever numba-cuda raises, said plainly
        print(NVRTC_HELP.format(error=str(error).splitlines()[0]))
        raise SystemExit(1) from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", action="store_true",
                        help="also the SGEMM and elementwise variants")
    parser.add_argument("--cc", default="9.0", help="compute capability (default 9.0)")
    parser.add_argument("--save", type=Path, help="write each kernel's source here")
    parser.add_argument("--compare", type=Path, help="also compile the sources saved here")
    parser.add_argument("--match", default="", help="a regular expression: only the kernels "
                        "whose labels it matches")
    options = parser.parse_args()
    cc = tuple(int(x) for x in options.cc.split("."))
    warm_up(cc)
    import codegen

    print(f"| kernel | {' | '.join(COLUMNS)} | total (s) | registers | spill bytes | fma "
          "| shared loads v4/v2/1 | global v4/v2/1 |")
    print("|---" * (len(COLUMNS) + 7) + "|")
    for label, func in schedules(options.variants):
        if not re.search(options.match, label):
            continue
        start = time.process_time()
        source = codegen.build(func, target="cuda").source
        emitted = time.process_time() - start
        slug = "".join(c if c.isascii() and c.isalnum() else "_" for c in label.lower()).strip("_")
        if options.save:
            options.save.mkdir(parents=True, exist_ok=True)
            (options.save / f"{slug}.py").write_text(source)
        sig = signature(func)
        runs = [("", source)]
        if options.compare and (options.compare / f"{slug}.py").exists():
            runs.insert(0, (" before", (options.compare / f"{slug}.py").read_text()))
        for suffix, text in runs:
            for k, kernel in enumerate(kernels_of(text, label)):
                name = f"{label}{suffix}" + (f", kernel {k}" if k else "")
                try:
                    print(row(name, stages(kernel.py_func, sig, cc)), flush=True)
                except Exception as error:  # noqa: BLE001 - reported, the others go on
                    print(f"| {name} | not compiled without a GPU: "
                          f"{str(error).splitlines()[0][:80]} |", flush=True)
        print(f"(polypad's build and emit of {label}: {emitted:.2f} s, "
              f"{source.count(chr(10))} lines)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
