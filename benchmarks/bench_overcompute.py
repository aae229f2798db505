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
polypad output: ``fastmath=True``, the ``jo, ji`` loops fused into one loop
over the row; polypad itself keeps each sum in a local, and contracts
``a * b + c`` into FMAs) show
what the emitted code leaves on the table, and that the guard only costs time
once the rest is right.  Times are medians of ``REPEAT`` calls after one
warm-up call (compilation excluded); every result is checked against numpy.

Then the proof: ``analyses.can_remove_conditional`` on the conditional of
each RFC walkthrough step that the overcompute pass is asked about (target:
20 ms), median of ``PROOF_REPEAT`` runs, ``cold`` with the per-function
caches (contexts, ``analyses.program._PROGRAMS``; dataflow,
``analyses.dataflow._FLOWS``) cleared before each run, ``warm`` without; and
a summary over every conditional of every RFC example file, and over the removable
ones among them.  Each row is
checked: a kernel's result against numpy; a decision against the verdict the
walkthrough expects (removed or kept) and, for a removal, by running the
function without the guard against the function with it (reference
executor, inputs honouring the ``T.assume`` facts, two seeds; elements whose
final value depends on what they held before -- padding stored
``T.undef()`` -- are not compared).

Run: ``python benchmarks/bench_overcompute.py`` (about 20 s; ``--quick``:
fewer repetitions).
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

sys.path.insert(0, str(ROOT / "tests"))

import analyses  # noqa: E402
import analyses.dataflow_cache as dataflow_module  # noqa: E402
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

QUICK = "--quick" in sys.argv[1:]
REPEAT = 5 if QUICK else 15
PROOF_REPEAT = 3 if QUICK else 9
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


# polypad holds the sums in locals itself (codegen/numba/accumulators.py) and
# contracts a * b + c by default (fastmath="contract").
FASTMATH = ('fastmath={"contract"}', "fastmath=True")
# What a fuse(jo, ji) would give: one loop over the row's 4096 contiguous floats.
ROW_FUSED = ("""        for jo in range(1024):
            for ji in range(4):
                B_acc = B_acc + A[i, jo, ji]""", """        for j in range(4096):
            B_acc = B_acc + A[i, j // 4, j % 4]""")
ROW_FUSED_GUARDED = ("""        for jo in range(1024):
            for ji in range(4):
                if 4 * jo + ji < 4094:
                    B_acc = B_acc + A[i, jo, ji]""", """        for j in range(4096):
            if j < 4094:
                B_acc = B_acc + A[i, j // 4, j % 4]""")


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

    def check(out) -> str:
        np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)
        return f"ok (max err {np.max(np.abs(out - want)):.0e} vs float64 sum)"

    slow, fast = codegen.build(guarded), codegen.build(overcomputed)
    rows = []
    for label, fn in [
        ("guarded (polypad)", slow),
        ("overcomputed (polypad)", fast),
        ("overcomputed, edited: fastmath=True", _edited(fast, FASTMATH)),
        ("guarded, edited: jo, ji fused + fastmath=True",
         _edited(slow, ROW_FUSED_GUARDED, FASTMATH)),
        ("overcomputed, edited: jo, ji fused + fastmath=True",
         _edited(fast, ROW_FUSED, FASTMATH)),
    ]:
        b[:] = np.nan  # a kernel that skips an element fails its check
        fn(packed, b)  # compile / warm up
        ok = check(b)
        rows.append(("row sum 4096 x 4094 (x4)", label,
                     f"{_median_ms(lambda fn=fn: fn(packed, b), REPEAT):.2f}", ok))
    rows.append(("row sum 4096 x 4094 (x4)", "numpy a.sum(axis=1)",
                 f"{_median_ms(lambda: a.sum(axis=1), REPEAT):.2f}", check(a.sum(axis=1))))
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

    def check(out) -> str:
        got = out.reshape(-1)[:N_OUT]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert out.reshape(-1)[N_OUT:].tolist() == [0.0]
        return f"ok (max err {np.max(np.abs(got - want)):.0e}, padding 0.0)"

    fast = codegen.build(overcomputed)
    rows = []
    for label, fn in [
        ("guarded (polypad)", codegen.build(guarded)),
        ("overcomputed (polypad)", fast),
        ("overcomputed + hoist + reduce_loop_extents", codegen.build(shrunk)),
        ("overcomputed, edited: fastmath=True", _edited(fast, FASTMATH)),
    ]:
        b[:] = 7.0  # the padding must come out 0.0, every output written
        fn(a_packed, f, b)
        ok = check(b)
        rows.append((f"conv1d {N_OUT} outputs (x4)", label,
                     f"{_median_ms(lambda fn=fn: fn(a_packed, f, b), REPEAT):.2f}", ok))
    rows.append((f"conv1d {N_OUT} outputs (x4)", "numpy np.correlate(a, f, 'valid')",
                 f"{_median_ms(lambda: np.correlate(a, f, 'valid'), REPEAT):.2f}",
                 "the reference"))
    return rows


# ---------------------------------------------------------------- proofs

# (example, function or None, condition as printed, whether the walkthrough
# removes it): the conditionals the RFC's walkthroughs remove, or keep.
WALKTHROUGH = [
    ("overcompute_conv1d_sequential", None, "0 <= 4 * io + ii < 14", False),
    ("elementwise_sequential", None, "4 * io + ii < 14", True),
    ("multi_semantics_sequential", None, "4 * io + ii < 14", True),
    ("internal_buffer_sequential", None, "4 * io + ii < 14", True),
    ("explicit_default_step4", "consumer", "4 * io + ii < 14", True),
    ("explicit_default_step4", "producer", "4 * io + ii < 14", False),
    ("implicit_default_step10", None, "ii >= 2", True),
    ("implicit_default_step10", None, "ii < 2", True),  # with B's row index wrapped % 3
    ("implicit_default_step11", None, "io == 2", True),
    ("row_summation_split", None, "4 * j_outer + j_inner < 14", False),
    ("single_func_step1", None, "4 * io + ii < 14", True),
    ("split_module_known_before", "compute_C", "4 * io + ii < 14", True),
    ("split_module_before", "compute_C", "4 * io + ii < 14", False),
    ("split_module_undef_before", "compute_C", "4 * io + ii < 14", False),
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


def _clear_caches() -> None:
    """Forget every per-function cache the deciders keep: the next decision is cold."""
    context_module._PROGRAMS.clear()
    dataflow_module._FLOWS.clear()
    dataflow_module._ABOUT.clear()


def _time_decision(f, stmt) -> tuple[float, float, object]:
    decided = analyses.can_remove_conditional(f, stmt)
    cold = _median_ms(lambda: analyses.can_remove_conditional(f, stmt), PROOF_REPEAT,
                      _clear_caches)
    warm = _median_ms(lambda: analyses.can_remove_conditional(f, stmt), PROOF_REPEAT)
    return cold, warm, decided


def _verdict(decided) -> str:
    name = type(decided).__name__
    return {"Removable": f"removable (keep {getattr(decided, 'keep', '')})"}.get(name, name)


def _runs_like(before: n.PrimFunc, after: n.PrimFunc) -> str:
    """Whether ``after`` leaves every element ``before`` defines as ``before`` does.

    Reference executor, inputs from ``make_inputs`` (they honour the
    ``T.assume`` facts), two seeds.  An element whose final value under
    ``before`` changes with what the written buffers held on entry (padding
    stored ``T.undef()``, which lowering drops) is left out.
    """
    from inputs_support import make_inputs

    slow, fast = codegen.build(before, target="python"), codegen.build(after, target="python")
    written = {id(x.buffer) for x in walk(before.body) if isinstance(x, n.BufferStore)}
    compared = 0
    for seed in (0, 1):
        args = make_inputs(before, np.random.default_rng(seed))
        shifted = [a + 1 if isinstance(a, np.ndarray) and id(p) in written else a
                   for p, a in zip(before.params, args, strict=True)]
        runs = []
        for kernel, inputs in ((slow, args), (slow, shifted), (fast, args)):
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
            kernel(*copies)
            runs.append(copies)
        for want, other, got in zip(*runs, strict=True):
            if not isinstance(want, np.ndarray):
                continue
            defined = want == other
            np.testing.assert_allclose(got[defined], want[defined], rtol=1e-5, atol=1e-5)
            compared += int(defined.sum())
    return f"runs like the guarded form ({compared} elements)"


def _check(f, stmt, decided, removed: bool) -> str:
    from analyses.conditional import Removable
    from polypad.ir.locate import replace

    if isinstance(decided, Removable) is not removed:
        return f"NO: the walkthrough {'removes' if removed else 'keeps'} it"
    if not removed:
        return "kept, as in the walkthrough"
    kept = decided.kept(stmt)  # the branch, or the then branch with its indices wrapped
    return _runs_like(f, replace(f, stmt, kept))


def proof_rows() -> list[tuple]:
    rows = []
    for stem, name, text, removed in WALKTHROUGH:
        f = _load(stem, name)
        stmt = _pick(f, text, stem)
        cold, warm, decided = _time_decision(f, stmt)
        where = f"{stem}" + (f".{name}" if name else "")
        rows.append((where, f"`if {text}`", _verdict(decided), f"{cold:.1f}", f"{warm:.1f}",
                     "yes" if cold <= 20 else "no", _check(f, stmt, decided, removed)))
    return rows


def all_examples_summary() -> list[tuple]:
    """Rows: every conditional of every RFC example, then the removable ones alone."""
    from analyses.conditional import Removable

    colds, removals = [], []
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = pp.parse(path.read_text())
        for f in parsed.funcs if isinstance(parsed, n.IRModule) else [parsed]:
            for stmt in _conditionals(f):
                def once(f=f, stmt=stmt):
                    _clear_caches()
                    try:
                        return analyses.can_remove_conditional(f, stmt)
                    except pp.PolypadError:
                        return None

                cold = _median_ms(once, 3)
                colds.append(cold)
                if isinstance(once(), Removable):
                    removals.append(cold)

    def row(what: str, times: list[float]) -> tuple:
        times = sorted(times)
        return (what, len(times), f"{statistics.median(times):.1f}",
                f"{times[int(0.9 * (len(times) - 1))]:.1f}", f"{times[-1]:.1f}",
                f"{sum(t <= 20 for t in times)} of {len(times)}")

    return [row("every conditional of every RFC example", colds),
            row("the removable ones among them", removals)]


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"numba {numba.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load {load:.1f}; kernels: medians of {REPEAT} calls after a warm-up call, "
          f"decisions: medians of {PROOF_REPEAT}\n")
    _table(("kernel", "variant", "ms", "check"), row_sum_rows() + conv_rows())
    # Warm up z3/isl once so that the first row does not pay for imports.
    warm_up = _load("row_summation_split", None)
    analyses.can_remove_conditional(warm_up, _conditionals(warm_up)[0])
    _table(("example", "conditional", "verdict", "cold ms", "warm ms", "<= 20 ms", "check"),
           proof_rows())
    _table(("conditionals", "count", "median cold ms", "p90 ms", "max ms", "<= 20 ms"),
           all_examples_summary())


if __name__ == "__main__":
    main()
