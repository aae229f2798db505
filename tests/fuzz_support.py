"""Differential checks of every pass, primitive and "Proved" on one random program.

Shared by ``tests/test_fuzz_properties.py`` (hypothesis) and
``benchmarks/fuzz.py`` (many seeded cases).  A :class:`Case` is a parsed
function with input sets that satisfy its ``T.assume`` facts
(:func:`make_inputs`) and its results on them in the reference executor.

* :func:`check_passes`: every pass of ``polypad.transform`` gives verified IR
  with the same results (and with ``POLYPAD_VERIFY_PASSES``, set on import,
  so do the passes the primitives and deciders run inside).
* ``fuzz_primitives.check_primitives``: schedule primitives applied to the
  nest give the same results; raising a :class:`PolypadError` is a legal
  refusal.
* :func:`check_no_ops` / :func:`check_conditionals`: where ``is_no_op`` says
  Proved, the function without the statement gives the same results; where
  ``can_remove_conditional`` does, the function with the kept branch does.
* :func:`check_probes`: where ``prove`` says Proved of a probe's question,
  brute force (``prover_brute_force.violations``) finds no failing instance.

Each check adds to a :class:`Report`: *unsound* findings (results differ
after a pass or a "Proved"; the rewritten function fails an assumption or
an access), *crashes* (an exception that is no refusal, or a refusal that is
a bug: ill-formed IR), the questions asked, and which hit the time budget.
Float buffers hold small integers, so float32 arithmetic on them is exact.
"""

from __future__ import annotations

import os
import re
import sys
import time
import traceback
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from inputs_support import make_inputs

import codegen
from polypad import budget
from polypad.errors import (
    DTypeError,
    OutOfBoundsError,
    PolypadError,
    VerifyError,
)
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.show import show
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.script import parse

# Every pass verifies its result, those run inside primitives and deciders too.
os.environ.setdefault("POLYPAD_VERIFY_PASSES", "1")

PASSES = ("simplify", "remove_no_op", "hoist_expression", "reduce_loop_extents",
          "remove_branching_through_overcompute", "remove_overcompute_through_branching")
INPUT_SETS = 3
# PolypadErrors that no refusal should be: a rewrite produced ill-typed or ill-formed IR.
NOT_REFUSALS = (VerifyError, DTypeError)


@dataclass
class Finding:
    kind: str  # "unsound" or "crash"
    what: str  # the pass, primitive or question
    detail: str

    @property
    def known(self) -> str | None:
        """The known bug this finding is an instance of, if any (see :data:`KNOWN_BUGS`)."""
        return next((name for name, matches in KNOWN_BUGS.items() if matches(self)), None)


def _unconditional_pad_assumption(f: Finding) -> bool:
    # The assumption transform_layout adds for a padding that does not exist lost its
    # padding condition: `T.assume(A[io, ii] == 0.0)`, false on most inputs.
    return f.what.startswith("transform_layout(") and re.search(
        r"AssumptionError: T\.assume\(\w+\[[\w, ]*\] == [-\w.]+\) is false", f.detail) is not None


#: Bugs found by this fuzzing and not fixed yet, each with a test marked xfail in
#: tests/test_fuzz_properties.py; the checks report their instances apart.
KNOWN_BUGS = {
    "transform_layout with a pad_value and no padding assumes every element is the "
    "pad value": _unconditional_pad_assumption,
}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    questions: int = 0
    proved: int = 0
    refused: int = 0
    answers: dict[str, int] = field(default_factory=dict)  # decisions by class: Proved...
    log: list[str] = field(default_factory=list)  # every answer and refusal, for --case
    budget_hits: list[str] = field(default_factory=list)
    overruns: list[tuple[str, float]] = field(default_factory=list)  # > 1.5 x the budget
    slowest: tuple[float, str] = (0.0, "")

    def unsound(self, what: str, detail: str) -> None:
        self.findings.append(Finding("unsound", what, detail))

    def refusal(self, what: str, err: BaseException) -> None:
        self.refused += 1
        self.log.append(f"refused: {what}: {_describe(err)}")

    def crash(self, what: str, err: BaseException) -> None:
        self.findings.append(Finding("crash", what, _describe(err)))

    def new_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.known is None]

    def assert_clean(self, text: str) -> None:
        """No finding but those of known bugs; ``text`` is the program, for the message."""
        found = self.new_findings()
        assert not found, "\n".join([f"{f.kind}: {f.what}: {f.detail}" for f in found] + [text])


def _describe(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(err).__name__}: {str(err)[:300]}{where}"


# ----------------------------------------------------------------- budget and timing

_hits: list[int] = [0]
_original_exceeded = budget.exceeded_error


def _counted_exceeded():
    # run_within asks for this error exactly when a question runs out of time (or ISL of
    # operations), so counting the calls counts the questions that hit the budget.
    _hits[0] += 1
    return _original_exceeded()


budget.exceeded_error = _counted_exceeded


@contextmanager
def question(report: Report, what: str):
    """Time one question (a pass, a primitive, a decider) and note whether it hit the
    budget; every question runs under polypad's default budget."""
    hits, start = _hits[0], time.perf_counter()
    report.questions += 1
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        if _hits[0] > hits:
            report.budget_hits.append(what)
        if elapsed > 1.5 * budget.default_budget():
            report.overruns.append((what, elapsed))
        if elapsed > report.slowest[0]:
            report.slowest = (elapsed, what)


# ----------------------------------------------------------------- cases


class _SmallValues:
    """A numpy generator for :func:`make_inputs` whose floats are small integers, and
    whose scalars come from ``scalars`` when given (``n`` near the ends of int32)."""

    def __init__(self, rng: np.random.Generator, scalars=None) -> None:
        self.rng = rng
        self.scalars = scalars

    def integers(self, *args, **kwargs):
        if self.scalars and "size" not in kwargs:  # make_inputs draws a scalar
            return self.scalars[int(self.rng.integers(0, len(self.scalars)))]
        return self.rng.integers(*args, **kwargs)

    def standard_normal(self, shape):
        return self.rng.integers(-4, 5, size=shape).astype(np.float64)


def copies(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run(func: n.PrimFunc, args: list) -> list:
    """``func`` run by the reference executor on copies of ``args``."""
    out = copies(args)
    codegen.build(func, target="python")(*out)
    return out


@dataclass
class Case:
    """A function, input sets satisfying its assumptions, and its results on them."""

    text: str
    func: n.PrimFunc
    inputs: list[list]
    results: list[list]
    n_values: Sequence[int]  # the values of the scalar n worth trying by brute force


def make_case(text: str, seed: int, n_values: Sequence[int] = range(0, 17), *,
              scalars: Sequence[int] | None = None) -> Case | None:
    """The case of ``text``, or ``None`` when no input set runs (or the function cannot
    be built: an access provably out of bounds).  ``scalars``: the values the inputs'
    scalars are drawn from (by default ``make_inputs``' own, 0 to 16)."""
    func = parse(text)
    try:
        kernel = codegen.build(func, target="python")
    except OutOfBoundsError:
        return None
    rng = _SmallValues(np.random.default_rng(seed), scalars)
    inputs, results = [], []
    for _ in range(INPUT_SETS):
        args = make_inputs(func, rng)
        out = copies(args)
        try:
            kernel(*out)
        except PolypadError:
            continue  # an assumption make_inputs cannot establish, a bad data-dependent index
        inputs.append(args)
        results.append(out)
    if not inputs:
        return None
    return Case(text, func, inputs, results, n_values)


def compare(case: Case, got: n.PrimFunc, what: str, report: Report, adapt=None) -> None:
    """``got`` gives ``case``'s results on every input set (``adapt``: the inputs and
    results through a changed interface)."""
    try:
        verify(got)
    except VerifyError as err:
        report.crash(what, err)
        return
    try:
        kernel = codegen.build(got, target="python")
    except PolypadError as err:
        report.unsound(what, f"the result cannot be built: {_describe(err)}")
        return
    for args, want in zip(case.inputs, case.results, strict=True):
        new_args = adapt.inputs(args) if adapt else copies(args)
        try:
            kernel(*new_args)
        except PolypadError as err:
            report.unsound(what, f"the result fails where the original ran: {_describe(err)}")
            return
        out, why = (adapt.results(new_args) if adapt else (new_args, None))
        if why is not None:
            report.unsound(what, why)
            return
        for k, (a, b) in enumerate(zip(want, out, strict=True)):
            if isinstance(a, np.ndarray) and not np.allclose(a, b, rtol=1e-6, equal_nan=True):
                report.unsound(what, f"argument {k} differs: want {a.tolist()}, got "
                                     f"{b.tolist()} (inputs {_show_args(args)})")
                return


def _show_args(args: list) -> str:
    return ", ".join(str(a.tolist()) if isinstance(a, np.ndarray) else str(a) for a in args)


# ----------------------------------------------------------------- passes


def passes() -> dict:
    """Every pass of ``polypad.transform`` the fuzz runs, by name (those that exist)."""
    from polypad import transform

    return {name: getattr(transform, name) for name in PASSES if hasattr(transform, name)}


def check_passes(case: Case, report: Report, names=None) -> None:
    """Every pass (or those ``names``) keeps ``case``'s results."""
    for name, pass_ in passes().items():
        if names is not None and name not in names:
            continue
        with question(report, name):
            try:
                got = pass_(case.func)
            except Exception as err:  # a pass takes every well-formed function
                report.crash(name, err)
                continue
        compare(case, got, name, report)


# ----------------------------------------------------------------- deciders


def statements(func: n.PrimFunc) -> list[n.Stmt]:
    """The stores, loops and ifs of ``func`` that hold no ``T.assume``, in program order."""
    out = []
    for s in walk(func.body):
        if isinstance(s, (n.BufferStore, n.For, n.IfThenElse)) and not any(
                isinstance(x, n.Call) and x.op == "assume" for x in walk(s)):
            out.append(s)
    return out


def _decide(report: Report, what: str, decide):
    """``decide()``, a decision; ``None`` after a refusal or a crash (noted)."""
    with question(report, what):
        try:
            decided = decide()
            report.log.append(f"{what}: {decided}")
            kind = _answer_kind(decided)
            report.answers[kind] = report.answers.get(kind, 0) + 1
            return decided
        except NOT_REFUSALS as err:
            report.crash(what, err)
        except PolypadError as err:
            report.refusal(what, err)
        except Exception as err:
            report.crash(what, err)
    return None


def _answer_kind(decided) -> str:
    """``Proved`` (a ``Removable`` too), ``Refuted``, ``Unknown``, or the class's name."""
    from analyses import Proved, Refuted, Unknown

    for kind in (Proved, Refuted, Unknown):
        if isinstance(decided, kind):
            return kind.__name__
    return type(decided).__name__


def check_no_ops(case: Case, report: Report, picks) -> None:
    """Where ``is_no_op`` proves statement ``k`` (for ``k`` in ``picks``) a no-op, the
    function without it gives the same results."""
    from analyses import Proved, is_no_op

    candidates = statements(case.func)
    for k in sorted({k % len(candidates) for k in picks} if candidates else ()):
        stmt = candidates[k]
        what = f"is_no_op(statement {k}: {_first_line(stmt)})"
        decided = _decide(report, what, lambda s=stmt: is_no_op(case.func, s))
        if isinstance(decided, Proved):
            report.proved += 1
            compare(case, replace(case.func, stmt, n.Evaluate(n.IntImm(0))), what, report)


def check_conditionals(case: Case, report: Report, picks) -> None:
    """Where ``can_remove_conditional`` proves an ``if`` removable, the function with the
    branch it keeps gives the same results."""
    from analyses import can_remove_conditional
    from analyses.conditional import Removable

    ifs = [s for s in statements(case.func) if isinstance(s, n.IfThenElse)]
    for k in sorted({k % len(ifs) for k in picks} if ifs else ()):
        stmt = ifs[k]
        what = f"can_remove_conditional({_first_line(stmt)})"
        decided = _decide(report, what, lambda s=stmt: can_remove_conditional(case.func, s))
        if isinstance(decided, Removable):
            report.proved += 1
            compare(case, replace(case.func, stmt, decided.kept(stmt)),
                    f"{what} keeping {decided.kept_what()}",
                    report)


def probes(func: n.PrimFunc) -> list[n.BufferStore]:
    """The probe stores ``C[k] = T.if_then_else(question, 1, 0)``."""
    return [s for s in walk(func.body) if isinstance(s, n.BufferStore)
            and s.buffer.name == "C" and isinstance(s.value, n.Select)]


def check_probes(case: Case, report: Report) -> None:
    """Where ``prove`` proves a probe's question, brute force finds no instance failing it."""
    from analyses import Proved, context_at, prove

    violations = _brute_force()

    for probe in probes(case.func):
        claim = probe.value.condition
        what = f"prove({_first_line(probe)})"
        decided = _decide(report, what, lambda p=probe, q=claim: prove(q, context_at(
            case.func, p)))
        if not isinstance(decided, Proved):
            continue
        report.proved += 1
        try:
            found = violations(claim, case.func, probe, params={"n": case.n_values},
                               samples=2)
        except AssertionError:
            continue  # brute force met no input satisfying the assumptions
        if found:
            report.unsound(what, f"{decided} but it fails at {found[:3]}")


def _brute_force():
    """``prover_brute_force.violations``, which lives beside the prover's tests."""
    here = str(Path(__file__).parent / "analyses")
    if here not in sys.path:
        sys.path.append(here)
    from prover_brute_force import violations

    return violations


def _first_line(stmt: n.Stmt) -> str:
    text = show(stmt).strip().splitlines()
    return text[0] if text else type(stmt).__name__
