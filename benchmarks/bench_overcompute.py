"""Overcompute vs branching: the kernels, and the time of the proof that allows it.

Two kernels at sizes where the guard matters, each derived by polypad from the
RFC's "before" form (``transform_layout`` with a pad value, then
``sequential_buffer_access``):

- row summation (RFC 0077, "Overcompute vs Branching"): 4096 rows of 4094
  floats, the columns split by 4 (4096 with the padding, which holds 0.0);
- the 1-d convolution of "Remove Branching Through Overcompute", with the
  filter, at 2**20 - 1 outputs split by 4 (A padded with 0.0, B's padding
  written 0.0 by a pad-value stage).

For each: the guarded Numba kernel, the overcomputed one
(``remove_branching_through_overcompute``), for the convolution also the
overcomputed one after ``hoist_expression`` + ``reduce_loop_extents`` (the
pad-value stage shrunk to the one padding element), and numpy on the logical
arrays in the same run.  Copies of the emitted sources edited by hand (never
polypad output: the sum kept in a local rather than in the output element,
``fastmath=True``, the ``jo, ji`` loops fused into one loop over the row) show
what the emitted code leaves on the table, and that the guard only costs time
once the rest is right.  Times are medians of ``REPEAT`` calls after one
warm-up call (compilation excluded); every result is checked against numpy.

Then the proof: ``analyses.can_remove_conditional`` on the conditional of
each RFC walkthrough step that the overcompute pass is asked about (target:
20 ms), median of ``PROOF_REPEAT`` runs, ``cold`` with the per-function
context cache (``analyses.program._PROGRAMS``) cleared before each run,
``warm`` without; and a summary over every conditional of every RFC example
file.

Run: ``python benchmarks/bench_overcompute.py``
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import analyses  # noqa: E402
import analyses.program as context_module  # noqa: E402
import codegen  # noqa: E402
import polypad as pp  # noqa: E402
from polypad.ir import nodes as n  # noqa: E402
from polypad.ir.visitor import walk  # noqa: E402
from polypad.transform import (  # noqa: E402
    hoist_expression,
    reduce_loop_extents,
    remove_branching_through_overcompute,
)

REPEAT = 15
PROOF_REPEAT = 7
EXAMPLES = ROOT / "tests" / "examples" / "rfc0077"


def _median_ms(fn, repeat: int, setup=None) -> float:
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _table(header: tuple, rows: list[tuple]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()


# ---------------------------------------------------------------- kernels

ROWS, COLS = 4096, 4094
ROW_SUM = f'''
@T.prim_func
def row_summation(A: T.Buffer(({ROWS}, {COLS}), "float32"), B: T.Buffer(({ROWS},), "float32")):
    for i in T.serial({ROWS}):
        B[i] = 0.0
        for j in T.serial({COLS}):
            B[i] = B[i] + A[i, j]
'''

N_OUT = 2**20 - 1  # n % 4 == 3: the last tile's overcompute reads inside A's padded tile
CONV = f'''
@T.prim_func
def conv1d(A: T.Buffer(({N_OUT + 2},), "float32"), F: T.Buffer((3,), "float32"),
           B: T.Buffer(({N_OUT},), "float32")):
    with T.block("compute"):
        for i in T.serial({N_OUT}):
            B[i] = 0.0
            for f in T.serial(3):
                B[i] = B[i] + F[f] * A[i + f]
'''


def _edited(kernel, *edits: tuple[str, str]):
    """The emitted source of ``kernel`` with ``edits`` applied, compiled (not cached).

    For measuring what the emitted code leaves on the table; never polypad output.
    """
    source = kernel.source.replace("cache=True, ", "")
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    namespace: dict = {}
    exec(compile(source, "<edited kernel>", "exec"), namespace)  # noqa: S102
    return namespace["kernel"]


CONV_LOCAL = ("""            B[io, ii] = np.float32(0.0)
            for f in range(3):
                B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]""",
              """            acc = np.float32(0.0)
            for f in range(3):
                acc = acc + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
            B[io, ii] = acc""")
FASTMATH = ('error_model="numpy"', 'error_model="numpy", fastmath=True')
ROW_LOCAL = ("""        B[i] = np.float32(0.0)
        for jo in range(1024):
            for ji in range(4):
                B[i] = B[i] + A[i, jo, ji]""", """        acc = np.float32(0.0)
        for jo in range(1024):
            for ji in range(4):
                acc = acc + A[i, jo, ji]
        B[i] = acc""")
# What a fuse(jo, ji) would give: one loop over the row's 4096 contiguous floats.
ROW_FUSED = (ROW_LOCAL[0], """        acc = np.float32(0.0)
        for j in range(4096):
            acc = acc + A[i, j // 4, j % 4]
        B[i] = acc""")
ROW_FUSED_GUARDED = ("""        B[i] = np.float32(0.0)
        for jo in range(1024):
            for ji in range(4):
                if 4 * jo + ji < 4094:
                    B[i] = B[i] + A[i, jo, ji]""", """        acc = np.float32(0.0)
        for j in range(4096):
            if j < 4094:
                acc = acc + A[i, j // 4, j % 4]
        B[i] = acc""")


def row_sum_rows() -> list[tuple]:
    sch = pp.Schedule(pp.parse(ROW_SUM))
    sch.transform_layout(None, "A", lambda i, j: [i, j // 4, j % 4], pad_value=0.0)
    sch.sequential_buffer_access(None, "A")
    guarded = sch.func
    overcomputed = remove_branching_through_overcompute(guarded)
    assert overcomputed is not guarded, "the guard should go"

    rng = np.random.default_rng(0)
    a = rng.standard_normal((ROWS, COLS)).astype("float32")
    packed = np.zeros((ROWS, COLS // 4 + 1, 4), "float32")
    packed.reshape(ROWS, -1)[:, :COLS] = a
    want = a.sum(axis=1, dtype=np.float64)
    b = np.zeros(ROWS, "float32")

    def check(out):
        np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)

    slow, fast = codegen.build(guarded), codegen.build(overcomputed)
    rows = []
    for label, fn in [
        ("guarded (polypad)", slow),
        ("overcomputed (polypad)", fast),
        ("overcomputed, edited: local sum + fastmath", _edited(fast, ROW_LOCAL, FASTMATH)),
        ("guarded, edited: jo, ji fused + local sum + fastmath",
         _edited(slow, ROW_FUSED_GUARDED, FASTMATH)),
        ("overcomputed, edited: jo, ji fused + local sum + fastmath",
         _edited(fast, ROW_FUSED, FASTMATH)),
    ]:
        fn(packed, b)  # compile / warm up
        check(b)
        rows.append(("row sum 4096 x 4094 (x4)", label,
                     f"{_median_ms(lambda fn=fn: fn(packed, b), REPEAT):.2f}"))
    check(a.sum(axis=1))
    rows.append(("row sum 4096 x 4094 (x4)", "numpy a.sum(axis=1)",
                 f"{_median_ms(lambda: a.sum(axis=1), REPEAT):.2f}"))
    return rows


def conv_rows() -> list[tuple]:
    sch = pp.Schedule(pp.parse(CONV))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=0.0)
    sch.sequential_buffer_access("compute", "B")
    guarded = sch.func
    sch.remove_branching_through_overcompute("compute")
    overcomputed = sch.func
    shrunk = reduce_loop_extents(hoist_expression(overcomputed))

    rng = np.random.default_rng(1)
    a = rng.standard_normal(N_OUT + 2).astype("float32")
    f = rng.standard_normal(3).astype("float32")
    a_packed = np.zeros(((N_OUT + 2 + 3) // 4, 4), "float32")
    a_packed.reshape(-1)[:N_OUT + 2] = a
    want = np.correlate(a, f, "valid")
    b = np.full(((N_OUT + 3) // 4, 4), 7.0, "float32")

    def check(out):
        np.testing.assert_allclose(out.reshape(-1)[:N_OUT], want, rtol=1e-4, atol=1e-4)
        assert out.reshape(-1)[N_OUT:].tolist() == [0.0]

    fast = codegen.build(overcomputed)
    rows = []
    for label, fn in [
        ("guarded (polypad)", codegen.build(guarded)),
        ("overcomputed (polypad)", fast),
        ("overcomputed + hoist + reduce_loop_extents", codegen.build(shrunk)),
        ("overcomputed, edited: local accumulator", _edited(fast, CONV_LOCAL)),
        ("overcomputed, edited: fastmath=True", _edited(fast, FASTMATH)),
    ]:
        fn(a_packed, f, b)
        check(b)
        rows.append((f"conv1d {N_OUT} outputs (x4)", label,
                     f"{_median_ms(lambda fn=fn: fn(a_packed, f, b), REPEAT):.2f}"))
    rows.append((f"conv1d {N_OUT} outputs (x4)", "numpy np.correlate(a, f, 'valid')",
                 f"{_median_ms(lambda: np.correlate(a, f, 'valid'), REPEAT):.2f}"))
    return rows


# ---------------------------------------------------------------- proofs

# (example, function or None, condition as printed): the conditionals the RFC's
# walkthroughs remove, or keep.
WALKTHROUGH = [
    ("overcompute_conv1d_sequential", None, "0 <= 4 * io + ii < 14"),
    ("elementwise_sequential", None, "4 * io + ii < 14"),
    ("multi_semantics_sequential", None, "4 * io + ii < 14"),
    ("internal_buffer_sequential", None, "4 * io + ii < 14"),
    ("explicit_default_step4", "consumer", "4 * io + ii < 14"),
    ("explicit_default_step4", "producer", "4 * io + ii < 14"),
    ("implicit_default_step10", None, "ii >= 2"),
    ("implicit_default_step10", None, "ii < 2"),
    ("implicit_default_step11", None, "io == 2"),
    ("row_summation_split", None, "4 * j_outer + j_inner < 14"),
    ("single_func_step1", None, "4 * io + ii < 14"),
    ("split_module_known_before", "compute_C", "4 * io + ii < 14"),
    ("split_module_before", "compute_C", "4 * io + ii < 14"),
    ("split_module_undef_before", "compute_C", "4 * io + ii < 14"),
]


def _load(stem: str, name: str | None):
    parsed = pp.parse((EXAMPLES / f"{stem}.py").read_text())
    return parsed[name] if name is not None else parsed


def _conditionals(f):
    return [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]


def _pick(f, text: str, stem: str):
    from polypad.ir.show import show

    found = [s for s in _conditionals(f) if show(s.condition) == text]
    # The same guard may appear in several stages; the walkthrough asks about the last.
    assert found, f"no `if {text}` in {stem}"
    return found[-1]


def _time_decision(f, stmt) -> tuple[float, float, object]:
    decided = analyses.can_remove_conditional(f, stmt)

    def clear():
        context_module._PROGRAMS.clear()

    cold = _median_ms(lambda: analyses.can_remove_conditional(f, stmt), PROOF_REPEAT, clear)
    warm = _median_ms(lambda: analyses.can_remove_conditional(f, stmt), PROOF_REPEAT)
    return cold, warm, decided


def _verdict(decided) -> str:
    name = type(decided).__name__
    return {"Removable": f"removable (keep {getattr(decided, 'keep', '')})"}.get(name, name)


def proof_rows() -> list[tuple]:
    rows = []
    for stem, name, text in WALKTHROUGH:
        f = _load(stem, name)
        cold, warm, decided = _time_decision(f, _pick(f, text, stem))
        where = f"{stem}" + (f".{name}" if name else "")
        rows.append((where, f"`if {text}`", _verdict(decided), f"{cold:.1f}", f"{warm:.1f}",
                     "yes" if cold <= 20 else "no"))
    return rows


def all_examples_summary() -> tuple:
    colds = []
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            for stmt in _conditionals(f):
                def once(f=f, stmt=stmt):
                    context_module._PROGRAMS.clear()
                    try:
                        analyses.can_remove_conditional(f, stmt)
                    except pp.PolypadError:
                        pass

                colds.append(_median_ms(once, 3))
    colds.sort()
    return (len(colds), f"{statistics.median(colds):.1f}",
            f"{colds[int(0.9 * (len(colds) - 1))]:.1f}", f"{colds[-1]:.1f}",
            sum(c <= 20 for c in colds))


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"numba {numba.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load {load:.1f}; medians of {REPEAT} calls\n")
    _table(("kernel", "variant", "ms"), row_sum_rows() + conv_rows())
    # Warm up z3/isl once so that the first row does not pay for imports.
    warm_up = _load("row_summation_split", None)
    analyses.can_remove_conditional(warm_up, _conditionals(warm_up)[0])
    _table(("example", "conditional", "verdict", "cold ms", "warm ms", "<= 20 ms"),
           proof_rows())
    count, median, p90, worst, fast = all_examples_summary()
    _table(("every conditional of every RFC example", "median cold ms", "p90 ms", "max ms",
            "<= 20 ms"), [(count, median, p90, worst, f"{fast} of {count}")])


if __name__ == "__main__":
    main()
