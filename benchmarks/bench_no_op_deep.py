"""``remove_no_op`` on 64-deep nests: CPU seconds, and the answers, of two revisions.

Each case is a program of ``tests/deep_support.py`` inside 62 further loops
(the nest ``tests/test_deep_everywhere.py`` passes), ``update_nest`` (one
update under 64 loops) or ``bench_scale``'s 64-deep nest.  For each, a
worker process times ``remove_no_op`` (CPU seconds of the process, so other
work on a shared machine counts less than in wall time) and records what it
returned and every ``is_no_op`` answer the pass got, in full.

With ``--against REV`` the same workers also run on that revision (exported
with ``git archive`` into a temporary directory), one case after the other
on both trees, and the table compares the two: the seconds, and whether
every answer is identical.  Without it only this tree is timed.

Run: ``python benchmarks/bench_no_op_deep.py [--against REV] [--repeat N] [CASE ...]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = ["undef", "main", "conditional", "padded", "overcompute", "update_nest", "scale"]


def _function(case: str):
    import polypad as pp
    if case == "update_nest":
        from deep_support import update_nest
        return update_nest()
    if case == "scale":
        from bench_scale import nest_text
        return pp.parse(nest_text(64))
    from deep_support import parsed
    return parsed(case, "nest")


def worker(root: Path, case: str, repeat: int) -> dict:
    """One case in this process (whose imports come from ``root``): the best CPU time
    of ``repeat`` runs of ``remove_no_op``, and the answers of the first."""
    sys.path[:0] = [str(root), str(root / "tests"), str(root / "benchmarks")]
    import analyses.no_op as no_op
    import polypad as pp
    from polypad import budget
    from polypad.ir.deep import run_deep
    from polypad.ir.visitor import walk

    budget.set_default_budget(600.0)  # answers, not a race against the default 10 s
    answers: list[str] = []
    asked = no_op.is_no_op

    def recorded(f, stmt, **kwargs):
        decision = asked(f, stmt, **kwargs)
        where = next(k for k, x in enumerate(walk(f.body)) if x is stmt)
        answers.append(f"{_digest(pp.script(f))}:{where}: {type(decision).__name__}: "
                       f"{decision}: {getattr(decision, 'counterexample', None)!r}")
        return decision

    no_op.is_no_op = recorded
    text = pp.script(_function(case))
    times, result = [], None
    for attempt in range(repeat):
        f = pp.parse(text)  # a new function each time: no model or flow of the last run
        before = len(answers)
        start = time.process_time()
        got = run_deep(pp.transform.remove_no_op, f)
        times.append(time.process_time() - start)
        if attempt:
            del answers[before:]
        result = result or pp.script(got)
    return {"seconds": min(times), "result": result, "answers": answers}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _run(root: Path, case: str, repeat: int) -> dict:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", str(root), case,
         "--repeat", str(repeat)],
        capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout.splitlines()[-1])


def _export(rev: str, into: Path) -> Path:
    archive = into / "tree.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "archive", rev], cwd=ROOT, stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="a git revision to compare with")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--worker", nargs=2, metavar=("ROOT", "CASE"), help=argparse.SUPPRESS)
    parser.add_argument("cases", nargs="*", default=CASES)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(Path(args.worker[0]), args.worker[1], args.repeat)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        old_root = _export(args.against, Path(tmp)) if args.against else None
        head = f"{'case':<12} {'this tree s':>11}"
        if old_root:
            head += f" {args.against + ' s':>14} {'speedup':>7} {'answers':>7} {'same':>5}"
        print(head)
        for case in args.cases:
            new = _run(ROOT, case, args.repeat)
            line = f"{case:<12} {new['seconds']:>11.2f}"
            if old_root:
                old = _run(old_root, case, args.repeat)
                same = old["result"] == new["result"] and old["answers"] == new["answers"]
                # The new pass may ask fewer questions (none twice about one function):
                # every answer it got is one the old pass got.
                subset = old["result"] == new["result"] and set(new["answers"]) <= set(
                    old["answers"])
                verdict = "yes" if same else "subset" if subset else "NO"
                line += (f" {old['seconds']:>14.2f} {old['seconds'] / new['seconds']:>6.1f}x"
                         f" {len(new['answers']):>3}/{len(old['answers']):<3} {verdict:>5}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
