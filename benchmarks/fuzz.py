"""Fuzz: every pass, schedule primitive and "Proved" on random loop nests, checked by
execution.

Each case ``K`` of seed ``S`` is generated from ``random.Random`` alone (no
hypothesis engine, no shrinking).  With ``--shapes classic`` three in four
are loop nests of ``tests/fuzz_programs.py`` with every option on (int32 and
float32 buffers, integer arithmetic that wraps, assumptions on ``n`` and on
buffer elements, prover probes), one in four are the structural deciders'
programs (adjacent loops, a local buffer).  ``--shapes issue21`` generates
the shapes of ``tests/fuzz_shapes.py`` instead (facts inside loops beside
loops that update what they read, ``n`` near the ends of int32, deep
``if``/``else`` with lets and local buffers, data-dependent indices).
``--shapes blocks`` generates TVM-style block nests (``tests/fuzz_blocks.py``:
stages of blocks with spatial and reduce axes bound to loop expressions,
``T.reads``/``T.writes``, ``T.init()``, nested blocks), on which the passes,
the loop primitives and the block primitives of
``tests/fuzz_block_primitives.py`` (``compute_at``, caches, ``rfactor``,
``decompose_reduction``, chains of them) run, each result checked in both the
reference executor and Numba, and ``check_block_bindings`` of the program
must not refute what the parser accepted.  ``--shapes aliases`` gives the
structural programs views over their buffers (``A_1``, a 2-D ``A_2``, ``A_3``
at an offset: ``fuzz_programs.view_access``) that their accesses go through.
``--shapes views`` generates the nests of ``tests/fuzz_views.py``: views of
``A`` at offsets (one declared over another's data) written and read
through, ``int64`` loop counters beside ``int32`` ones, ``T.if_then_else``
in indices, reductions into a view, ``T.assume`` inside the loops beside
the stores.  ``--shapes guards`` checks the run-time bounds checks and the
asserts instead of the passes (``tests/fuzz_guards.py`` writes functions
whose indices the bounds analysis may not decide -- ``T.min``, ``//`` and
``%`` by a parameter, gathers, counters that wrap, a view at an offset, 1-D
or 2-D, whose own shape bounds it -- with asserts and ``T.assume`` at random places and stores under
data-dependent ``if``; ``tests/fuzz_guards_check.py`` runs each on random
inputs in the reference executor, Numba serial, with ``boundscheck=True``
and with its loops parallel, and the cuda target on Numba's simulator, and
requires the same buffers or the same error, no write to a guard region
around Numba's arrays, and no access proved inside found outside).  The
default, ``mixed``, gives every case ``K`` with ``K % 3 == 2`` to the new
shapes and the others to the classic generator, which makes them exactly as
before (an older finding at such a ``K`` is reproduced with ``--shapes
classic``).  For each case, ``tests/fuzz_support.py`` runs every pass (each
verifying its result: ``fuzz_support`` sets ``POLYPAD_VERIFY_PASSES``) and
asks ``is_no_op`` of three statements, ``can_remove_conditional`` of two ifs
and ``prove`` of each probe, ``tests/fuzz_primitives.py`` applies every
schedule primitive, and both compare executions on inputs that satisfy the
assumptions.

With ``--shuffle`` the deciders' questions about each case (both float
modes) are asked again in a shuffled order, and with ``--threads N`` from
``N`` threads at once; every answer must be the one asked first in order
(``tests/fuzz_stability.py``).

Counted: *unsound* (results differ after a pass, a primitive or a
"Proved"), *crashes* (an exception that is no legal refusal), answers that
differ by order or thread, questions that hit polypad's default time budget,
and the slowest case.  Every finding prints with the flags that reproduce it
and the program text.

The table also counts the deciders' answers by class (Proved, Refuted,
Unknown).  ``--seconds S`` starts no case after ``S`` seconds and prints the
table of the cases run.  (Ctrl-C is no way to stop it: Z3 takes the signal to
cancel the query running, which then answers Unknown.)

Run: ``python benchmarks/fuzz.py [--count 10000] [--seed 0] [--case K]
[--shapes mixed|classic|issue21|blocks|aliases|views|guards] [--shuffle] [--threads N]
[--seconds S]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_block_primitives import check_bindings, check_block_primitives  # noqa: E402
from fuzz_blocks import block_program  # noqa: E402
from fuzz_guards_check import GuardsStats, check_guards_case  # noqa: E402
from fuzz_primitives import check_primitives  # noqa: E402
from fuzz_programs import NestOptions, Seeded, nest_program, structural_program  # noqa: E402
from fuzz_shapes import shape_program  # noqa: E402
from fuzz_stability import Stability, check_stability  # noqa: E402
from fuzz_support import (  # noqa: E402
    Report,
    check_conditionals,
    check_no_ops,
    check_passes,
    check_probes,
    make_case,
)
from fuzz_views import views_program  # noqa: E402

from polypad import budget  # noqa: E402


@dataclass
class Outcome:
    """One case: its program, what the checks found, and how long they took."""

    index: int
    text: str
    report: Report | None  # None: discarded (no input set runs, or not buildable)
    seconds: float
    invalid: str | None = None  # the generator wrote a program polypad rejects
    stability: Stability | None = None  # --shuffle / --threads: answers compared again
    guards: GuardsStats | None = None  # --shapes guards: what ran on each target


SHAPES = ("mixed", "classic", "issue21", "blocks", "aliases", "views", "guards")


def generate(seed: int, index: int, shapes: str = "mixed"):
    """The program text of case ``index``, its chooser (for the checks' own choices), the
    values of ``n`` brute force should try, and those the inputs draw ``n`` from
    (``None``: ``make_inputs``' own)."""
    choose = Seeded(seed * 1_000_003 + index)
    if shapes == "blocks":
        return block_program(choose).text, choose, range(0, 17), None
    if shapes == "aliases":  # the structural programs with views over their buffers
        text = structural_program(choose, same_extent=choose.boolean(), local=choose.boolean(),
                                  param="n" if choose.boolean() else None, aliases=True)
        return text, choose, range(0, 17), None
    if shapes == "views":  # views at offsets, int64 counters, selects in indices
        program = views_program(choose)
        return program.text, choose, program.n_values, program.n_values
    if shapes == "issue21" or (shapes == "mixed" and index % 3 == 2):
        shape = shape_program(choose)
        return shape.text, choose, shape.n_values, shape.n_values
    if choose.integer(0, 3) == 0:
        text = structural_program(choose, same_extent=choose.boolean(), local=choose.boolean(),
                                  param="n" if choose.boolean() else None)
        return text, choose, range(0, 17), None
    nest = nest_program(choose, NestOptions.fuzz())
    return nest.text, choose, range(*nest.n_range), None


def run_case(seed: int, index: int, shapes: str = "mixed", *, shuffle: bool = False,
             threads: int = 0) -> Outcome:
    if shapes == "guards":  # its own check: every target on the same inputs
        start = time.perf_counter()
        program, report, stats = check_guards_case(seed, index)
        return Outcome(index, program.text, report, time.perf_counter() - start,
                       guards=stats)
    text, choose, n_values, scalars = generate(seed, index, shapes)
    start = time.perf_counter()
    try:
        case = make_case(text, seed * 1_000_003 + index, n_values, scalars=scalars)
    except Exception as err:
        return Outcome(index, text, None, time.perf_counter() - start,
                       invalid=f"{type(err).__name__}: {err}")
    if case is None:
        return Outcome(index, text, None, time.perf_counter() - start)
    report = Report()
    check_passes(case, report)
    check_primitives(case, report, choose)
    if shapes == "blocks":
        check_block_primitives(case, report, choose)
        check_bindings(case, report)
        return Outcome(index, text, report, time.perf_counter() - start)
    no_op_picks = [choose.integer(0, 99) for _ in range(3)]
    check_no_ops(case, report, no_op_picks)
    if_picks = [choose.integer(0, 99) for _ in range(2)]
    check_conditionals(case, report, if_picks)
    check_probes(case, report)
    stability = None
    if shuffle or threads:
        order = random.Random(seed * 1_000_003 + index) if shuffle else None
        stability = check_stability(case, report, no_op_picks, if_picks, order, threads)
    return Outcome(index, text, report, time.perf_counter() - start, stability=stability)


def has_findings(outcome: Outcome) -> bool:
    """An invalid program, or an unsound or crash finding that is no known bug."""
    return bool(outcome.invalid or (outcome.report and outcome.report.new_findings()))


def show_finding(seed: int, outcome: Outcome, shapes: str = "mixed") -> None:
    flags = "" if shapes == "mixed" else f" --shapes {shapes}"
    print(f"\n=== case {outcome.index}: python benchmarks/fuzz.py --seed {seed} "
          f"--case {outcome.index}{flags}")
    if outcome.invalid:
        print(f"  invalid program: {outcome.invalid}")
    for f in outcome.report.new_findings() if outcome.report else ():
        print(f"  {f.kind}: {f.what}\n    {f.detail}")
    print(outcome.text, flush=True)


def summary(seed: int, outcomes: list[Outcome], elapsed: float) -> None:
    checked = [o for o in outcomes if o.report is not None]
    reports = [o.report for o in checked]
    findings = [f for r in reports for f in r.new_findings()]
    known = [f.known for r in reports for f in r.findings if f.known]
    hit_cases = [o for o in checked if o.report.budget_hits]
    slowest = max(outcomes, key=lambda o: o.seconds)
    rate = len(outcomes) / elapsed if elapsed else 0.0
    rows = [
        ("seed", seed),
        ("cases", len(outcomes)),
        ("  checked", len(checked)),
        ("  discarded", sum(o.report is None and not o.invalid for o in outcomes)),
        ("  invalid programs", sum(bool(o.invalid) for o in outcomes)),
        ("questions", sum(r.questions for r in reports)),
        ("  proved (checked)", sum(r.proved for r in reports)),
        ("  refused", sum(r.refused for r in reports)),
        *((f"  decided {kind}", sum(r.answers.get(kind, 0) for r in reports))
          for kind in ("Proved", "Refuted", "Unknown")),
        ("unsound", sum(f.kind == "unsound" for f in findings)),
        ("crashes", sum(f.kind == "crash" for f in findings)),
        ("answers that differ by order or thread", sum(f.kind == "unstable" for f in findings)),
        ("  compared again", sum(o.stability.compared for o in checked if o.stability)),
        ("  left out (time limit)", sum(o.stability.left_out for o in checked if o.stability)),
        ("cases with findings", sum(bool(r.new_findings()) for r in reports)),
        ("known bugs met", f"{len(known)} times in "
                           f"{sum(any(f.known for f in r.findings) for r in reports)} cases"),
        (f"budget hits ({budget.default_budget():g} s)",
         f"{sum(len(r.budget_hits) for r in reports)} questions in {len(hit_cases)} cases"),
        ("over 1.5 x budget", f"{sum(len(r.overruns) for r in reports)} questions"),
        ("slowest case", f"{slowest.seconds:.1f} s: case {slowest.index}" + (
            f" ({slowest.report.slowest[1]} {slowest.report.slowest[0]:.1f} s)"
            if slowest.report else "")),
        ("time", f"{elapsed:.0f} s, {rate:.2f} cases/s; 10,000 cases ~ "
                 f"{10_000 / rate / 3600:.1f} h" if rate else f"{elapsed:.0f} s"),
    ]
    rows += guards_rows([o.guards for o in checked if o.guards is not None])
    width = max(len(k) for k, _ in rows)
    print("\n" + "\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    for name in sorted(set(known)):
        print(f"known bug ({known.count(name)}x): {name}")
    for o in hit_cases:
        print(f"budget hit: case {o.index}: {', '.join(o.report.budget_hits)}")
    for o in checked:
        for what, seconds in o.report.overruns:
            print(f"over budget: case {o.index}: {what} took {seconds:.1f} s")


def guards_rows(stats: list[GuardsStats]) -> list[tuple[str, object]]:
    """The table's rows for ``--shapes guards``: inputs, reference outcomes, runs per
    target, refusals by cuda, messages that differ legitimately."""
    if not stats:
        return []

    def total(table: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in stats:
            for key, count in getattr(s, table).items():
                out[key] = out.get(key, 0) + count
        return out
    refused = total("refused")
    return [
        ("guards: inputs compared", sum(s.compared for s in stats)),
        ("  left out (T.assume false)", sum(s.assumption_false for s in stats)),
        *((f"  reference {k}", v) for k, v in sorted(total("outcomes").items())),
        *((f"  runs of {k}", v) for k, v in sorted(total("runs").items())),
        ("  builds cuda refused", f"{sum(refused.values())} ("
         + ", ".join(sorted({k.split(": ")[1] for k in refused})) + ")"),
        ("  reference runs enumerated (proved)", sum(s.enumerated for s in stats)),
        ("  parallel: another element", sum(s.parallel_messages for s in stats)),
        ("  store index vs value order", sum(s.store_or_value for s in stats)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--case", type=int, help="run only case K and print its program")
    parser.add_argument("--progress", type=int, default=50, help="a status line every N cases")
    parser.add_argument("--shapes", choices=SHAPES, default="mixed",
                        help="which generators make the cases (see the module docstring)")
    parser.add_argument("--shuffle", action="store_true",
                        help="ask each case's questions again in a shuffled order and compare")
    parser.add_argument("--threads", type=int, default=0, metavar="N",
                        help="ask each case's questions from N threads at once and compare")
    parser.add_argument("--seconds", type=float, default=None,
                        help="start no case after this many seconds; the "
                             "table counts the cases run")
    args = parser.parse_args(argv)
    indices = [args.case] if args.case is not None else range(args.first,
                                                              args.first + args.count)
    outcomes: list[Outcome] = []
    start = time.perf_counter()
    for done, index in enumerate(indices, 1):
        if args.seconds is not None and time.perf_counter() - start > args.seconds:
            print(f"[stopped: {args.seconds:g} s passed, before case {index}]")
            break
        try:
            outcome = run_case(args.seed, index, args.shapes, shuffle=args.shuffle,
                               threads=args.threads)
        except KeyboardInterrupt:
            print(f"[stopped: interrupted in case {index}, which is not counted]")
            break
        outcomes.append(outcome)
        if args.case is not None:
            print(outcome.text)
            print("\n".join(outcome.report.log if outcome.report else ["discarded"]))
        if has_findings(outcome):
            show_finding(args.seed, outcome, args.shapes)
        if done % args.progress == 0:
            bad = sum(has_findings(o) for o in outcomes)
            print(f"[{done} cases, {time.perf_counter() - start:.0f} s, {bad} with findings]",
                  flush=True)
    summary(args.seed, outcomes, time.perf_counter() - start)
    return 1 if any(has_findings(o) for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
