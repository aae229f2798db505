"""Answers on TVM's kernels: issue 22, section 6.

Every ``if`` of every function TVM 0.27 prints in the corpus
(``tests/tvm_corpus.py``, made with the installed TVM) is asked
``analyses.can_remove_conditional`` with a budget per question; the table
gives, per kernel family, how many conditionals there are, how many are
``Proved``, ``Refuted`` and ``Unknown``, and the seconds they took, then
each ``Unknown`` with its reason.

Measured on the shared 2-core machine, budget 10 s per question (``main`` at
dcf9b31 before this work, then this branch):

    family      conditionals  Proved  Refuted  Unknown  seconds
    before:
    te                    22       0       11       11      3.1
    schedule              17       0       12        5      1.9
    lowered               14       0        0       14      0.0
    packed                 6       0        0        6      0.0
    all                   59       0       23       36      5.0
    after:
    te                    22       0       22        0      1.5
    schedule              17       0       17        0      1.0
    lowered               14       0       13        1      0.9
    packed                 6       0        1        5      0.0
    all                   59       0       53        6      3.4

Run: ``python benchmarks/bench_tvm_answers.py [budget]``.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import analyses  # noqa: E402
import polypad as pp  # noqa: E402
from polypad.ir import nodes as n  # noqa: E402
from polypad.ir.visitor import walk  # noqa: E402


def results(budget: float = 10.0) -> list[tuple[str, str, object, float]]:
    """One row per conditional: kernel, family, the decision, seconds."""
    from tvm_corpus import corpus

    rows = []
    for name, family, text in (entry[:3] for entry in corpus()):
        made = pp.parse(text)
        for g in (made,) if isinstance(made, n.PrimFunc) else made.funcs:
            for stmt in (x for x in walk(g.body) if isinstance(x, n.IfThenElse)):
                start = time.perf_counter()
                decided = analyses.can_remove_conditional(g, stmt, budget=budget)
                rows.append((name, family, decided, time.perf_counter() - start))
    return rows


def table(rows) -> str:
    """Counts per family, then each Unknown with its reason."""
    counts: dict = collections.defaultdict(lambda: [0, 0, 0, 0, 0.0])
    kinds = (analyses.Proved, analyses.Refuted, analyses.Unknown)
    for _, family, decided, seconds in rows:
        row = counts[family]
        row[0] += 1
        row[1 + next(k for k, kind in enumerate(kinds) if isinstance(decided, kind))] += 1
        row[4] += seconds
    head = (f"{'family':<10} {'conditionals':>12} {'Proved':>7} {'Refuted':>8} "
            f"{'Unknown':>8} {'seconds':>8}")
    lines = [head, "-" * len(head)]
    total = [0, 0, 0, 0, 0.0]
    for family, row in counts.items():
        lines.append(f"{family:<10} {row[0]:>12} {row[1]:>7} {row[2]:>8} {row[3]:>8} "
                     f"{row[4]:>8.1f}")
        total = [a + b for a, b in zip(total, row)]
    lines.append("-" * len(head))
    lines.append(f"{'all':<10} {total[0]:>12} {total[1]:>7} {total[2]:>8} {total[3]:>8} "
                 f"{total[4]:>8.1f}")
    unknown = [(name, d.reason) for name, _, d, _ in rows if isinstance(d, analyses.Unknown)]
    if unknown:
        lines += ["", "Unknown:"] + [f"  {name}: {reason}" for name, reason in unknown]
    return "\n".join(lines)


if __name__ == "__main__":
    try:
        import tvm  # noqa: F401
    except ImportError:
        sys.exit("TVM is not installed: the corpus needs it (pip install 'polypad[tvm]')")
    print(table(results(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)))
