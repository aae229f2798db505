"""How much of the TVMScript that TVM prints polypad reads: the measure of issue 22.

Two corpora:

- TVM 0.27's own printing (``tests/tvm_corpus.py``, made with the installed
  TVM): TE/TOPI operators, the same after schedules, after the CPU lowering
  passes, and after ``MakePackedAPI``;
- 60 functions from TVM's own test suite in the older ``tir`` spelling
  (``tests/examples/tvm_legacy/``, each file naming its origin).

For each family the table gives how many functions ``polypad.parse`` reads
as printed, and for the rest the construct the refusal names, with its line
and column.

Run: ``python benchmarks/bench_tvm_corpus.py``; from another script,
:func:`results` returns ``(corpus, family, name, error or None)`` rows.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import polypad as pp  # noqa: E402
from polypad.errors import PolypadError  # noqa: E402

LEGACY = ROOT / "tests" / "examples" / "tvm_legacy"


def legacy_corpus() -> list[tuple[str, str, str]]:
    """``(name, family, text)`` for the older functions; the family is the test area."""
    out = []
    for path in sorted(LEGACY.glob("*.py")):
        text = path.read_text()
        origin = text.split("tests/python/", 1)[1].split("/", 1)[0]
        out.append((path.stem, origin, text))
    return out


def _attempt(name: str, text: str) -> str | None:
    try:
        pp.parse(text, filename=name)
    except PolypadError as err:
        return str(err).splitlines()[0]
    return None


def results() -> list[tuple[str, str, str, str | None]]:
    """One row per function: corpus, family, name, and the first line of the refusal."""
    rows = []
    try:
        from tvm_corpus import corpus
        tvm_rows = corpus()
    except ImportError:
        tvm_rows = ()
        print("TVM is not installed: the TVM 0.27 corpus is skipped", file=sys.stderr)
    for name, family, text in tvm_rows:
        rows.append(("tvm-0.27", family, name, _attempt(name, text)))
    for name, family, text in legacy_corpus():
        rows.append(("tvm-legacy", family, name, _attempt(name, text)))
    return rows


def table(rows) -> str:
    """The per-family counts, then each refusal."""
    counts: dict = collections.defaultdict(lambda: [0, 0])
    for corpus, family, _, error in rows:
        counts[(corpus, family)][0] += error is None
        counts[(corpus, family)][1] += 1
    lines = [f"{'corpus':<12} {'family':<16} parsed / total  refused by name", "-" * 60]
    totals: dict = collections.defaultdict(lambda: [0, 0])
    for (corpus, family), (ok, n) in counts.items():
        lines.append(f"{corpus:<12} {family:<16} {ok:>6} / {n:<5} {n - ok:>9}")
        totals[corpus][0] += ok
        totals[corpus][1] += n
    lines.append("-" * 60)
    for corpus, (ok, n) in totals.items():
        lines.append(f"{corpus:<12} {'all':<16} {ok:>6} / {n:<5} {n - ok:>9}")
    refused = [(c, name, e) for c, _, name, e in rows if e is not None]
    if refused:
        lines += ["", "refused (by name, file:line:column):"]
        lines += [f"  {c:<12} {e}" for c, name, e in refused]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(results()))
