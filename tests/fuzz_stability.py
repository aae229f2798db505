"""Whether a case's answers depend on the order they are asked in, or on the thread.

For ``benchmarks/fuzz.py --shuffle`` and ``--threads N``: the deciders' questions
about one case -- ``is_no_op`` of the statements the no-op check picked,
``can_remove_conditional`` of the ifs it picked and ``prove`` of each probe, each in
both float modes -- are asked one after another in order, then again in a shuffled
order, and from ``N`` threads at once.  Every answer (its class and its evidence text)
must be the first one.  An answer during which a time limit was reached (the budget,
or a Z3 timeout: :func:`polypad.budget.counting_time_limits`) is left out of the
comparison: it may change with the load of the machine.

A difference is a finding of kind ``unstable``.

>>> check_stability(case, report, no_op_picks, if_picks, random.Random(1), threads=4)
Stability(compared=56, left_out=0, differ=0)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fuzz_support import Case, Finding, Report, _first_line, probes, statements

from polypad import budget
from polypad.ir import nodes as n

Question = tuple[str, Callable[[], object]]


def case_questions(case: Case, no_op_picks, if_picks) -> list[Question]:
    """The deciders' questions about ``case``, named, in program order."""
    from analyses import can_remove_conditional, context_at, is_no_op, prove

    f = case.func
    out: list[Question] = []
    candidates = statements(f)
    ifs = [s for s in candidates if isinstance(s, n.IfThenElse)]
    for strict in (False, True):
        mode = ", strict_ieee=True" if strict else ""
        for k in sorted({k % len(candidates) for k in no_op_picks} if candidates else ()):
            s = candidates[k]
            out.append((f"is_no_op({_first_line(s)}{mode})",
                        lambda s=s, m=strict: is_no_op(f, s, strict_ieee=m)))
        for k in sorted({k % len(ifs) for k in if_picks} if ifs else ()):
            s = ifs[k]
            out.append((f"can_remove_conditional({_first_line(s)}{mode})",
                        lambda s=s, m=strict: can_remove_conditional(f, s, strict_ieee=m)))
        for p in probes(f):
            out.append((f"prove({_first_line(p)}{mode})",
                        lambda p=p, m=strict: prove(p.value.condition, context_at(f, p),
                                                    strict_ieee=m)))
    return out


def _answer(ask: Callable[[], object]) -> tuple[str, str] | None:
    """``(class, text)`` of the decision, or None when a time limit shaped it."""
    with budget.counting_time_limits() as limits:
        try:
            decided = ask()
        except Exception as err:  # a refusal is an answer too, and must be as stable
            decided = err
    if limits[0] or getattr(decided, "timed_out", False):
        return None
    return (type(decided).__name__, str(decided))


@dataclass
class Stability:
    """How many answers were compared with the first, how many were left out (a time
    limit was reached), and how many differed."""

    compared: int = 0
    left_out: int = 0
    differ: int = 0


def check_stability(case: Case, report: Report, no_op_picks, if_picks,
                    rng: random.Random | None, threads: int = 0) -> Stability:
    """Ask ``case``'s questions in order, then (with ``rng``) shuffled, then (with
    ``threads``) from that many threads at once; note every answer that differs from
    the first."""
    questions = case_questions(case, no_op_picks, if_picks)
    first = [_answer(ask) for _, ask in questions]
    counts = Stability()

    def compare(got: list, how: str) -> None:
        for (what, _), want, answer in zip(questions, first, got, strict=True):
            if want is None or answer is None:
                counts.left_out += 1
                continue
            counts.compared += 1
            if want != answer:
                counts.differ += 1
                report.findings.append(_unstable(what, how, want, answer))

    if rng is not None:
        order = list(range(len(questions)))
        rng.shuffle(order)
        again = [None] * len(questions)
        for k in order:
            again[k] = _answer(questions[k][1])
        compare(again, "asked in a shuffled order")
    if threads:
        with ThreadPoolExecutor(threads) as pool:
            compare(list(pool.map(lambda q: _answer(q[1]), questions)),
                    f"asked from {threads} threads")
    return counts


def _unstable(what: str, how: str, want, got) -> Finding:
    return Finding("unstable", what, f"{how}: {want[0]}: {want[1][:300]}\n"
                                     f"    became {got[0]}: {got[1][:300]}")
