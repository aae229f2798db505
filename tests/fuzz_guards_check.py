"""The check of the run-time guards' fuzz (``benchmarks/fuzz.py --shapes guards``):
one program of :mod:`fuzz_guards`, every target, the same inputs.

For each input set (:func:`fuzz_guards.draw_inputs`, drawn again up to
:data:`REDRAWS` times while the call's precondition refuses it) the reference
executor runs the function; an input on which a ``T.assume`` is false is left out
(the targets need not check them).  Then each variant runs on the same
values and must end the same way -- the same buffers, or the same error
class with the same message:

* ``numba``: the serial text, the default ``boundscheck``, every buffer an
  array inside a larger one whose guard regions hold a sentinel: a write
  there is a silent out-of-bounds store, a read of one shows as a result
  that differs;
* ``numba boundscheck=True`` (every other case): every access checked;
* ``numba parallel``: the ``# par`` loops ``T.parallel``;
* ``cuda``, on Numba's CUDA simulator, the ``# par`` loops bound to
  ``threadIdx.x`` (a build the target refuses by design -- a gather in an
  index, an assert inside a kernel, a view -- is counted, not a finding).

A parallel run (``numba parallel``, ``cuda``) may report another failing
element than the serial order's first, so there only the error class must
match.  And the analysis's :attr:`~analyses.BoundsPrecondition.proved` must
be sound: where the reference stops at an access outside its buffer (after
the precondition held, with every assumption true so far), that access is
no proved one -- which also catches an ``assert`` that proved an access
running before it.  An access through a view stops there when it leaves the
view's own shape, inside ``A`` or not (``docs/semantics.md``): then the
view's access as written must be no proved one, and every target must stop
there too.  The same is asked of the reference alone at every ``n``
of a small range and its dtype's ends, against a few values of ``m`` and two
index buffers (:func:`enumerate_proved`).

Findings: ``unsound`` (a result or an error that differs, a guard region
written, a proved access outside), ``order`` (the same error class with
another message in a serial run: which of two failing checks runs first),
``crash`` (an exception no target should raise).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np
from fuzz_guards import ENDS, SIZES, GuardsProgram, draw_inputs, guards_program
from fuzz_programs import Seeded
from fuzz_support import Report

import analyses
import codegen
from codegen.calling import check_arguments, written_buffers
from polypad.errors import (
    AssumptionError,
    BoundsCheckError,
    BuildError,
    NotAffineError,
    OutOfBoundsError,
    PolypadError,
)
from polypad.ir import nodes as ir
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.script import parse
from polypad.semantics import interpreter

ORDER = ("A", "X", "C", "D", "n", "m")
SENTINEL = -777_777
GUARD = 320  # elements of sentinel on each side of a 1-D buffer (int8 and int16 indices)
INPUTS = 4  # input sets per case
REDRAWS = 3  # draws per input set while the precondition refuses them


@dataclass
class GuardsStats:
    """What a case ran: inputs compared, left out, and runs per outcome."""

    compared: int = 0
    assumption_false: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # reference: ok / error class
    refused: dict[str, int] = field(default_factory=dict)  # variant: reason
    runs: dict[str, int] = field(default_factory=dict)  # variant: runs compared
    parallel_messages: int = 0  # same class, another element, in a parallel run
    store_or_value: int = 0  # a store's index checked before its value's loads, or after
    enumerated: int = 0  # reference runs of enumerate_proved

    def count(self, table: dict, key: str) -> None:
        table[key] = table.get(key, 0) + 1


def use_cuda_simulator() -> None:
    """Numba's CUDA simulator unless the environment says otherwise, as
    ``tests/cuda/conftest.py`` sets it (before ``numba.cuda`` is imported)."""
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    import numba.core.config

    if "numba.cuda" not in sys.modules:
        numba.core.config.ENABLE_CUDASIM = int(os.environ["NUMBA_ENABLE_CUDASIM"])


# ----------------------------------------------------------------- runs

def guarded_arrays(values: dict) -> tuple[list, list]:
    """The call's arguments, each array a view inside a larger one filled with
    :data:`SENTINEL`; and the larger ones with the view's place, for :func:`clobbered`."""
    args, outer = [], []
    for name in ORDER:
        value = values[name]
        if not isinstance(value, np.ndarray):
            args.append(value)
            continue
        if value.ndim == 1:
            big = np.full(value.size + 2 * GUARD, SENTINEL, value.dtype)
            place = slice(GUARD, GUARD + value.size)
        else:
            rows = GUARD // value.shape[1]
            big = np.full((value.shape[0] + 2 * rows, value.shape[1]), SENTINEL, value.dtype)
            place = slice(rows, rows + value.shape[0])
        big[place] = value
        args.append(big[place])
        outer.append((name, big, place))
    return args, outer


def clobbered(outer: list) -> list[str]:
    """The buffers whose guard regions no longer hold only the sentinel."""
    out = []
    for name, big, place in outer:
        mask = np.ones(big.shape[0], bool)
        mask[place] = False
        if not (big[mask] == SENTINEL).all():
            out.append(name)
    return out


@dataclass(frozen=True)
class Ran:
    """How a call ended: ``error`` (class name) and its message, or the buffers."""

    error: str | None
    message: str
    buffers: tuple = ()

    def show(self) -> str:
        return f"{self.error}: {self.message}" if self.error else "ran"


def call(kernel, args: list) -> Ran:
    try:
        kernel(*args)
    except PolypadError as err:
        return Ran(type(err).__name__, str(err))
    return Ran(None, "", tuple(np.array(a) for a in args if isinstance(a, np.ndarray)))


class _Recorder(interpreter._Interpreter):
    """The reference executor, noting the access that left its buffer (or, for an
    access through a view, the view's own shape: the view and its indices)."""

    failed: tuple | None = None

    def index(self, buffer, indices, what):
        try:
            return super().index(buffer, indices, what)
        except BoundsCheckError:
            if self.failed is None:
                self.failed = (buffer, tuple(indices))
            raise

    def check_view(self, through, what):
        try:
            super().check_view(through, what)
        except BoundsCheckError:
            if self.failed is None:
                self.failed = (through[0], tuple(through[1]))
            raise


def failing_access(reference, values: dict) -> tuple | None:
    """The ``(buffer, indices)`` of the access the reference stopped at."""
    func = reference.func
    args = check_arguments(func, tuple(_copy(values)[k] for k in ORDER), written_buffers(func))
    recorder = _Recorder(func)
    try:
        recorder.run(list(args))
    except BoundsCheckError:
        return recorder.failed
    return None


def _copy(values: dict) -> dict:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in values.items()}


# ----------------------------------------------------------------- a case

def build_variants(program: GuardsProgram, choose, report: Report, stats: GuardsStats
                   ) -> list[tuple[str, object]]:
    """``(name, kernel)`` of each variant that builds (see the module docstring)."""
    wanted = [("numba", program.text, "numba", {})]
    if choose.boolean():
        wanted.append(("numba boundscheck=True", program.text, "numba", {"boundscheck": True}))
    if program.parallel is not None:
        wanted.append(("numba parallel", program.parallel, "numba", {}))
    if program.cuda is not None:
        wanted.append(("cuda", program.cuda, "cuda", {}))
    out = []
    for name, text, target, options in wanted:
        try:
            if target == "cuda":
                use_cuda_simulator()
            out.append((name, codegen.build(parse(text), target=target, **options), text))
        except (BuildError, NotAffineError) as err:
            if target != "cuda" or type(err).__name__ not in ("BuildError", "NotAffineError"):
                report.crash(f"build {name}", err)
            else:
                reason = str(err).split(":")[1].strip()[:60] if ":" in str(err) else str(err)
                stats.count(stats.refused, f"{name}: {type(err).__name__}: {reason}")
        except Exception as err:  # noqa: BLE001 - every other failure is a finding
            report.crash(f"build {name}", err)
    return out


def check_proved(func, reference, values: dict, report: Report, what: str) -> None:
    """The access the reference stopped at must not be among those proved inside
    (:attr:`analyses.BoundsPrecondition.proved` of ``func``, which ``reference`` runs
    lowered: an access lowering keeps is equal to the one written)."""
    found = analyses.bounds_precondition(func)
    if not hasattr(found, "proved"):  # Unknown: out of time, every access checked
        return
    failed = failing_access(reference, values)
    if failed is not None and failed in found.proved:
        written = ", ".join(show(i).strip() for i in failed[1])
        report.unsound(f"proved access outside ({what})",
                       f"{failed[0].name}[{written}] is among the proved accesses; "
                       f"inputs {_show(values)}")


def enumerate_proved(func, reference, m_dtype: str, rng, report: Report,
                     stats: GuardsStats) -> None:
    """:func:`check_proved` at every ``n`` in ``[-2, 17)`` and its dtype's ends, ``m``
    in a few small values and its dtype's ends, with ``X`` inside and ``X`` drawn
    wide: the reference alone, a few hundred small runs."""
    xs = [rng.integers(0, 8, 8).astype("int32"), rng.integers(-3, 20, 8).astype("int32")]
    for n in [*range(-2, 17), 2**31 - 1, -2**31]:
        for m in (-1, 0, 1, 3, 7, *ENDS[m_dtype][:2]):
            for x in xs:
                values = {"A": np.arange(16, dtype="int32"), "X": x.copy(),
                          "C": np.zeros(16, "int32"), "D": np.zeros((4, 4), "int32"),
                          "n": n, "m": m}
                stats.enumerated += 1
                if call(reference, [_copy(values)[k] for k in ORDER]).error \
                        == BoundsCheckError.__name__:
                    check_proved(func, reference, values, report, "enumerated")


def compare(name: str, want: Ran, got: Ran, outer: list, values: dict, report: Report,
            stats: GuardsStats, func=None) -> None:
    """Findings where ``got`` (of variant ``name``) is not ``want`` (the reference's),
    or the guard regions ``outer`` were written; ``func`` is the function as the
    reference ran it, to tell a store's index from its value."""
    parallel = name in ("numba parallel", "cuda")
    where = f"{name}, inputs {_show(values)}"
    if outer and clobbered(outer):
        report.unsound(f"{name}: guard region written",
                       f"{clobbered(outer)} written outside; {where}")
    if want.error != got.error:
        report.unsound(f"{name}: outcome differs",
                       f"reference {want.show()}; {name} {got.show()}; {where}")
    elif want.error is not None and want.message != got.message:
        if parallel:
            stats.parallel_messages += 1
        elif func is not None and store_or_value(func, want.message, got.message):
            # The order of a store's index and its value's loads: being aligned apart.
            stats.store_or_value += 1
        else:
            report.findings.append(_finding("order", f"{name}: another message",
                                            f"reference {want.show()}; {name} {got.show()}; "
                                            f"{where}"))
    elif want.error is None:
        for param, a, b in zip(("A", "X", "C", "D"), want.buffers, got.buffers, strict=True):
            if not np.array_equal(a, b):
                report.unsound(f"{name}: {param} differs",
                               f"reference {a.tolist()}, {name} {b.tolist()}; {where}")
                break


_WRITTEN = re.compile(r"^(load of|store to) .* at \S+:(\d+) \(as written: (.*)\)$")


def store_or_value(func, first: str, second: str) -> bool:
    """Whether two failed-check messages name accesses of one store statement, one
    in its target (the store, or a load in its indices) and one in its value:
    which of them fails first is the order being aligned apart."""
    a, b = _WRITTEN.match(first), _WRITTEN.match(second)
    if a is None or b is None or a[2] != b[2]:
        return False
    for stmt in walk(func.body):
        if not (isinstance(stmt, ir.BufferStore) and stmt.span is not None
                and stmt.span.line == int(a[2])):
            continue
        target = {("store to", _written(stmt))} | {
            ("load of", _written(x)) for i in stmt.indices for x in walk(i)
            if isinstance(x, ir.BufferLoad)}
        value = {("load of", _written(x)) for x in walk(stmt.value)
                 if isinstance(x, ir.BufferLoad)}
        one, other = (a[1], a[3]), (b[1], b[3])
        if (one in target and other in value) or (one in value and other in target):
            return True
    return False


def _written(access) -> str:
    """An access as a failed check's message writes it (``as written: ...``)."""
    return f"{access.buffer.name}[{', '.join(show(i).strip() for i in access.indices)}]"


def _finding(kind: str, what: str, detail: str):
    from fuzz_support import Finding

    return Finding(kind, what, detail)


def _show(values: dict) -> str:
    return ", ".join(f"{k}={values[k].tolist() if k == 'X' else values[k]}"
                     for k in ("n", "m", "X") if k in values)


def check_guards_case(seed: int, index: int) -> tuple[GuardsProgram, Report, GuardsStats]:
    """Generate case ``index`` of ``seed`` and check it (the module docstring)."""
    choose = Seeded(seed * 1_000_003 + index)
    program = guards_program(choose)
    report, stats = Report(), GuardsStats()
    rng = np.random.default_rng(seed * 1_000_003 + index)
    func = parse(program.text)
    try:
        reference = codegen.build(func, target="python")
    except PolypadError as err:  # every value outside (OutOfBoundsError): nothing to run
        report.refusal("build python", err)
        return program, report, stats
    variants = build_variants(program, choose, report, stats)
    others = {text: parse(text) for _, _, text in variants if text != program.text}
    references = {text: (f, codegen.build(f, target="python")) for text, f in others.items()}
    for _ in range(INPUTS):
        for _ in range(REDRAWS):  # values the precondition refuses test little
            values = draw_inputs(rng, program.m_dtype)
            want = call(reference, [_copy(values)[k] for k in ORDER])
            if want.error != OutOfBoundsError.__name__:
                break
        if want.error == AssumptionError.__name__:
            stats.assumption_false += 1
            continue
        stats.compared += 1
        stats.count(stats.outcomes, want.error or "ran")
        if want.error == BoundsCheckError.__name__:
            check_proved(func, reference, values, report, "serial")
            for other, built in references.values():
                check_proved(other, built, values, report, "variant")
        for name, kernel, _ in variants:
            if name.startswith("numba"):
                args, outer = guarded_arrays(_copy(values))
            else:
                args, outer = [_copy(values)[k] for k in ORDER], []
            try:
                got = call(kernel, args)
            except Exception as err:  # noqa: BLE001 - no target may raise anything else
                report.crash(f"run {name}", err)
                continue
            stats.count(stats.runs, name)
            compare(name, want, got, outer, values, report, stats, reference.func)
    enumerate_proved(func, reference, program.m_dtype, rng, report, stats)
    report.questions = stats.compared
    return program, report, stats


__all__ = ["SIZES", "check_guards_case"]
