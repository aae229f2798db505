"""A lowered function as the text of a Python module that Numba compiles.

The module defines ``kernel(<params>)``::

    @numba.njit(cache=True, parallel=True, fastmath={"contract"}, error_model="numpy")
    def kernel(A, B):
        for i in numba.prange(8):
            B[i] = np.float32(0.0)
            B_acc = B[i]
            for j in range(4):
                B_acc = B_acc + A[i, j]
            B[i] = B_acc

Every function gets the floating-point flags of the build's ``fastmath``
mode (:mod:`.fastmath`).  This module writes the statements; how each kind
of loop is written is :mod:`.loops` (``numba.prange``, vectorized, unrolled;
``B_acc`` above is :mod:`.accumulators`), and the helper functions a module
may hold -- a vectorized loop under full fast-math, a nest too deep for one
function (a loop :data:`~.loops.MAX_NESTED_LOOPS` deep, or any compound
statement :data:`~.loops.MAX_INDENT` levels in), a piece of a long
expression -- are :mod:`.helper_calls`.  What each function is compiled
with, and what a helper takes as parameters, is :mod:`.functions`.

``T.alloc_buffer`` is zero-filled, on the stack when small (:mod:`.stack`),
else on the heap aligned to 64 bytes (:mod:`.aligned`): the reference
executor zero-fills too, so both targets agree even on a program that reads
before writing.

The bounds precondition of the function, when it has one, is tested once in
the kernel's first lines (:mod:`codegen.precondition`, :mod:`.checks`); an
access the analysis left undecided, where it runs or before the loop it does
not depend on (:mod:`.guards`, :mod:`.hoist`), parallel loops kept parallel.

A ``T.assume`` still in the lowered function (``check_assumptions=True``) is
emitted as a check that raises (:mod:`.checks`); a parallel loop holding one
runs serially; a plain ``assert`` likewise, always.  So is a loop whose range
polypad cannot prove fits its counter's dtype, at its entry
(:mod:`codegen.loop_ranges`).  ``boundscheck=True`` compiles every function
with Numba's bounds checks, and runs parallel loops serially too, since Numba
reports an exception raised in a parallel region as a ``SystemError``.
"""

from __future__ import annotations

from polypad.errors import BuildError
from polypad.ir import nodes as ir
from polypad.ir.deep import deep_entry, guarded
from polypad.ir.nodes import Buffer, ForKind, PrimFunc
from polypad.ir.operators import as_expr
from polypad.ir.visitor import walk
from polypad.semantics.asserts import run_asserts
from polypad.semantics.lowering import checked_assumptions, is_check

from ..bounds_guards import BoundsGuards, max_axes
from ..loop_ranges import checked_loops
from ..precondition import CallCheck
from .accumulators import touched
from .checks import assert_lines, check_lines, precondition_lines
from .fastmath import DEFAULT, vector_helpers
from .functions import Function, has_code
from .guards import GuardState
from .helper_calls import HelperWriter
from .loops import MAX_INDENT, MAX_NESTED_LOOPS, MAX_UNROLL, LoopWriter
from .names import Names
from .pyexpr import SPLIT, ExprPrinter
from .slp import MARK as SLP_MARK
from .stack import zero_filled

__all__ = ["KERNEL_NAME", "MAX_INDENT", "MAX_NESTED_LOOPS", "MAX_UNROLL", "emit"]

KERNEL_NAME = "kernel"


class _Emitter(LoopWriter, HelperWriter):
    def __init__(self, func: PrimFunc, boundscheck: bool, fastmath: str | None,
                 precondition: CallCheck | None = None, guards: BoundsGuards | None = None):
        self.func = func
        self.precondition = precondition
        self.boundscheck = boundscheck
        self.fastmath = fastmath
        self.vector_helpers = vector_helpers(fastmath)
        self.promoted: set[Buffer] = set()  # held in a local by a loop being written
        #: Per loop in a sequence: the elements the statements before it store to,
        #: as the sequence's numbered elements and how many of them came before.
        self.before: dict[int, tuple[dict, int]] = {}
        self.checks = {id(s): k for k, s in enumerate(checked_assumptions(func))}
        self.asserts = {id(s): k for k, s in enumerate(run_asserts(func))}
        self.range_checks = checked_loops(func)
        self.names = Names()
        self.expr = ExprPrinter(self.names)
        self.expr.out, self.expr.part = self.line, self.part
        if guards is not None:  # the accesses to check at run time (:mod:`.guards`)
            self.expr.guard = GuardState(guards, 1 + max_axes(func))
        self.helpers: list[str] = []
        self.helper_names: dict[str, str] = {}
        self.current: Function | None = None
        self.in_prange = 0  # parallel loops whose body is being written
        self.uses_stack = False  # a buffer is allocated on the stack (:mod:`.stack`)
        self.uses_heap = False  # a buffer is allocated on the heap (:mod:`.aligned`)

    def module(self) -> str:
        params = [self.names(p) for p in self.func.params]
        kernel = self.current = Function(KERNEL_NAME, params, vectorized=False,
                                          boundscheck=self.boundscheck, fastmath=self.fastmath)
        if self.precondition is not None:  # once per call, before anything runs
            for text in precondition_lines(self.precondition, self.names):
                self.line(1, text)
        self.stmt(self.func.body, 1)
        header = '"""Generated by polypad; do not edit."""\n\nimport numba\nimport numpy as np'
        if self.uses_stack:
            header += "\n\nfrom codegen.numba.stack import stack_zeros as _pp_stack_zeros"
        if self.uses_heap:
            header += "\n\nfrom codegen.numba.aligned import aligned_zeros as _pp_aligned_zeros"
        if any(isinstance(node, ir.Call) and node.op == "erf" for node in walk(self.func.body)):
            header += "\n\nfrom math import erf as _pp_erf"
        if any(isinstance(node, ir.For) and node.kind is ForKind.VECTORIZED
               for node in walk(self.func.body)):
            header += f"\n\n{SLP_MARK}"
        checks = self.expr.guard.helper_sources() if self.expr.guard is not None else []
        parts = [header, *checks, *self.helpers, kernel.text()]
        return "\n\n\n".join(parts) + "\n"

    def line(self, depth: int, text: str) -> None:
        self.current.lines.append("    " * depth + text)

    def block(self, stmt: ir.Stmt, depth: int) -> None:
        """A nested suite: ``stmt`` at ``depth``, or ``pass`` if it emits nothing."""
        before = len(self.current.lines)
        self.stmt(stmt, depth)
        if not has_code(self.current.lines[before:]):
            self.line(depth, "pass")

    # -- statements ---------------------------------------------------------

    @guarded
    def stmt(self, stmt: ir.Stmt, depth: int) -> None:
        if isinstance(stmt, (ir.For, ir.IfThenElse)) and depth >= MAX_INDENT:
            self.helper(stmt, depth, "nest")
            return
        with self.expr.at(depth, stmt):  # where long expressions' temporaries go
            self._stmt(stmt, depth)

    def _stmt(self, stmt: ir.Stmt, depth: int) -> None:
        match stmt:
            case ir.SeqStmt():
                # Each element stored to, numbered in order: a loop's snapshot of
                # the count says which were stored before it, in linear time.
                seen: dict[tuple[Buffer, tuple], int] = {}
                for s in stmt.stmts:
                    if isinstance(s, ir.For):
                        self.before[id(s)] = (seen, len(seen))
                    self.stmt(s, depth)
                    for element in touched(s, self.positive):
                        seen.setdefault(element, len(seen))
            case ir.For():
                self.loop(stmt, depth)
            case ir.IfThenElse():
                self.if_(stmt, depth, "if")
            case ir.BufferStore():
                for text in self.expr.store(stmt.buffer, stmt.indices, stmt.value,
                                            stmt.view_access):
                    self.line(depth, text)
            case ir.LetStmt():
                self.expr.bound(stmt.var, stmt.value, stmt.value)
                if any(v in self.expr.parallel_vars for v in walk(stmt.value)
                       if isinstance(v, ir.Var)):
                    self.expr.parallel_vars.add(stmt.var)
                self.line(depth, f"{self.names(stmt.var)} = {self.expr(stmt.value)}")
                self.stmt(stmt.body, depth)
            case ir.Evaluate() if is_check(stmt):
                for text in check_lines(stmt, self.checks[id(stmt)], self.expr):
                    self.line(depth, text)
            case ir.Evaluate():
                pass  # expressions have no effects
            case ir.Assert():
                for text in assert_lines(stmt, self.asserts[id(stmt)], self.expr):
                    self.line(depth, text)
            case ir.Block():
                self.line(depth, "# block " + " ".join(stmt.name.split()))
                self.stmt(stmt.body, depth)
            case ir.Allocate():
                self.allocate(stmt.buffer, depth)
                self.stmt(stmt.body, depth)
            case ir.DeclBuffer():
                # After lowering (polypad.semantics.lower_views), a flat view of a whole buffer.
                size = self.expr(as_expr(stmt.buffer.shape[0]))
                self.line(depth, f"{self.names(stmt.buffer)} = "
                                 f"{self.names(stmt.buffer.data)}.reshape(({size},))")
                self.stmt(stmt.body, depth)
            case _:
                raise BuildError(f"the numba target cannot emit {type(stmt).__name__}")

    def allocate(self, buf: Buffer, depth: int) -> None:
        """``buf`` zero-filled, on the stack or the heap (:func:`.stack.zero_filled`)."""
        text, on_stack = zero_filled(buf, self.expr, self.names)
        self.uses_stack |= on_stack
        self.uses_heap |= not on_stack
        self.line(depth, text)

    def if_(self, stmt: ir.IfThenElse, depth: int, keyword: str) -> None:
        self.line(depth, f"{keyword} {self.expr(stmt.condition)}:")
        self.block(stmt.then_case, depth + 1)
        other = stmt.else_case
        if isinstance(other, ir.IfThenElse) and self.expr.height(other.condition) >= SPLIT:
            self.line(depth, "else:")  # its temporaries may not go before an elif
            self.stmt(other, depth + 1)
        elif isinstance(other, ir.IfThenElse):
            self.if_(other, depth, "elif")
        elif other is not None:
            self.line(depth, "else:")
            self.block(other, depth + 1)


@deep_entry
def emit(func: PrimFunc, *, boundscheck: bool = False,
         fastmath: str | None = DEFAULT, precondition: CallCheck | None = None,
         guards: BoundsGuards | None = None) -> str:
    """The Python module text for lowered ``func``; its kernel is ``kernel``.

    ``boundscheck=True`` turns on Numba's bounds checks in every function;
    ``fastmath`` is a mode of :mod:`.fastmath` (``None``, ``"contract"`` or
    ``"full"``); ``precondition`` is tested in the kernel's first lines
    (:func:`.checks.precondition_lines`); ``guards`` says which accesses to
    check at run time (:mod:`.guards`), None for none.
    """
    return _Emitter(func, boundscheck, fastmath, precondition, guards).module()
