"""How the Numba emitter writes a loop (:mod:`.emit`), by its kind.

- ``PARALLEL`` is ``numba.prange``, and the function holding it gets
  ``parallel=True`` (only then: the parallel pipeline costs compile time).
- ``VECTORIZED`` with loops inside goes below them first
  (:func:`polypad.semantics.vector_lanes.lanes_innermost`: max-pool's
  channels inside its window loops).  It is written in place, as a plain
  loop that LLVM vectorizes
  with the kernel's own facts about the arrays, unless its flags differ from
  the kernel's (``fastmath="full"``: fast-math on vectorized loops only).
  Then it moves into a helper ``_pp_vector_<k>`` (:mod:`.helper_calls`).
- ``UNROLL`` with constant bounds is written out once per iteration with the
  counter replaced by its value (up to :data:`MAX_UNROLL` iterations; longer
  or symbolic ones stay loops).

A buffer element that a loop reduces into, and that does not change in the
loop, is held in a local across it (:mod:`.accumulators`); a row reduction's
lanes may be turned to align its loads (:mod:`.lane_rotation`), a loop and
the vectorized loop that is its body fused (:mod:`.collapse`), a loop over
lanes of differing kinds cut in chunks (:mod:`.lane_chunks`).  Bounds checks
that do not depend on a serial loop go before it (:mod:`.hoist`); a parallel
loop with checks gets a flag array (:mod:`.guards`).  A loop polypad cannot
prove fits its counter's dtype is checked at its entry
(:mod:`codegen.loop_ranges`).
"""

from __future__ import annotations

from functools import partial

from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, ForKind
from polypad.ir.operators import add, as_expr
from polypad.ir.visitor import walk
from polypad.semantics.lowering import has_check
from polypad.semantics.vector_lanes import lanes_innermost

from ..loop_ranges import holds_check
from ..source_text import ADD, ATOM, COMPARE, MUL
from .accumulators import holds_helper, nesting, promotable
from .checks import range_check_lines
from .collapse import collapsible
from .guards import flag_array
from .hoist import hoist_checks
from .lane_chunks import lane_chunks
from .lane_rotation import lane_rotation, lanes_per_vector, rotated, skew_text

#: Longest constant-bound loop that ``T.unroll`` writes out.
MAX_UNROLL = 64
#: Loops nested in one emitted function before the rest goes to a helper.
MAX_NESTED_LOOPS = 16
#: Indentation at which a compound statement goes to a helper.
MAX_INDENT = 48


class LoopWriter:
    """The emitter's loop methods (a mixin of :class:`.emit._Emitter`, whose state
    they use: ``expr``, ``names``, ``current``, ``line``, ``stmt``, ``helper``)."""

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
        # An element whose access checks a view's indices (.guards) stays in memory:
        # the local's load before the loop and store after it would skip the check.
        guard = self.expr.guard
        viewed = set() if guard is None else {
            x.buffer for x in walk(loop.body)
            if isinstance(x, (ir.BufferLoad, ir.BufferStore)) and guard.view_axes(x.view_access)}
        return promotable(loop, self.positive, self.promoted | viewed, helpers, before)

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
        # Checks that need not run at each iteration, before the loop (:mod:`.hoist`);
        # not past an assert, a checked assume or a loop's range check in its body,
        # which the reference executor would raise first.
        hoisted = hoist_checks(loop, self.expr, partial(self.line, depth),
                               not prange and self.positive(loop) and not has_check(loop)
                               and not holds_check(loop, self.range_checks))
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
