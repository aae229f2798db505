"""The ``cuda`` target: a ``numba.cuda`` module, ``codegen.build(f, target="cuda")``.

The loops bound to GPU axes (``T.thread_binding``, ``T.launch_thread``,
``T.env_thread``, ``sch.bind``) become block and thread indices
(:mod:`analyses.gpu_threads`); :func:`analyses.gpu_sync.plan_barriers` proves
where ``cuda.syncthreads()`` is needed and refuses a race no barrier can
order (:class:`~polypad.errors.RaceError`, whose ``evidence`` names both
instances, both threads and the element); :mod:`.emit` writes the module and
:mod:`.runtime` compiles and launches it.  Its options:

- ``fastmath``: ``False`` (the default) or ``True``, Numba's CUDA fast-math
  (approximate division, square roots and transcendental functions, flushed
  denormals);
- ``boundscheck``: ``None``, the default, checks at run time exactly the
  accesses the bounds analysis could not prove inside their buffer, through
  a flag array the host reads after the launches (:mod:`.guards`); ``True``
  checks every access; ``False`` none, which is unsafe.

Shared buffers that a read may find unwritten are zero-filled first, as the
reference executor fills every allocation (:mod:`polypad.transform.shared_zero_fill`).

The bounds precondition is tested by the call wrapper, before the copies to
the device.

The function is lowered keeping its top-level assumptions' facts over the
parameters (:func:`polypad.semantics.remove_assume.remove_assume_keeping_facts`):
the barrier plan and the passes before it ask the model whether an index may
wrap, and it answers at the parameter values those facts allow
(:mod:`polypad.model.parameter_facts`), as for the function as written.  They
run as nothing.  The target does not check assumptions at run time: a build
with ``check_assumptions=True`` of a function that has one to check is refused.

A plain ``assert`` at the function's top level, over the scalar parameters,
is checked by the host where it stands, between the launches before and after
it (:mod:`.runtime`); one inside a kernel is refused by name
(:class:`BuildError`).
"""

from __future__ import annotations

from analyses.evidence import Refuted
from analyses.gpu_cross_thread import cross_thread_reductions
from analyses.gpu_sync import plan_barriers
from analyses.gpu_threads import structure
from polypad.arguments import expect, wrong_type
from polypad.errors import BuildArgumentError, BuildError, RaceError
from polypad.ir.intrinsics import assume
from polypad.ir.nodes import Assert, Evaluate, PrimFunc, Var
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import Rewriter
from polypad.semantics.asserts import run_asserts
from polypad.semantics.lower_allreduce import lower_allreduce
from polypad.semantics.lowering import checked_assumptions, lower
from polypad.transform.cross_thread_atomics import cross_thread_atomics
from polypad.transform.launch_buffers import hoist_launch_globals, sink_top_views
from polypad.transform.lower_cross_thread_reduction import lower_cross_thread_reduction
from polypad.transform.place_gpu_allocations import place_gpu_allocations
from polypad.transform.shared_zero_fill import with_zero_fill
from polypad.transform.unify_thread_bindings import unify_thread_bindings

from ..calling import written_buffers
from ..precondition import CallCheck
from ..target import Executable, Target
from .emit import emit, host_buffers
from .runtime import load


class CudaTarget(Target):
    """numba.cuda on an NVIDIA GPU, or on Numba's simulator (see the module docstring)."""

    name = "cuda"
    options = ("fastmath", "boundscheck")

    def __init__(self, *, fastmath: bool = False, boundscheck: bool | None = None):
        if not isinstance(fastmath, bool):
            raise wrong_type(fastmath, "fastmath", "codegen.build", "True or False",
                             error=BuildArgumentError)
        self.fastmath = fastmath
        #: ``None`` (the undecided accesses checked), ``True`` (every access) or
        #: ``False`` (none: unsafe); see :mod:`.guards`.
        self.boundscheck = expect(boundscheck, (bool, None), "boundscheck", "codegen.build",
                                  error=BuildArgumentError)

    def lowered(self, func: PrimFunc, *, check_assumptions: bool) -> PrimFunc:
        """``func`` lowered keeping its top-level assumptions' parameter facts (see
        the module docstring); a :class:`BuildError` where a check is asked for."""
        out = lower(func, check_assumptions=check_assumptions, keep_parameter_facts=True)
        if check_assumptions and checked_assumptions(out):
            raise BuildError("the cuda target does not check T.assume at run time; "
                             "build with check_assumptions=False")
        return out

    def executable(self, func: PrimFunc, precondition: CallCheck | None) -> Executable:
        # TVM's root-level tiles allocated in the kernel, and its cooperative copies (a
        # thread loop inside one bound to its axis) in the form the launch model reads,
        # each where that is proved to compute the same; TVM's cross-thread reductions
        # as its tvm_thread_allreduce (a tree, once Z3 proves the combiner commutative and
        # associative), or else as atomic updates after their init; TVM's flattened views
        # declared in each launch, and its global temporaries allocated in a launch
        # hoisted above it.
        func = hoist_launch_globals(sink_top_views(func))
        func = lower_cross_thread_reduction(unify_thread_bindings(place_gpu_allocations(func)))
        func = cross_thread_atomics(lower_allreduce(func))
        _require_host_asserts(func)
        # The analyses below model no assert: each (top-level, on the parameters) is a
        # parameter fact there, for the launches after it only (polypad.model.
        # parameter_facts), which the host checks before them.
        asserts = run_asserts(func)
        func = _AssertAsFact().visit(func)
        plan = plan_barriers(func)
        if not isinstance(plan, Refuted):
            # Shared memory as the reference sees it: zeros where a read may find nothing
            # written, with the barriers the fill needs.
            func, filled = with_zero_fill(func)
            if filled:
                plan = plan_barriers(func)
        if isinstance(plan, Refuted):
            cex = plan.counterexample
            raise RaceError(f"cannot build {func.name!r} for cuda: {_construct(func, cex)}"
                            f"{cex}", evidence=cex)
        guards = self.guards
        source = emit(func, plan, fastmath=self.fastmath, guards=guards,
                      asserts=[a.condition for a in asserts])
        host, written = host_buffers(plan), written_buffers(func)
        return Executable(load=lambda: load(func, source, host, written, guards, asserts),
                          source=source, device_arrays=True)


class _AssertAsFact(Rewriter):
    def visit_Assert(self, node: Assert) -> Evaluate:
        return Evaluate(assume(node.condition), span=node.span)


def _require_host_asserts(func: PrimFunc) -> None:
    """A :class:`BuildError` for a plain assert the host cannot check between launches:
    one inside a kernel (under a loop, ``if`` or let), or one over more than the
    scalar parameters."""
    roots = {id(launch.root) for launch in structure(func).launches}
    params = {p for p in func.params if isinstance(p, Var)}
    for stmt in run_asserts(func):
        where = f" at line {stmt.span.line}" if stmt.span is not None else ""
        if id(stmt) not in roots:
            raise BuildError(f"cannot build {func.name!r} for cuda: the assert{where} is "
                             "inside a kernel (under a loop, if or let); the cuda target "
                             "runs an assert only at the function's top level, on the "
                             "host, between launches")
        others = sorted(v.name for v in free_vars(stmt.condition) if v not in params)
        if others:
            raise BuildError(f"cannot build {func.name!r} for cuda: the assert{where} reads "
                             f"{', '.join(others)}; the host checks a top-level assert "
                             "over the scalar parameters only")


def _construct(func: PrimFunc, cex) -> str:
    """What TVM construct a race comes from, where it is one polypad names: a
    cross-thread reduction (TVM's tvm_thread_allreduce)."""
    element = cex.element.buffer if cex.element is not None else None
    for found in cross_thread_reductions(func):
        if element in {b.name for b in found.written}:
            return f"{found}. The race: "
    return ""
