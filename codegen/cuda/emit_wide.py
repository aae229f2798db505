"""How :mod:`.emit` writes the runs :mod:`.wide_runs` found: one call of :mod:`.wide`
per run of loads or stores, inside the batch of an unrolled nest (:mod:`.batch`)::

    A_w, A_w_1, A_w_2, A_w_3 = _pp_wide.load4(A, (i, j_0 * 1024 + j_2 * 4))
    _pp_wide.store4(B, (i, j_0 * 1024 + j_2 * 4), A_w * np.float32(2.0) + ..., ...)

A run under a condition (a partial tile) is loaded and stored under lane 0's
condition, which holds at every lane where it holds at lane 0; a load the
condition skips gives zeros, as the batch's scalar loads do.
"""

from __future__ import annotations

from polypad.ir import dtypes
from polypad.ir.nodes import Buffer
from polypad.ir.visitor import walk

from ..source_text import AND
from .batch import MAX_BATCH
from .expr import constant, split_constant
from .module_text import alignment
from .wide_runs import WideRun, multiple_of

#: How a module with wide accesses imports :mod:`.wide`; the version makes a change to
#: its code a change to the module's text (and so to numba-cuda's cache key).
WIDE_IMPORT = "from codegen.cuda import wide as _pp_wide  # wide accesses, version {version}"
#: Bumped with any change to the code :mod:`.wide` generates.
WIDE_VERSION = 1


class WideAccesses:
    """The part of a kernel's writer (:class:`codegen.cuda.emit._Kernel`) that writes
    wide accesses; it reads the writer's ``expr``, ``names``, ``line`` and
    ``arguments`` and fills its ``wide`` (the bytes each argument must start on)."""

    def aligned(self, buffer: Buffer, nbytes: int) -> bool:
        """Whether ``buffer`` starts on a multiple of ``nbytes``: an argument, which the
        call checks (:mod:`.runtime`), or a shared buffer aligned so (``set_alignment``)."""
        if any(buffer is b for b in self.arguments):
            return True
        align = alignment(buffer)  # sch.set_alignment
        return buffer.scope == "shared" and bool(align) and align % nbytes == 0

    def wide_index(self, buffer: Buffer, indices) -> str:
        """``(i, j)``: the indices of a wide access, as the tuple :mod:`.wide` takes."""
        texts = [self.expr(self.expr.fold(i)) for i in indices]
        return f"({', '.join(texts)}{',' if len(texts) == 1 else ''})"

    def note_wide(self, buffer: Buffer, nbytes: int) -> None:
        """Record a wide access of ``nbytes`` to ``buffer``: the module imports
        :mod:`.wide`, and an argument must start on a multiple of ``nbytes``."""
        self.uses_wide = True
        if any(buffer is b for b in self.arguments):
            self.wide[buffer] = max(self.wide.get(buffer, 0), nbytes)

    def wide_loads(self, found, run: WideRun, registers: dict, saved: dict,
                   depth: int) -> None:
        """The loads of ``run`` that go wide, one call of :mod:`.wide` each, their lanes'
        registers put in ``registers`` (where the batch finds them, unguarded)."""
        constants, store = found.copies[run.first]
        guards = self.lane_guards(found, run, saved)
        for part in (*store.indices, store.value):
            for x in walk(part):
                if id(x) not in run.loads:
                    continue
                keys = []
                for lane in range(run.lanes):
                    self.expr.constants = {**saved, **found.copies[run.first + lane][0]}
                    keys.append((guards[lane], self.expr.load(x.buffer, x.indices, x)))
                if any(key in registers for key in keys) or \
                        len(registers) + run.lanes > MAX_BATCH:
                    continue  # already loaded (two reads of one run), or out of registers
                self.expr.constants = {**saved, **constants}
                names = [self.names.fresh(f"{self.names(x.buffer)}_w") for _ in keys]
                call = (f"{', '.join(names)} = _pp_wide.load{run.lanes}("
                        f"{self.names(x.buffer)}, {self.wide_index(x.buffer, x.indices)})")
                if guards[0]:  # the run's loads only where the program reads them
                    zero = constant(0, x.buffer.dtype)[0]
                    self.line(depth, f"if {guards[0]}:")
                    self.line(depth + 1, call)
                    self.line(depth, "else:")
                    self.line(depth + 1, f"{', '.join(names)} = {', '.join([zero] * len(names))}")
                else:
                    self.line(depth, call)
                registers.update(dict(zip(keys, names)))
                self.note_wide(x.buffer, run.lanes * dtypes.bits(x.buffer.dtype) // 8)
        self.expr.constants = saved

    def merged_runs(self, lines: list[str], scalar: dict, depth: int) -> list[str]:
        """The batch's load ``lines`` with the loads of consecutive elements of a shared
        buffer the schedule aligned (``set_alignment``) moved together and, where a run
        of 4 (2) starts on a multiple of 4 (2) elements (:func:`.wide_runs.multiple_of`),
        made one wide load.  ``scalar[k]`` is ``(buffer, indices at the counters'
        values, guard, register)`` of line ``k`` where it is one scalar load.

        The batch loads an SGEMM step's fragments in the order the multiply-adds first
        use them: a thread's first value of ``A``, then ``B``'s, then ``A``'s others.
        NVVM merges loads of consecutive floats only where it proves them aligned, which
        it did for every run but the first of each tile (``vector=4``: two single loads
        and a pair there, however the lines were ordered).  The loads are of memory no
        copy writes, each under its own condition, so their order is free.  Other
        lines (wide loads of vectorized loops, loads of other buffers) keep their places:
        a batch without aligned shared buffers is written as before.
        """
        keys = {}
        for k, (buffer, indices, guard, _) in scalar.items():
            if buffer.scope == "shared" and dict(buffer.tvm_attrs).get("align") and indices:
                *head, last = indices
                offset, rest = split_constant(last)
                keys[k] = ((guard, id(buffer), tuple(self.expr(i) for i in head),
                            self.expr(rest) if rest is not None else ""), offset)
        where: dict[tuple, dict[int, int]] = {}
        for k, (shared, offset) in keys.items():
            where.setdefault(shared, {}).setdefault(offset, k)
        out, placed = [], set()
        for k, line in enumerate(lines):
            if k in placed:
                continue
            if k not in keys:
                out.append(line)
                placed.add(k)
                continue
            shared, offset = keys[k]
            run = [k]  # the lines of elements offset, offset + 1, ... in the batch
            while (where[shared].get(offset + len(run), -1) > k
                   and where[shared][offset + len(run)] not in placed):
                run.append(where[shared][offset + len(run)])
            placed.update(run)
            start = 0
            while start < len(run):
                lanes = self.run_lanes(scalar[run[start]], len(run) - start)
                if lanes == 1:
                    out.append(lines[run[start]])
                else:
                    out.extend(self.wide_load_lines([scalar[m] for m in run[start:start + lanes]],
                                                    depth))
                start += lanes
        return out

    def run_lanes(self, load: tuple, left: int) -> int:
        """4 or 2 where the run from ``load`` (of ``left`` consecutive elements) may be
        one wide load, else 1."""
        buffer, indices, _, _ = load
        bits = dtypes.bits(buffer.dtype)
        for lanes in (4, 2):
            nbytes = lanes * bits // 8
            if left >= lanes and bits in (32, 64) and nbytes in (8, 16) \
                    and self.aligned(buffer, nbytes) and multiple_of(buffer, indices, lanes):
                return lanes
        return 1

    def wide_load_lines(self, loads: list[tuple], depth: int) -> list[str]:
        """One wide load of the consecutive scalar ``loads`` into their registers."""
        buffer, indices, guard, _ = loads[0]
        names = ", ".join(name for _, _, _, name in loads)
        call = (f"{names} = _pp_wide.load{len(loads)}({self.names(buffer)}, "
                f"{self.wide_index(buffer, indices)})")
        self.note_wide(buffer, len(loads) * dtypes.bits(buffer.dtype) // 8)
        pad = "    " * depth
        if not guard:
            return [pad + call]
        zero = constant(0, buffer.dtype)[0]
        return [f"{pad}if {guard}:", f"{pad}    {call}", f"{pad}else:",
                f"{pad}    {names} = {', '.join([zero] * len(loads))}"]

    def lane_guards(self, found, run: WideRun, saved: dict) -> list[str]:
        """The text of each lane's conditions in ``run`` (the same values at every lane,
        :mod:`.wide_runs`; the text as the batch prints it, which keys its registers)."""
        out = []
        for lane in range(run.lanes):
            self.expr.constants = {**saved, **found.copies[run.first + lane][0]}
            out.append(" and ".join(self.expr.operand(g, AND)
                                    for g in found.guards[run.first + lane]))
        self.expr.constants = saved
        return out

    def wide_store(self, found, run: WideRun, per_copy: list, saved: dict,
                   depth: int) -> None:
        """The ``run.lanes`` stores of ``run`` as one call of :mod:`.wide`, each lane's
        value computed from the registers its copy found."""
        constants, store = found.copies[run.first]
        guard = self.lane_guards(found, run, saved)[0]
        values = []
        for lane in range(run.lanes):
            self.expr.constants = {**saved, **found.copies[run.first + lane][0]}
            self.expr.moved = per_copy[run.first + lane][1]
            values.append(self.expr(store.value))
        self.expr.constants = {**saved, **constants}
        self.expr.moved = {}
        if guard:
            self.line(depth, f"if {guard}:")
            depth += 1
        self.line(depth, f"_pp_wide.store{run.lanes}({self.names(store.buffer)}, "
                         f"{self.wide_index(store.buffer, store.indices)}, {', '.join(values)})")
        self.note_wide(store.buffer, run.lanes * dtypes.bits(store.buffer.dtype) // 8)
