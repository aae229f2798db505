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
mode (:mod:`.fastmath`).  A buffer element that a loop reduces into, and
that does not change in the loop, is held in a local across it
(``B_acc`` above; :mod:`.accumulators`).

Loop kinds:

- ``PARALLEL`` is ``numba.prange``, and the function holding it gets
  ``parallel=True`` (only then: the parallel pipeline costs compile time).
- ``VECTORIZED`` with loops inside goes below them first
  (:func:`polypad.semantics.vector_lanes.lanes_innermost`: max-pool's
  channels inside its window loops).  It is written in place, as a plain
  loop that LLVM vectorizes
  with the kernel's own facts about the arrays, unless its flags differ from
  the kernel's (``fastmath="full"``: fast-math on vectorized loops only).
  Then it moves into a helper ``_pp_vector_<k>`` compiled with
  ``fastmath=True`` and ``boundscheck=False``: fast-math flags sit on each
  LLVM instruction and Numba sets them per function, so they stay on the
  helper's arithmetic and never reach the kernel's own, non-vectorized
  arithmetic.  (``inline="always"`` would lose them: it inlines Numba IR,
  which is then compiled with the caller's flags.)  A loop computes nothing
  a later statement reads through a variable (IR variables are immutable),
  so passing the loop's free variables and buffers by argument is exact.
- ``UNROLL`` with constant bounds is written out once per iteration with the
  counter replaced by its value (up to :data:`MAX_UNROLL` iterations; longer
  or symbolic ones stay loops).

Python compiles at most 20 nested loops into one function and reads at most
100 levels of indentation, so a deeper nest continues in a helper
``_pp_nest_<k>`` taking the buffers and variables it uses, as a vectorized
loop does: a loop :data:`MAX_NESTED_LOOPS` deep, or any compound statement
:data:`MAX_INDENT` levels in.  Inside a parallel loop such a helper runs its
own parallel loops serially (Numba cannot launch a parallel region from
within one).  A long expression is cut into temporaries
(:mod:`.pyexpr`).  What each function is compiled with, and what a helper
takes as parameters, is :mod:`.functions`.

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

from functools import partial

from polypad.errors import BuildError
from polypad.ir import nodes as ir
from polypad.ir.deep import deep_entry, guarded
from polypad.ir.nodes import Buffer, ForKind, PrimFunc
from polypad.ir.operators import add, as_expr
from polypad.ir.visitor import walk
from polypad.semantics.asserts import run_asserts
from polypad.semantics.lowering import checked_assumptions, has_check, is_check
from polypad.semantics.vector_lanes import lanes_innermost

from ..bounds_guards import BoundsGuards, max_axes
from ..loop_ranges import checked_loops, holds_check
from ..precondition import CallCheck
from ..source_text import ADD, ATOM, COMPARE, MUL
from .accumulators import holds_helper, nesting, promotable, touched
from .checks import assert_lines, check_lines, precondition_lines, range_check_lines
from .collapse import collapsible
from .fastmath import DEFAULT, vector_helpers
from .functions import Function, free_inputs, has_code, parameterized
from .guards import GuardState, flag_array, helper_checks
from .hoist import hoist_checks
from .lane_chunks import lane_chunks
from .lane_rotation import lane_rotation, lanes_per_vector, rotated, skew_text
from .names import Names
from .pyexpr import SPLIT, ExprPrinter
from .slp import MARK as SLP_MARK
from .stack import zero_filled

#: Longest constant-bound loop that ``T.unroll`` writes out.
MAX_UNROLL = 64
#: Loops nested in one emitted function before the rest goes to a helper.
MAX_NESTED_LOOPS = 16
#: Indentation at which a compound statement goes to a helper.
MAX_INDENT = 48
KERNEL_NAME = "kernel"


class _Emitter:
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
                for text in self.expr.store(stmt.buffer, stmt.indices, stmt.value):
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

    def loop(self, loop: ir.For, depth: int) -> None:
        """``loop``, with the buffers it reduces into held in locals (:mod:`.accumulators`)."""
        # Consumed here: a node shared by two places of the tree is seen again.
        seen, count = self.before.pop(id(loop), ({}, 0))
        if loop.kind is ForKind.VECTORIZED:
            # Lanes below the loops inside (polypad.semantics.vector_lanes: LLVM vectorizes
            # the innermost loop), but not across a check, which the lanes' stores would pass.
            lanes = loop if has_check(loop) else lanes_innermost(loop)[0]
            if lanes is not loop:
                if self.vector_helpers and not self.current.vectorized:
                    self.helper(lanes, depth, "vector")
                else:
                    self.stmt(lanes, depth)
                return


        def before(element) -> bool:
            return seen.get(element, count) < count

        promoted = self.accumulators(loop, depth, before)
        if not promoted:
            self._loop(loop, depth)
            return
        if any(guard for _, _, guard in promoted):
            # The element must not be touched when the loop runs no iteration.
            self.line(depth, f"if {self.expr.operand(loop.extent, COMPARE + 1)} > 0:")
            depth += 1
        names = {}
        for buffer, indices, _ in promoted:
            names[buffer] = self.names.fresh(self.names(buffer) + "_acc")
            self.line(depth, f"{names[buffer]} = {self.expr.load(buffer, indices)}")
        self.expr.scalars.update(names)
        self.promoted.update(names)
        self._loop(loop, depth)
        for buffer, indices, _ in promoted:
            del self.expr.scalars[buffer]
            self.promoted.discard(buffer)
            for text in self.expr.store(buffer, indices, names[buffer]):
                self.line(depth, text)

    def accumulators(self, loop: ir.For, depth: int, before
                     ) -> list[tuple[Buffer, tuple, bool]]:
        """The buffers ``loop`` reduces into that can be held in locals; ``before``:
        the elements the statements before it surely store to."""
        if loop.kind is ForKind.PARALLEL or id(loop) in self.range_checks:
            return []
        if loop.kind is ForKind.VECTORIZED and self.vector_helpers and not self.current.vectorized:
            return []  # the loop becomes a helper, which would not see the local
        # A vectorized loop along an exact reduction's axis (the int8 dot's lanes into
        # C_rf[k_0]) gets its local too: LLVM vectorizes a reduction into a local
        # (vpmaddwd for int8 products), never one kept in memory it cannot prove
        # unaliased.
        loops, compound = nesting(loop)
        helpers = (holds_helper(loop, self.vector_helpers or self.current.vectorized)
                   or self.current.loops + loops >= MAX_NESTED_LOOPS
                   or depth + compound + 1 >= MAX_INDENT
                   or holds_check(loop, self.range_checks))
        return promotable(loop, self.positive, self.promoted, helpers, before)

    def positive(self, loop: ir.For) -> bool:
        """Whether ``loop`` surely runs at least once."""
        extent = self.expr.ranges.of(loop.extent)
        return extent is not None and extent[0] >= 1

    def _loop(self, loop: ir.For, depth: int, rotate: bool = True) -> None:
        if (loop.kind is ForKind.VECTORIZED and self.vector_helpers
                and not self.current.vectorized):
            self.helper(loop, depth, "vector")
            return
        self.expr.bound(loop.var, loop.min, add(loop.min, loop.extent) - 1)
        rotation = None if self.vector_helpers or not rotate else lane_rotation(
            loop, self.range_checks, self.func.params)
        if rotation is not None and self.current.loops + 2 < MAX_NESTED_LOOPS:
            self.rotated(rotation, depth)
            return
        lanes = None if self.vector_helpers else collapsible(loop, self.range_checks)
        if lanes is not None and self.current.loops < MAX_NESTED_LOOPS:
            self.fused(loop, lanes, depth)
            return
        unroll = loop.kind is ForKind.UNROLL and self.unrollable(loop)
        if not unroll and self.current.loops >= MAX_NESTED_LOOPS:
            self.helper(loop, depth, "nest")
            return
        if id(loop) in self.range_checks:
            number, _, low, high = self.range_checks[id(loop)]
            for text in range_check_lines(loop, number, low, high, self.expr):
                self.line(depth, text)
        chunks = None if id(loop) in self.range_checks else lane_chunks(loop)
        if chunks is not None:
            self.chunked(loop, chunks, depth)
            return
        if unroll:
            if isinstance(loop.min, ir.IntImm):
                values = [str(v) for v in range(loop.min.value,
                                                loop.min.value + loop.extent.value)]
            else:  # a symbolic start: the counter is the start plus a constant
                start = self.expr.operand(loop.min, ATOM)
                values = [start] + [f"({self.expr.operand(loop.min, ADD)} + {k})"
                                    for k in range(1, loop.extent.value)]
            for value in values:
                self.expr.subst[loop.var] = value
                self.stmt(loop.body, depth)
            self.expr.subst.pop(loop.var, None)
            return
        var = self.names(loop.var)
        extent = self.expr(loop.extent)
        zero_based = isinstance(loop.min, ir.IntImm) and loop.min.value == 0
        prange = (loop.kind is ForKind.PARALLEL and not self.current.serial
                  and not (self.boundscheck or has_check(loop)
                           or holds_check(loop, self.range_checks)))
        # Checks that need not run at each iteration, before the loop (:mod:`.hoist`).
        hoisted = hoist_checks(loop, self.expr, partial(self.line, depth),
                               not prange and self.positive(loop) and not has_check(loop))
        header = len(self.current.lines)  # where a flag array goes (:func:`.guards.flag_array`)
        if prange:
            self.current.parallel = True
            if loop.extent.dtype.startswith("uint"):
                # numba.prange runs no iteration for an unsigned count at or past half
                # its range (prange(np.uint8(128))); an int64 count holds every one.
                extent = f"np.int64({extent})"
            if zero_based:
                self.line(depth, f"for {var} in numba.prange({extent}):")
            else:
                offset = self.names.fresh(var + "_offset")
                self.line(depth, f"for {offset} in numba.prange({extent}):")
                self.line(depth + 1, f"{var} = {self.expr.operand(loop.min, ADD)} + {offset}")
        elif zero_based:
            self.line(depth, f"for {var} in range({extent}):")
        elif not isinstance(loop.min, ir.IntImm):
            # From zero, with the counter computed in the body: LLVM vectorizes a
            # loop whose trip count and index offsets it can see, and a symbolic
            # range start hides both (the seed-004 conv: 2.9x; bench_kernels.py).
            offset = self.names.fresh(var + "_offset")
            self.line(depth, f"for {offset} in range({extent}):")
            self.line(depth + 1, f"{var} = {self.expr.operand(loop.min, ADD)} + {offset}")
        else:
            # Not wrapped to the counter's dtype: the end may be one past its range.
            end = f"{self.expr.operand(loop.min, ADD)} + {self.expr.operand(loop.extent, ADD + 1)}"
            if isinstance(loop.min, ir.IntImm) and isinstance(loop.extent, ir.IntImm):
                end = str(loop.min.value + loop.extent.value)
            self.line(depth, f"for {var} in range({self.expr(loop.min)}, {end}):")
        self.current.loops += 1
        self.in_prange += prange
        if prange:
            self.expr.parallel_vars.add(loop.var)
        with flag_array(self.expr.guard, prange, self.current.lines, header, depth,
                        self.names):
            self.block(loop.body, depth + 1)
        if prange:
            self.expr.parallel_vars.discard(loop.var)
        for key in hoisted:
            del self.expr.hoisted[key]
        self.in_prange -= prange
        self.current.loops -= 1

    def chunked(self, loop: ir.For, chunks: list[tuple[int, int]], depth: int) -> None:
        """``loop`` as consecutive loops over ``chunks`` (:mod:`.lane_chunks`)."""
        var = self.names(loop.var)
        self.current.loops += 1
        for lo, hi in chunks:
            self.line(depth, f"for {var} in range({lo}, {hi}):")
            self.block(loop.body, depth + 1)
        self.current.loops -= 1

    def rotated(self, rotation, depth: int) -> None:
        """A row reduction in lanes, its loads aligned by turning the lanes
        (:mod:`.lane_rotation`)."""
        skew = ir.Var(rotation.outer.var.name + "_skew", rotation.outer.var.dtype)
        # The address once per call, at the function's top: ``.ctypes`` holds a
        # reference to the array, counted atomically, and per row it cost 8 %.
        array = self.names(rotation.row.buffer)
        address = self.names.fresh(array + "_address")
        self.current.lines.insert(0, f"    {address} = np.intp({array}.ctypes.data)")
        self.line(depth, f"{self.names(skew)} = {skew_text(rotation, self.expr, address)}")
        self.line(depth, f"if {self.names(skew)} == 0:")  # aligned already: as before
        self._loop(rotation.outer, depth + 1, rotate=False)
        self.line(depth, "else:")
        self.expr.bound(skew, as_expr(1), as_expr(lanes_per_vector(rotation) - 1))
        self.stmt(rotated(rotation, skew), depth + 1)

    def fused(self, loop: ir.For, lanes: ir.For, depth: int) -> None:
        """``loop`` and the vectorized loop ``lanes`` that is its body, as one loop
        (:mod:`.collapse`)."""
        self.expr.bound(lanes.var, lanes.min, add(lanes.min, lanes.extent) - 1)
        outer, inner, count = self.names(loop.var), self.names(lanes.var), lanes.extent.value
        flat = self.names.fresh(f"{outer}_{inner}")
        self.line(depth, f"for {flat} in range({self.expr.operand(loop.extent, MUL)} * {count}):")
        start = "" if isinstance(loop.min, ir.IntImm) and loop.min.value == 0 else \
            f"{self.expr.operand(loop.min, ADD)} + "
        self.line(depth + 1, f"{outer} = {start}{flat} // {count}")
        self.line(depth + 1, f"{inner} = {flat} % {count}")
        self.current.loops += 1
        self.block(lanes.body, depth + 1)
        self.current.loops -= 1

    def unrollable(self, loop: ir.For) -> bool:
        return isinstance(loop.extent, ir.IntImm) and loop.extent.value <= MAX_UNROLL

    def part(self, text: str) -> str:
        """A call of a helper ``_pp_part_<k>`` returning ``text``, one piece of a long
        expression: Numba's and LLVM's time grows faster than a function's length."""
        args, params, body = parameterized(text)
        piece = Function("{name}", params, vectorized=self.current.vectorized,
                          boundscheck=self.boundscheck, fastmath=self.fastmath)
        piece.lines.append(f"    return {body}")
        return f"{self.register(piece, 'part')}({', '.join(args)})"

    def register(self, function: Function, kind: str) -> str:
        """The name of helper ``function`` (named ``{name}``): a new one, or its twin's."""
        template = function.text()
        name = self.helper_names.get(template)
        if name is None:  # identical helpers (say, unrolled copies) are one
            name = self.helper_names[template] = f"_pp_{kind}_{len(self.helpers)}"
            self.helpers.append(template.replace("def {name}(", f"def {name}(", 1))
        return name

    def helper(self, stmt: ir.Stmt, depth: int, kind: str) -> None:
        """Emit ``stmt`` as a helper function ``_pp_<kind>_<k>`` and call it here.

        A ``"vector"`` helper is compiled with fast-math; a ``"nest"`` helper
        holds what is nested too deeply for one function.
        """
        buffers, variables = free_inputs(stmt)
        outer, saved = self.current, dict(self.expr.subst)
        args = [self.names(b) for b in buffers] + [self.expr(v) for v in variables]
        params = [self.names(b) for b in buffers] + [self.names(v) for v in variables]
        self.expr.subst.clear()
        helper = self.current = Function("{name}", params,
                                          vectorized=kind == "vector" or outer.vectorized,
                                          boundscheck=self.boundscheck,
                                          serial=outer.serial or self.in_prange > 0,
                                          fastmath=self.fastmath)
        with helper_checks(self.expr, params, args):  # the flag array, where it is used
            self.stmt(stmt, 1)
        self.current = outer
        self.expr.subst.update(saved)
        self.line(depth, f"{self.register(helper, kind)}({', '.join(args)})")


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
