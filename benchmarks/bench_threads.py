"""Do two threads asking RFC questions make progress together?

Four of the slowest RFC 0077 questions (``can_remove_conditional`` with
``strict_ieee=True``, where Z3 bit-blasts float32 arithmetic) are asked

- serially, by one thread;
- by 2 threads, two questions each;
- by 4 threads, one question each;

each on freshly parsed functions (no cache shared between runs), best of
``--repeat`` runs.  Z3 releases the GIL while it works, so its part of two
questions can overlap; polypad's own Python and isl (which holds the GIL
through each call) cannot.  The table also gives the process's CPU time per
second of wall time (above 1 only while threads run at the same moment, which
a busy machine limits: its load average is printed), the time spent in Z3's
``check`` (serially, the most threads could hide) and how long two or more
checks were in progress at once (zero if Z3 held the GIL), and checks that
every configuration gives the serial answers.

Run: ``python benchmarks/bench_threads.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import z3  # noqa: E402
from rfc_questions import ask, conditionals, functions  # noqa: E402

#: (file, function, index of the if, strict_ieee): slow strict questions, several answers.
QUESTIONS = [
    ("implicit_default_step8", "func", 1, True),
    ("implicit_default_step9", "func", 2, True),
    ("implicit_default_step2", "func", 0, True),
    ("implicit_default_step7", "func", 1, True),
]


def fresh_questions():
    out = []
    for key in QUESTIONS:
        func = next(f for f in functions(key[0]) if f.name == key[1])
        out.append((key, func, conditionals(func)[key[2]]))
    return out


class _Z3Clock:
    """Wall time spent inside ``z3.Solver.check``, summed over threads, and the
    intervals, to tell how long two checks were in progress at once."""

    def __init__(self) -> None:
        self.seconds, self._lock, self._check = 0.0, threading.Lock(), z3.Solver.check
        self.intervals: list[tuple[float, float]] = []

    def __enter__(self):
        clock, check = self, self._check

        def timed(solver, *args):
            start = time.perf_counter()
            try:
                return check(solver, *args)
            finally:
                end = time.perf_counter()
                with clock._lock:
                    clock.seconds += end - start
                    clock.intervals.append((start, end))

        z3.Solver.check = timed
        return self

    def __exit__(self, *exc):
        z3.Solver.check = self._check

    def together(self) -> float:
        """Seconds during which two or more checks were in progress: possible only
        because Z3 releases the GIL (a check holding it would keep the others out)."""
        events = sorted([(a, 1) for a, _ in self.intervals] + [(b, -1) for _, b in self.intervals])
        out, running, since = 0.0, 0, 0.0
        for at, step in events:
            if running >= 2:
                out += at - since
            running, since = running + step, at
        return out


def run(threads: int) -> tuple[float, float, dict, float, float]:
    """Wall and CPU seconds (all threads) to ask the questions with ``threads``
    threads, the answers, the seconds inside Z3's check, and those with two checks
    in progress at once."""
    qs = fresh_questions()
    with _Z3Clock() as clock:
        start, cpu = time.perf_counter(), time.process_time()
        if threads == 1:
            answers = dict(map(ask, qs))
        else:
            with ThreadPoolExecutor(threads) as pool:
                answers = dict(pool.map(ask, qs))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return wall, cpu, answers, clock.seconds, clock.together()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (best is shown)")
    args = parser.parse_args()
    run(1)  # imports and first-use costs out of the way
    rows, serial_answers = [], None
    for threads in (1, 2, 4):
        best = min((run(threads) for _ in range(args.repeat)), key=lambda r: r[0])
        wall, cpu, answers, in_z3, together = best
        serial_answers = serial_answers or answers
        rows.append((threads, wall, cpu, in_z3, together, answers == serial_answers))
    serial = rows[0][1]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{len(QUESTIONS)} RFC questions (strict_ieee), best of {args.repeat}; "
          f"{os.cpu_count()} CPUs, load average {load:.1f}\n")
    print("| threads | wall s | speedup | CPU s / wall s | Z3 check s (all threads) "
          "| s with 2+ checks at once | same answers |")
    print("|---|---|---|---|---|---|---|")
    for threads, wall, cpu, in_z3, together, same in rows:
        print(f"| {threads} | {wall:.2f} | {serial / wall:.2f}x | {cpu / wall:.2f} "
              f"| {in_z3:.2f} ({in_z3 / serial:.0%} of serial) | {together:.2f} "
              f"| {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
