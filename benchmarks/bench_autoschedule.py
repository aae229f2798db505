"""autoschedule against the plain nest, the hand schedules and numpy, in one run.

For each kernel: the plain loop nest, the hand schedule (the recipe of
docs/schedules.md, or ``polypad.examples.conv_layer.schedule`` for the conv
layer), what ``polypad.autoschedule`` finds with ``--budget`` seconds, and the
numpy peer (BLAS for matmul, im2col + BLAS for the conv layer), each the median
of at least ``--repeat`` calls (as many as fit in a second, up to 50) after a
warm-up, all built with the Numba target and timed
in this process one after another.  Then the search's seconds and how many
candidates it timed.  Each search checks its candidates at full size against
the plain kernel, itself checked against the reference executor at the
recipe's small sizes (``small=``).

The kernels: matmul, row sum, transpose, the two-stage blur (docs/schedules.md's
recipes at their sizes, smaller with ``--quick``) and the seed-004 conv layer.
``--zoo`` takes the kernels of benchmarks/zoo.py instead (bench_zoo.py's list,
with its hand schedules and peers; the plain kernel checked at its tiny sizes),
``--unseen`` those of benchmarks/unseen_kernels.py (no recipe covers them: the
hand column is empty, the plain nest and numpy are the comparison).

Every column runs on the same arrays, each on a 64-byte boundary (as
bench_zoo.py places them; the search itself times on numpy's placement), and
those the kernel writes copied afresh, aligned, before each call.
``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` are unset before numpy loads, so
that OpenBLAS picks its kernel for this CPU (issue 25's peer).  Timings taken on
a shared machine are noisy: compare the columns of one run, not runs.

With ``--dask N``, last: the same N candidates of the matmul (at 256^3) searched
on a ``LocalCluster`` of one worker process and of two, and the ratio of the
search times (issue 25 asks for 1.5x with two, compiling dominating).  Each
cluster compiles into an empty kernel cache of its own.

Run: ``python benchmarks/bench_autoschedule.py [--budget 60] [--quick] [--only NAME ...]
[--dask N]``.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_name, None)

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from analyses.witness_inputs import make_inputs  # noqa: E402
from codegen.calling import written_buffers  # noqa: E402
from codegen.timing import copy_at  # noqa: E402
from polypad.examples import conv_layer  # noqa: E402

DOC = (ROOT / "docs" / "schedules.md").read_text()
RECIPES = DOC[DOC.index("\n## Recipes\n"):]


def recipe(heading: str) -> dict:
    """The namespace of the recipe under ``### heading`` in docs/schedules.md."""
    start = RECIPES.index(f"\n### {heading}\n")
    block = re.search(r"```python\n(.*?)```", RECIPES[start:], re.S).group(1)
    namespace: dict = {}
    exec(compile(block, f"schedules.md: {heading}", "exec"), namespace)
    return namespace


def blur_peer(A, B):
    bx = (A[:, :-2] + A[:, 1:-1] + A[:, 2:]) / np.float32(3)
    B[...] = (bx[:-2] + bx[1:-1] + bx[2:]) / np.float32(3)


def conv_peer(input, filter, bias, relu):
    """relu(conv + bias) as numpy writes it: im2col (a copy), one BLAS sgemm, bias, relu."""
    n, hp, wp, ci = input.shape
    windows = np.lib.stride_tricks.sliding_window_view(input, (3, 3), axis=(1, 2))
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * (hp - 2) * (wp - 2), 9 * ci)
    weights = filter.transpose(1, 2, 0, 3).reshape(9 * ci, -1)
    out = cols @ weights
    out += bias
    np.maximum(out, 0, out=out)
    relu[...] = out.reshape(relu.shape)


def kernels(quick: bool) -> list[dict]:
    """name, plain function, small function, hand schedule, numpy peer."""
    out = []
    for heading, name, sizes, peer in (
            ("Matmul", "matmul", dict(n=256) if quick else None,
             lambda A, B, C: np.matmul(A, B, out=C)),
            ("Row reduction", "row sum", dict(n=1024, m=1022) if quick else None,
             lambda A, B: A.sum(axis=1, out=B)),
            ("Transpose", "transpose", dict(n=1024) if quick else None,
             lambda A, B: np.copyto(B, A.T)),
            ("Stencil and pipeline", "blur", dict(h=1024, w=1024) if quick else None,
             blur_peer)):
        ns = recipe(heading)
        out.append(dict(name=name, func=ns["kernel"](**(sizes or ns["SIZES"])),
                        small=ns["kernel"](**ns["SMALL"]), hand=ns["schedule"], peer=peer))
    sizes = dict(conv_layer.HALIDE_SIZES)
    if quick:
        sizes.update(n=1, ci=32, co=64, w=50, h=20)
    out.append(dict(name="conv layer", func=conv_layer.conv_layer(**sizes),
                    small=conv_layer.conv_layer(n=1, ci=4, co=64, w=10, h=4),
                    hand=lambda f: conv_layer.schedule(f), peer=conv_peer))
    return out


def zoo_kernels(quick: bool) -> list[dict]:
    """The kernels of benchmarks/zoo.py, as :func:`kernels` gives its own."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from zoo import ZOO

    out = []
    for z in ZOO:
        sizes = z.quick if quick else z.sizes
        if z.name == "row sum":
            # The shipped example, whose extents are scalar parameters; autoschedule
            # takes constant sizes and a block: docs/schedules.md's row reduction, the
            # same sum at the same sizes, with its recipe.
            ns = recipe("Row reduction")
            out.append(dict(name=z.name, func=ns["kernel"](**sizes),
                            small=ns["kernel"](**ns["SMALL"]), hand=ns["schedule"],
                            peer=z.peer))
            continue
        out.append(dict(name=z.name, func=z.kernel(**sizes), small=z.kernel(**z.tiny),
                        hand=z.schedule, peer=z.peer))
    return out


ALIGN = 64


def unseen_kernels(quick: bool) -> list[dict]:
    """benchmarks/unseen_kernels.py's, which have no hand schedule."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from unseen_kernels import UNSEEN

    return [dict(name=name, func=kernel(**(fast if quick else sizes)),
                 small=kernel(**small), hand=None, peer=peer)
            for name, kernel, sizes, fast, small, peer in UNSEEN]


def aligned(a):
    """A copy of array ``a`` starting on an :data:`ALIGN`-byte boundary (a cache line,
    an AVX-512 vector), as TVM's runtime allocates arrays and bench_zoo.py places
    every variant's; numpy puts a large array 16 bytes past a page, where every
    512-bit load of a row straddles two cache lines.  Anything else as it is."""
    return copy_at(a, 0, ALIGN) if isinstance(a, np.ndarray) else a


def median_s(call, args, repeat: int, written: list[bool]) -> float:
    """The median seconds of at least ``repeat`` calls (as many as fit in a second, up
    to 50), each on fresh aligned copies of the arrays the kernel writes (``written``,
    by position; the others are shared, as the kernel only reads them), after a
    warm-up (of one call, where the warm-up took more than a second: a plain nest's).

    Copying every input before each call, as this script did, left a 16 MB input
    just written by the copy and timed a sub-millisecond kernel at twice its time."""
    def fresh():
        return [aligned(a) if w else a for a, w in zip(args, written, strict=True)]

    start = time.perf_counter()
    call(*fresh())
    first = time.perf_counter() - start
    calls = 1 if first > 1.0 else max(repeat, min(50, int(1.0 / max(first, 1e-6))))
    times = []
    for _ in range(calls):
        inputs = fresh()
        start = time.perf_counter()
        call(*inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(kernel: dict, budget: float, repeat: int, log: str | None) -> dict:
    func = kernel["func"]
    args = [aligned(a) for a in make_inputs(func, np.random.default_rng(0))]
    plain = codegen.build(func).compile()
    hand = codegen.build(kernel["hand"](func).func).compile() if kernel["hand"] else None
    start = time.perf_counter()
    sch = pp.autoschedule(func, budget_s=budget, small=kernel["small"], log=log)
    search_s = time.perf_counter() - start
    auto = codegen.build(sch.func).compile()
    writes = written_buffers(func)
    written = [p in writes for p in func.params]
    times = {label: median_s(call, args, repeat, written)
             for label, call in (("plain", plain), ("hand", hand), ("auto", auto),
                                 ("numpy", kernel["peer"])) if call is not None}
    times.setdefault("hand", float("nan"))
    return dict(name=kernel["name"], **times, search_s=search_s,
                measured=sch.tuning.measured, space=sch.tuning.space,
                refused=sum(sch.tuning.refused.values()), trace=str(sch.trace))


def dask_rows(candidates: int) -> None:
    """The search of ``candidates`` candidates on LocalClusters of 1 and 2 workers, each
    with an empty kernel cache of its own (with a shared one, the second search would
    load the first one's kernels instead of compiling them)."""
    import tempfile

    from distributed import Client, LocalCluster

    from codegen.numba.compiler import clear_cache

    func = recipe("Matmul")["kernel"](n=256)
    seconds = {}
    for workers in (1, 2):
        os.environ["POLYPAD_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"polypad_dask{workers}_")
        clear_cache()  # and the kernels this process has loaded
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            start = time.perf_counter()
            sch = pp.autoschedule(func, budget_s=3600, max_candidates=candidates,
                                  client=client, small=recipe("Matmul")["kernel"](n=16))
            seconds[workers] = time.perf_counter() - start
            print(f"# LocalCluster of {workers}: {len(sch.tuning.tried)} candidates in "
                  f"{seconds[workers]:.1f} s", flush=True)
    print(f"# two workers / one: {seconds[1] / seconds[2]:.2f}x faster")


def ms(seconds: float) -> str:
    return f"{'-':>9}" if seconds != seconds else f"{seconds * 1e3:9.2f}"  # NaN: no column


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="search seconds per kernel")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed calls per column, at least (as many as fit in a second)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", nargs="*", default=None, help="only the kernels of these names")
    parser.add_argument("--log", default=None, help="a tuning log to use and extend")
    parser.add_argument("--zoo", action="store_true",
                        help="the kernels of benchmarks/zoo.py instead of this script's")
    parser.add_argument("--unseen", action="store_true",
                        help="benchmarks/unseen_kernels.py's kernels (no hand schedule) instead")
    parser.add_argument("--dask", type=int, default=0, metavar="N",
                        help="also search N candidates on LocalClusters of 1 and 2 workers")
    args = parser.parse_args(argv)
    print(f"# autoschedule, budget {args.budget:g} s per kernel, median of {args.repeat} or more "
          f"calls; {os.cpu_count()} cores; numpy {np.__version__}")
    print("# times in ms; auto/hand = hand time / auto time, auto/numpy = numpy time / auto "
          "time (above 1: autoschedule is faster)")
    # Without hand schedules (--unseen) the first ratio is against the plain nest.
    versus = "plain" if args.unseen else "hand"
    header = (f"{'kernel':<11} | {'plain':>9} | {'hand':>9} | {'auto':>9} | {'numpy':>9} | "
              f"{'auto/' + versus:>9} | {'auto/numpy':>10} | {'search s':>8} | measured")
    print(header)
    print("-" * len(header))
    rows = []
    chosen = zoo_kernels if args.zoo else unseen_kernels if args.unseen else kernels
    for kernel in chosen(args.quick):
        if args.only is not None and kernel["name"] not in args.only:
            continue
        try:
            r = run(kernel, args.budget, args.repeat, args.log)
        except pp.PolypadError as error:
            print(f"{kernel['name']:<11} | not tuned: {type(error).__name__}: "
                  f"{str(error).splitlines()[0][:120]}", flush=True)
            continue
        rows.append(r)
        print(f"{r['name']:<11} | {ms(r['plain'])} | {ms(r['hand'])} | {ms(r['auto'])} | "
              f"{ms(r['numpy'])} | {r[versus] / r['auto']:9.2f} | {r['numpy'] / r['auto']:10.2f}"
              f" | {r['search_s']:8.1f} | {r['measured']} of {r['space']} "
              f"({r['refused']} refused)", flush=True)
    print()
    if args.dask:
        dask_rows(args.dask)
    for r in rows:
        print(f"# {r['name']}: autoschedule's trace")
        for line in (r["trace"] or "(the plain nest)").splitlines():
            print(f"#   {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
