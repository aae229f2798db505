"""Compiling a candidate and timing it: the work a runner hands to a process.

:func:`compile_candidate` builds a candidate from the primitives
(:mod:`.realize`), checks its results against the reference before anything
is timed, and compiles its Numba kernel, which lands in the on-disk kernel
cache (:mod:`codegen.numba.compiler`), so that a later process on the same
machine loads it without compiling.  :func:`time_candidate` then times it:
one call first, and where that is not already far slower than the best so
far, the median of several more (``codegen.timing.measure``: fresh copies of
the written arrays for each call, the garbage collector off).

The check: the outputs of the candidate's full-size kernel -- the one that is
then timed, compiled once -- on random inputs, against the expected outputs of
the function, computed once per search (:func:`make_check`).  Where the
function is small (:data:`REFERENCE_INSTANCES`) the reference executor
(``codegen.build(f, target="python")``) computes them.  Otherwise the plain
function's Numba kernel does, at full size, once the reference executor has
agreed with that kernel on ``small`` (the same kernel at small sizes) when the
caller gives one; the search says which (:attr:`Check.against`).  That plain
run is also the plain nest's timing (one call).

Why at full size, not on ``small``: a check at small sizes needs a second
compile of every candidate (its trace replayed on ``small``, then Numba), as
long as the full one, and it checks a kernel that is never timed; the
reference executor alone on the replayed trace interprets ``small``, seconds a
candidate.  Checking the timed kernel itself costs one call of it, in the
compiling process, and a wrong tail or guard at the real sizes cannot hide.
Float results may differ by the reassociation a candidate's ``rfactor``
accepts, within :data:`RTOL`.

Everything here is a plain function of picklable values, so that a process
pool and Dask run the same code.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from polypad.concurrency import Recent
from polypad.errors import PolypadError
from polypad.ir import nodes as n

from .nest import Nest
from .realize import Refused, realize
from .space import Candidate

#: The reference executor runs the tuned function itself up to this many statement
#: instances (about a second of the interpreter).
REFERENCE_INSTANCES = 60_000
RTOL = 1e-3
#: Calls of a candidate are timed until they add up to about this many seconds.
TIMED_SECONDS = 0.25
MIN_CALLS, MAX_CALLS = 3, 15
#: A candidate whose first call is this many times slower than the best is not
#: timed further; nor one whose first call takes this many seconds (its noise is
#: small beside its length, and the budget is better spent on others).
CUT = 4.0
LONG_CALL = 0.5


@dataclass
class Check:
    """What candidates are checked against: ``func`` run on inputs from ``seed``
    must give ``expected`` (the written arrays, by parameter index)."""

    func: n.PrimFunc
    seed: int
    expected: dict[int, np.ndarray]
    against: str  # what computed ``expected`` (see the module docstring)
    #: The seconds of the plain kernel's one call that computed ``expected``, where
    #: the plain Numba kernel did (its timing, taken while nothing else ran).
    plain_runs: list[float] = field(default_factory=list)
    #: Names this search's kernels in a process's :data:`_KERNELS`.
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass
class Compiled:
    """A candidate after :func:`compile_candidate`."""

    candidate: Candidate
    status: str  # "ok", "refused", "wrong" or "error"
    detail: str = ""
    primitive: str | None = None  # the refused primitive
    trace: list = field(default_factory=list)  # the steps, as JSON values
    func: n.PrimFunc | None = None  # the scheduled function, at full size
    compile_s: float = 0.0
    skipped: list[str] = field(default_factory=list)
    where: str = ""  # the worker that compiled it (Dask), "" for this machine
    kernel: str = ""  # its name in the compiling process's _KERNELS (kernel_key)


def inputs(func: n.PrimFunc, seed: int) -> list:
    """Random arguments of ``func``, the same for the same seed in every process."""
    from analyses.witness_inputs import make_inputs

    return make_inputs(func, np.random.default_rng(seed))


def written(func: n.PrimFunc) -> list[int]:
    """The indices of the parameters ``func`` writes."""
    from codegen.calling import written_buffers

    out = written_buffers(func)
    return [k for k, p in enumerate(func.params) if p in out]


def outputs(kernel, func: n.PrimFunc, seed: int) -> dict[int, np.ndarray]:
    """The arrays ``kernel`` writes when run on :func:`inputs` of ``func``."""
    args = inputs(func, seed)
    kernel(*args)
    return {k: np.asarray(args[k]) for k in written(func)}


def trace_json(trace) -> list:
    """A trace's steps as JSON values: ``[primitive, [[name, value], ...]]``."""
    return [[step.primitive, [[k, _json(v)] for k, v in step.args]] for step in trace]


def _json(value):
    if isinstance(value, tuple | list):
        return [_json(v) for v in value]
    return value


def trace_from_json(steps) -> object:
    """The :class:`~polypad.schedule.Trace` :func:`trace_json` wrote; ``ValueError``
    for anything else."""
    from polypad.schedule import Step, Trace

    if not isinstance(steps, list):
        raise ValueError("a trace is a list of steps")
    out = []
    for step in steps:
        if (not isinstance(step, list) or len(step) != 2 or not isinstance(step[0], str)
                or not isinstance(step[1], list)):
            raise ValueError(f"not a step: {step!r}")
        args = []
        for pair in step[1]:
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise ValueError(f"not an argument: {pair!r}")
            args.append((pair[0], pair[1]))
        out.append(Step(step[0], tuple(args)))
    return Trace(out)


#: Kernels compiled in this process, by :func:`kernel_key`: a Dask worker times
#: the kernel it compiled and checked without building it again.  The last 8,
#: locked: a Dask worker runs its tasks in several threads.
_KERNELS = Recent(8)


def compiled_kernel(name: str):
    """The kernel :func:`compile_candidate` compiled in this process as ``name``
    (:attr:`Compiled.kernel`), or ``None`` once it is no longer held."""
    return _KERNELS.get((), extra=name)


def compiled_kernel_names() -> list[str]:
    """The names of the kernels this process holds, oldest first."""
    return _KERNELS.extras()


def kernel_key(candidate: Candidate, check: Check) -> str:
    """The name of ``candidate``'s kernel of the searched function in :data:`_KERNELS`."""
    return f"{check.token}:{candidate.key}"


def compile_candidate(func: n.PrimFunc, nest: Nest, candidate: Candidate, check: Check
                      ) -> Compiled:
    """Build ``candidate`` on ``func``, compile it once, check its results (see the
    module docstring)."""
    import codegen

    start = time.perf_counter()
    try:
        built = realize(func, nest, candidate)
    except Refused as refused:
        return Compiled(candidate, "refused", refused.reason, primitive=refused.primitive)
    except Exception as error:  # a bug in the tuner drops the candidate, not the search
        return Compiled(candidate, "error", f"internal: {type(error).__name__}: {error}")
    sch = built.schedule
    steps = trace_json(sch.trace)
    try:
        kernel = codegen.build(sch.func)
        kernel.compile()
        wrong = _compare(outputs(kernel, check.func, check.seed), check.expected)
        if wrong:
            return Compiled(candidate, "wrong", wrong, trace=steps, skipped=built.skipped)
    except Exception as error:  # PolypadError from a build; anything else is a bug
        kind = "" if isinstance(error, PolypadError) else "internal: "
        return Compiled(candidate, "error", f"{kind}{type(error).__name__}: {error}",
                        trace=steps, skipped=built.skipped)
    name = kernel_key(candidate, check)
    _KERNELS.put((), kernel, extra=name)
    return Compiled(candidate, "ok", trace=steps, func=sch.func, kernel=name,
                    compile_s=time.perf_counter() - start, skipped=built.skipped)


def _compare(got: dict, expected: dict) -> str:
    for k, want in expected.items():
        have = got[k]
        if np.issubdtype(want.dtype, np.floating):
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            same = np.allclose(have, want, rtol=RTOL, atol=RTOL * max(scale, 1.0),
                               equal_nan=True)
        else:
            same = np.array_equal(have, want)
        if not same:
            bad = int(np.argmax(np.abs(have.astype(float) - want.astype(float)).ravel()))
            return (f"parameter {k}: element {bad} is {have.ravel()[bad]!r}, the reference "
                    f"gives {want.ravel()[bad]!r}")
    return ""


def time_candidate(func: n.PrimFunc, seed: int, best: float | None,
                   key: str | None = None) -> list[float]:
    """The seconds of timed calls of scheduled ``func`` on :func:`inputs`: one call, and
    unless that is :data:`CUT` times slower than ``best`` or longer than
    :data:`LONG_CALL`, a median's worth more.  ``key``: the kernel's name in this
    process's :data:`_KERNELS`, where it was compiled here."""
    import codegen
    from codegen.timing import measure

    kernel = compiled_kernel(key) if key is not None else None
    if kernel is None:
        kernel = codegen.build(func).compile()
    args = inputs(func, seed)
    first = measure(kernel, *args, repeat=1).runs
    if (best is not None and first[0] > CUT * best) or first[0] >= LONG_CALL:
        return list(first)
    calls = int(min(MAX_CALLS, max(MIN_CALLS, TIMED_SECONDS / max(first[0], 1e-9))))
    return list(measure(kernel, *args, repeat=calls).runs)


def make_check(func: n.PrimFunc, nest: Nest, small: n.PrimFunc | None, seed: int) -> Check:
    """The :class:`Check` of a search of ``func`` (see the module docstring); a
    :class:`~polypad.errors.PolypadError` where the plain Numba kernel of ``small``
    differs from the reference executor (a code generator bug, not a schedule's)."""
    import codegen

    instances = nest.root.instances + sum(p.instances for p in nest.producers)
    if instances <= REFERENCE_INSTANCES:
        reference = codegen.build(func, target="python")
        return Check(func, seed, outputs(reference, func, seed), "reference executor")
    against = "plain Numba kernel"
    if small is not None:
        want = outputs(codegen.build(small, target="python"), small, seed)
        wrong = _compare(outputs(codegen.build(small), small, seed), want)
        if wrong:
            raise PolypadError(f"autoschedule: the plain Numba kernel of {small.name} "
                               f"differs from the reference executor: {wrong}")
        against += ", itself checked against the reference executor at small sizes"
    plain = codegen.build(func).compile()
    args = inputs(func, seed)
    start = time.perf_counter()
    plain(*args)
    seconds = time.perf_counter() - start
    expected = {k: np.asarray(args[k]) for k in written(func)}
    return Check(func, seed, expected, against, plain_runs=[seconds])
