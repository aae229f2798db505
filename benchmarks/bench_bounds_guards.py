"""What the run-time bounds checks of undecided accesses cost (codegen/bounds_guards.py,
codegen/numba/guards.py, codegen/numba/hoist.py).

Each gather is built three ways and timed in one run, the variants' calls
interleaved so that a load on the machine falls on all alike: the default
(``boundscheck=None``: the data-dependent access checked, ``0 <= i < n`` once
per access), ``boundscheck=False`` (unchecked, unsafe) and numpy's fancy
indexing, which checks every index too.  Timings are the best and the median
of ``repeat`` calls after a warm-up; ``cost`` is the checked kernel's best
over the unchecked one's.  Every output is checked against numpy.

- ``gather``: ``C[i] = A[B[i]]``, serial, and ``gather par``, the same in a
  ``T.parallel`` loop (the check writes the flag array there);
- ``rows``: ``C[i, j] = A[B[i], j]``, an embedding lookup: only its first
  axis is undecided (:mod:`analyses.bounds_axes`; ``j`` runs over A's second
  extent), so only that axis is checked, and since ``B[i]`` does not change
  in the loop over ``j``, once per row before it.  ``rows, every axis`` is
  the same kernel checked as before per-axis decisions: both axes of every
  element, in the inner loop (the axes' analysis told to decide none);
- ``scaled``: ``C[i, j] = A[B[i]] * X[j]``, whose check the loop over ``j``
  does not change: it runs once per row, before that loop.

Run: ``python benchmarks/bench_bounds_guards.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import analyses.precondition  # noqa: E402
import codegen  # noqa: E402
from polypad.script import parse  # noqa: E402


@contextmanager
def every_axis():
    """Builds inside it check every axis of an undecided access (no axis proved
    alone), as before :mod:`analyses.bounds_axes`: the comparison's old side."""
    saved = analyses.precondition.undecided_axes
    analyses.precondition.undecided_axes = (
        lambda checker, access, allowed: tuple(range(len(access.node.indices))))
    try:
        yield
    finally:
        analyses.precondition.undecided_axes = saved


def kernels(n: int, v: int, d: int) -> dict:
    """The functions, and numpy's answer to each, at ``n`` indices into ``v`` rows of ``d``."""
    gather = '''
@T.prim_func
def gather(A: T.Buffer(({v},), "float32"), B: T.Buffer(({n},), "int32"),
           C: T.Buffer(({n},), "float32")):
    for i in T.{kind}({n}):
        C[i] = A[B[i]]
'''
    rows = parse(f'''
@T.prim_func
def rows(A: T.Buffer(({v}, {d}), "float32"), B: T.Buffer(({n // d},), "int32"),
         C: T.Buffer(({n // d}, {d}), "float32")):
    for i in T.parallel({n // d}):
        for j in T.serial({d}):
            C[i, j] = A[B[i], j]
''')
    scaled = parse(f'''
@T.prim_func
def scaled(A: T.Buffer(({v},), "float32"), B: T.Buffer(({n // d},), "int32"),
           X: T.Buffer(({d},), "float32"), C: T.Buffer(({n // d}, {d}), "float32")):
    for i in T.parallel({n // d}):
        for j in T.serial({d}):
            C[i, j] = A[B[i]] * X[j]
''')
    return {
        "gather": (parse(gather.format(n=n, v=v, kind="serial")),
                   lambda A, B, C: np.take(A, B, out=C)),
        "gather par": (parse(gather.format(n=n, v=v, kind="parallel")),
                       lambda A, B, C: np.take(A, B, out=C)),
        "rows": (rows, lambda A, B, C: np.take(A, B, axis=0, out=C)),
        "rows, every axis": (rows, lambda A, B, C: np.take(A, B, axis=0, out=C)),
        "scaled": (scaled, lambda A, B, X, C: np.multiply(A[B][:, None], X, out=C)),
    }


def inputs(func, v: int, rng) -> list:
    args = []
    for param in func.params:
        shape = tuple(int(e) for e in param.shape)
        if param.dtype == "int32":
            args.append(rng.integers(0, v, shape).astype("int32"))
        else:
            args.append(rng.uniform(-1, 1, shape).astype("float32"))
    return args


def rows_of_table(quick: bool, repeat: int) -> list[tuple]:
    n, v, d = (1 << 16, 4096, 64) if quick else (1 << 22, 1 << 16, 64)
    rng = np.random.default_rng(0)
    out = []
    for name, (func, numpy_fn) in kernels(n, v, d).items():
        args = inputs(func, v, rng)
        with every_axis() if name.endswith("every axis") else nullcontext():
            checked = codegen.build(func).compile()
        variants = {"checked": checked,
                    "unchecked": codegen.build(func, boundscheck=False).compile(),
                    "numpy": numpy_fn}
        want = [a.copy() for a in args]
        numpy_fn(*want)
        for fn in variants.values():
            got = [a.copy() for a in args]
            fn(*got)  # the warm-up, checked
            np.testing.assert_allclose(got[-1], want[-1], rtol=1e-6)
        times = {k: [] for k in variants}
        for r in range(repeat):
            order = list(variants)
            order = order[r % 3:] + order[:r % 3]
            for key in order:
                start = time.perf_counter()
                variants[key](*args)
                times[key].append(time.perf_counter() - start)
        best = {k: min(t) for k, t in times.items()}
        out.append((name, *(f"{best[k] * 1e3:.3f} / {statistics.median(times[k]) * 1e3:.3f}"
                            for k in variants),
                    f"{best['checked'] / best['unchecked']:.2f}"))
    return out


def table(rows: list[tuple]) -> str:
    head = ("kernel", "checked ms (best / median)", "unchecked ms", "numpy ms",
            "cost (checked / unchecked)")
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)) for r in [head, *rows]]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    print(table(rows_of_table(options.quick, options.repeat)))


if __name__ == "__main__":
    main()
